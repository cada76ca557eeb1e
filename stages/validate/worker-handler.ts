/**
 * How a `foresight worker` runs `validate.chain` jobs: on its own clone, with one ChainWork per repository and configuration.
 *
 * The worker clones on first use into `<its data>/<owner>__<name>/clone` (and fetches when a chain's commits
 * are missing), builds or reuses env images on its own Docker, keeps its warm containers across jobs, and
 * keeps its env images within the keep count after every job. It is registered with the worker's own
 * configuration and credentials, never a job's.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, rename, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { repoDataDir } from '../../core/foundation/artifacts.ts';
import type { Config, Secrets } from '../../core/foundation/config.ts';
import { applyCachePolicy, assertDockerReachable, connectDocker, ensureImage, packageSources, removeStaleContainers } from '../../core/env/index.ts';
import { errorMessage } from '../../core/foundation/errors.ts';
import { fingerprint } from '../../core/foundation/fingerprint.ts';
import { forwardingNotes } from '../../core/foundation/log.ts';
import { InfraError, type JobContext, type JobHandler } from '../../core/queue/index.ts';
import { sourceSettings } from '../../core/sources/registry.ts';
import { infra, validateChainKind, type ChainJob, type ChainJobResult } from './queue-job.ts';
import { ChainWork } from './validate-and-attribute.ts';

const run = promisify(execFile);

/** Where a worker keeps its own clone of `repo` under its data folder. */
export function workerClonePath(dataDir: string, repo: string): string {
  return join(repoDataDir(dataDir, repo), 'clone');
}

/** The worker's own clone (full history, no checkout), made on first use and fetched when a chain's commits are missing. */
async function workerClone(dataDir: string, job: ChainJob, log: JobContext['log']): Promise<string> {
  const path = workerClonePath(dataDir, job.repo);
  const from = existsSync(job.source.path) ? job.source.path : job.source.url;
  if (!from) throw new InfraError(`${job.repo}: no clone at ${job.source.path} on this host, and an offline run names no URL`, { remedy: `copy the clone to ${job.source.path} on every worker host, or run the coordinator without --offline` });
  try {
    if (!existsSync(path)) {
      log.info(`cloning ${from} into ${path}`);
      await mkdir(dirname(path), { recursive: true });
      // Cloned aside and renamed: a worker killed halfway leaves no half clone.
      const partial = `${path}.incomplete`;
      await rm(partial, { recursive: true, force: true });
      await run('git', ['clone', '--no-checkout', '--quiet', from, partial]);
      await rename(partial, path);
    }
    return path;
  } catch (err) {
    throw new InfraError(`${job.repo}: could not clone ${from}: ${errorMessage(err).split('\n')[0]}`, { remedy: 'check that the worker can read the coordinator\'s clone path or URL', cause: err });
  }
}

async function hasCommits(clone: string, commits: readonly string[]): Promise<boolean> {
  try {
    for (const c of commits) await run('git', ['-C', clone, 'cat-file', '-e', `${c}^{commit}`]);
    return true;
  } catch {
    return false;
  }
}

/** The worker's side: `foresight worker` registers it with its own configuration (Docker, images) and credentials. */
export function validateChainHandler(local: { config: Config; secrets: Secrets }): JobHandler<ChainJob, ChainJobResult> {
  return {
    kind: validateChainKind,
    async run(job, ctx) {
      // One ChainWork per repository and configuration in this process: its images and warm containers serve the next chains.
      const work = await ctx.shared(
        `validate.chain:${job.repo}:${fingerprint(job.config)}`,
        async () => {
          const clone = await workerClone(ctx.dataDir, job, ctx.log);
          const docker = connectDocker(local.config.docker.host);
          await infra(() => assertDockerReachable(docker));
          const stale = await removeStaleContainers(docker);
          if (stale.length) ctx.log.info(`removed ${stale.length} container(s) left by a killed run`);
          const images = local.config.images;
          if (job.config.validate.image) await infra(() => ensureImage(job.config.validate.image!, { docker, log: ctx.log, baseAlias: images.baseAlias, lockDir: images.lockDir }));
          const settings = sourceSettings({ ...local.config, sources: job.config.sources }, local.secrets);
          return ChainWork.open({
            repo: { name: job.repo, clone }, repoDir: repoDataDir(ctx.dataDir, job.repo), validate: job.config.validate, discover: job.config.discover,
            sourceSettings: settings, images, packages: packageSources(local.config, local.secrets), docker, log: ctx.log, poolSize: local.config.queue.concurrency,
          });
        },
        (w) => w.close(),
      );
      const { chain } = job;
      const commits = [chain.pr1_base, chain.pr1_head, chain.pr2_base, chain.pr2_head];
      const clone = workerClonePath(ctx.dataDir, job.repo);
      if (!(await hasCommits(clone, commits))) {
        const from = existsSync(job.source.path) ? job.source.path : job.source.url;
        ctx.log.child({ instance_id: chain.instance_id }).info(`fetching new commits from ${from}`);
        await run('git', ['-C', clone, 'fetch', '--quiet', '--update-head-ok', from ?? 'origin', '+refs/heads/*:refs/heads/*']).catch((err: unknown) => {
          throw new InfraError(`${job.repo}: could not fetch ${from ?? 'origin'}: ${errorMessage(err).split('\n')[0]}`, { remedy: "check that the worker can read the coordinator's clone path or URL", cause: err });
        });
      }
      // What the chain is doing (state, run, probe) reaches the coordinator's terminal as this job's progress.
      const log = forwardingNotes(ctx.log, (note) => void ctx.progress({ done: 0, total: 0, ...(note === null ? {} : { note }) }).catch(() => undefined));
      const outcome = await infra(() => work.run(chain, ctx.signal, { log }));
      // A worker has no end of run: it keeps its host's env images within the keep count after every job
      // (images a container uses, e.g. another job's, are left alone by Docker itself).
      const images = local.config.images;
      if (images.cache === 'env') {
        const removed = await applyCachePolicy('env', { used: [], keep: images.envKeep, docker: connectDocker(local.config.docker.host) }).catch((err: unknown) => {
          ctx.log.warn(`pruning env images: ${errorMessage(err)}`);
          return [];
        });
        if (removed.length) ctx.log.info(`pruned ${removed.length} least recently used env image(s) beyond the ${images.envKeep} kept`);
      }
      return outcome;
    },
  };
}
