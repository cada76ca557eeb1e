/**
 * The eval tier `foresight-eval:<key>` (tier 3): one thin layer on an env image with the
 * repository at /testbed, checked out at a chain's base commit, whose git store holds nothing an agent
 * could read the future from: no object unreachable from the base commit, no ref, tag, remote, reflog,
 * FETCH_HEAD/ORIG_HEAD or stray pack (the history up to the base, or a depth-1 store). The runner's
 * in-container files are baked at /foresight, so an eval needs no bind mount and no network.
 *
 * How the store is made without the future: in a no-network root container of the env image, with the
 * clone's git dir read-only at /src, `git init /testbed` fetches the base commit by id from file:///src
 * (protocol v2 takes any object as a want), so the pack the local upload-pack sends holds exactly the
 * objects reachable from it; HEAD is detached there, reflogs are expired, `git gc --prune=now` keeps one
 * pack, and the build fails unless `git for-each-ref` is empty, `git rev-list --all` is the base's
 * history, `git fsck --unreachable --no-reflogs` prints nothing, the commit count is the clone's (or 1
 * for depth1) and the work tree is clean. /testbed then belongs to uid 65534 (the eval user).
 *
 * Grading in the image (container/grade.ts) leaves /testbed as built: each run checks the base commit out
 * in /tmp/testbed with /testbed's objects borrowed, lays the agent's patch and the grading bundle over it,
 * and runs the runner's run_state.sh in place there (`.` as the checkout: nothing is cloned or reset).
 */
import { EVAL_HISTORIES, type EvalHistory } from '../../foundation/settings.ts';
import { createHash } from 'node:crypto';
import { readdir, readFile, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type Docker from 'dockerode';
import { ForesightError } from '../../foundation/errors.ts';
import { fingerprint } from '../../foundation/fingerprint.ts';
import { absoluteGitDir, missingObjects } from '../../foundation/git.ts';
import { resolveRunnerDir } from '../container/chain-env.ts';
import { forceRemove, ownerLabels, removeOnAbort } from '../container/cleanup.ts';
import { makeTar, type TarFile } from '../container/tar.ts';
import { assertDockerReachable } from '../daemon.ts';
import type { Runner } from '../runners/types.ts';
import { CLEAR_OWNER_LABELS, lastLines, openBuildLog, runBuildStep } from './build.ts';
import { touchImage } from './cache.ts';
import { dockerError, inspectImage, logLine, splitRef, type BuildLog } from './docker-image.ts';
import { formatDuration } from '../../foundation/progress.ts';
import { withLock } from './lock.ts';
import { BUILD_SCRIPT } from './eval-build-script.ts';

export const EVAL_REPOSITORY = 'foresight-eval';
/** Where the repository is in an eval image (the dataset's `repo_path`). */
export const EVAL_REPO_PATH = '/testbed';
/** Where the runner's in-container files are baked: the grading primitive is `/foresight/<runner.script>`. */
export const EVAL_RUNNER_PATH = '/foresight';
/** The uid (and gid) that owns /testbed: eval containers run as nobody, like validate's. */
export const EVAL_UID = 65534;

export const EVAL_KEY_LABEL = 'foresight.eval.key';
export const EVAL_COMMIT_LABEL = 'foresight.eval.commit';
export const EVAL_HISTORY_LABEL = 'foresight.eval.history';
export const EVAL_ENV_LABEL = 'foresight.eval.env';
export const EVAL_CREATED_LABEL = 'foresight.eval.created';
export const TIER_LABEL = 'foresight.tier';

/** Bump when what the build does changes in a way the key's other inputs do not show. */
export const EVAL_RECIPE_VERSION = 'foresight-eval/1';
/** Default limit of one eval build. */
export const DEFAULT_EVAL_BUILD_TIMEOUT_SEC = 600;

export { EVAL_HISTORIES, type EvalHistory };

export interface EvalImageOptions {
  docker: Docker;
  /** The clone (work tree or git dir) whose git dir is mounted read-only at /src during the build. */
  clone: string;
  /** The tier-2 env image to build on (`foresight-env:<key>`); it must exist. */
  envImage: string;
  /** 40-hex sha: /testbed is checked out there and holds nothing after it. */
  baseCommit: string;
  /** Its in-container files (the folder its `dir` names, without the host-side *.ts) are baked at /foresight. */
  runner: Runner;
  /** 'full' (default): the history up to baseCommit; 'depth1': a shallow store of baseCommit alone. */
  history?: EvalHistory;
  /** The run's signal: an abort removes the build container at once and throws its reason. */
  signal?: AbortSignal;
  /** Progress lines. */
  log?: BuildLog;
  /** Directory of the build logs (default <tmpdir>/foresight-env-logs, beside the env builds'). */
  logDir?: string;
  /** Where build lock files live (config images.lockDir; default <tmpdir>/foresight-locks). */
  lockDir?: string | null;
  /** Limit of the build (default 600 s): past it the build fails. */
  timeoutSec?: number;
  /**
   * The test runs' environment (the recipe's `env`, e.g. PYTEST_ADDOPTS), baked into the image's ENV so that
   * every grading of the row (emit's gold check, `foresight eval`, anyone's harness) runs as validation did.
   */
  testEnv?: Readonly<Record<string, string>>;
}

export type EvalImageResult =
  | {
      kind: 'ready';
      /** `foresight-eval:<key>`. */
      image: string;
      key: string;
      /** True only for the call that built it. */
      built: boolean;
      /** The store it holds: `depth1` also when `full` was asked for but the clone lacks old objects. */
      history: EvalHistory;
      /** Size of the image minus the env image's (docker inspect Size): the thin layer. */
      addedBytes: number;
      durationMs: number;
      /** Build log path (null when reused and its log is not in logDir). */
      log: string | null;
    }
  | {
      kind: 'failed';
      /** `clone_incomplete`: the clone lacks objects of the base commit's own tree (nothing was built). */
      reason: 'build_failed' | 'clone_incomplete';
      image: string;
      key: string;
      /** The last lines of the failing step's output. */
      detail: string;
      log: string;
      durationMs: number;
    };

const SHA = /^[0-9a-f]{40}$/;


/**
 * The runner's folder as a tar of `foresight/...` (what putArchive extracts at /), without the host-side
 * modules (parsers, registry; .ts from the sources, .js from dist/): only what runs in the container is baked, so a parser fix does not
 * rebuild every eval image. Owned by root, files 0644 or 0755 as on the host; the same files give the
 * same bytes (the tar's digest is part of the image key).
 */
/**
 * Host-side modules: the TypeScript sources, or their compiled JavaScript (`.js`) when running from dist/.
 * `.cjs`/`.mjs` files are the container's (mocha's reporter): tsc makes them only from `.cts`/`.mts`, which
 * the project has none of.
 */
const HOST_MODULE = /\.(ts|js|map)$/;

async function runnerTar(dir: string): Promise<{ tar: Buffer; files: string[]; digest: string }> {
  const entries: TarFile[] = [];
  const walk = async (rel: string): Promise<void> => {
    const list = (await readdir(path.join(dir, rel), { withFileTypes: true })).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const e of list) {
      const r = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) await walk(r);
      else if (e.isFile() && !HOST_MODULE.test(e.name)) {
        const [content, st] = await Promise.all([readFile(path.join(dir, r)), stat(path.join(dir, r))]);
        entries.push({ path: `${EVAL_RUNNER_PATH.slice(1)}/${r}`, content, mode: st.mode & 0o111 ? 0o755 : 0o644 });
      }
    }
  };
  await walk('');
  const files = entries.map((f) => f.path.slice(EVAL_RUNNER_PATH.length));
  // The key hashes what the files are (path, mode, content), not the tar writer's bytes, which a library update may format differently.
  const digest = fingerprint(entries.map((f) => [f.path, f.mode, createHash('sha256').update(f.content).digest('hex')]));
  return { tar: await makeTar(entries, { uid: 0, gid: 0 }), files, digest };
}

function checkOptions(opts: EvalImageOptions): EvalHistory {
  if (!SHA.test(opts.baseCommit)) {
    throw new ForesightError(`ensureEvalImage: baseCommit must be a 40-hex sha, got ${JSON.stringify(opts.baseCommit)}`, {
      remedy: 'resolve the commit first (git rev-parse)',
    });
  }
  const history = opts.history ?? 'full';
  if (!EVAL_HISTORIES.includes(history)) {
    throw new ForesightError(`ensureEvalImage: unknown history mode ${JSON.stringify(history)}`, { remedy: `use one of: ${EVAL_HISTORIES.join(', ')}` });
  }
  return history;
}

/** The eval image's tag for a key. */
export function evalImageTag(key: string): string {
  return `${EVAL_REPOSITORY}:${key}`;
}

/**
 * The eval image of `baseCommit` on `envImage`: reused when its tag exists (re-tagged to mark its use),
 * else built once per key (a lock file per key across processes). A build that fails resolves to
 * `{ kind: 'failed', detail, log }`; Docker being unreachable or failing, a missing env image or an
 * invalid option throws a ForesightError.
 */
export async function ensureEvalImage(opts: EvalImageOptions): Promise<EvalImageResult> {
  const t0 = Date.now();
  const requested = checkOptions(opts);
  const { docker } = opts;
  await assertDockerReachable(docker);
  const env = await inspectImage(docker, opts.envImage);
  if (!env) {
    throw new ForesightError(`env image ${opts.envImage} is not present`, { remedy: 'build it first (envImageFor / EnvImages.envImageFor)', external: true });
  }
  const runnerDir = await resolveRunnerDir(opts.runner);
  const { tar, files, digest: tarDigest } = await runnerTar(runnerDir);
  const testEnv = Object.entries(opts.testEnv ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const keyOf = (h: EvalHistory): string => fingerprint(EVAL_RECIPE_VERSION, env.Id, opts.baseCommit, h, tarDigest, BUILD_SCRIPT, ...(testEnv.length ? [testEnv] : [])).slice(0, 24);
  let history = requested;
  if (history === 'full' && !(await inspectImage(docker, evalImageTag(keyOf('full'))))) {
    // A clone made from a partial clone can lack old blobs: the in-container fetch would fail on them.
    const missing = await missingObjects(opts.clone, opts.baseCommit, 'history');
    if (missing.length) {
      logLine(opts.log, `the clone lacks ${missing.length} object(s) of the history up to ${opts.baseCommit.slice(0, 12)} (e.g. ${missing[0]}): its eval image holds the base commit alone (depth1)`);
      history = 'depth1';
    }
  }
  const key = keyOf(history);
  const image = evalImageTag(key);
  const logPath = path.join(opts.logDir ?? path.join(tmpdir(), 'foresight-env-logs'), `${EVAL_REPOSITORY}-${key}.log`);

  const ready = async (built: boolean): Promise<EvalImageResult> => {
    const info = await inspectImage(docker, image);
    if (!info) throw new ForesightError(`${image} vanished right after it was made`, { remedy: 'check `docker images` and the daemon log', external: true });
    const log = (await stat(logPath).catch(() => null)) ? logPath : null;
    return { kind: 'ready', image, key, built, history, addedBytes: info.Size - env.Size, durationMs: Date.now() - t0, log };
  };
  const reused = async (): Promise<EvalImageResult> => {
    await touchImage(image, docker);
    return ready(false);
  };

  if (await inspectImage(docker, image)) return reused();
  if (history === 'depth1') {
    const missing = await missingObjects(opts.clone, opts.baseCommit, 'tree');
    if (missing.length) {
      const detail = `the clone lacks ${missing.length} object(s) of ${opts.baseCommit}'s own tree (e.g. ${missing[0]}): fetch them into the clone (git fetch --refetch from a complete copy)`;
      logLine(opts.log, `${image}: ${detail}`);
      return { kind: 'failed', reason: 'clone_incomplete', image, key, detail, log: logPath, durationMs: Date.now() - t0 };
    }
  }
  const timeoutSec = opts.timeoutSec ?? DEFAULT_EVAL_BUILD_TIMEOUT_SEC;
  return withLock(
    opts.lockDir,
    `eval-${key}`,
    (timeoutSec + 120) * 1000,
    async () => {
      // Another process may have built it while we waited for the lock.
      if (await inspectImage(docker, image)) return reused();
      const res = await buildEvalImage({ ...opts, history, envId: env.Id, key, image, logPath, tar, files, t0, timeoutSec });
      return res ?? ready(true);
    },
    (ms) => logLine(opts.log, `waiting ${formatDuration(ms)} for another process building ${image}`),
  );
}

interface BuildInput extends EvalImageOptions {
  history: EvalHistory;
  envId: string;
  key: string;
  image: string;
  logPath: string;
  tar: Buffer;
  files: string[];
  t0: number;
  timeoutSec: number;
}

/** Builds and commits the image; resolves to null when it is committed, to the failure otherwise. */
async function buildEvalImage(b: BuildInput): Promise<EvalImageResult | null> {
  const { docker, signal } = b;
  const deadline = b.t0 + b.timeoutSec * 1000;
  const gitDir = await absoluteGitDir(b.clone);
  const append = await openBuildLog(b.logPath, [
    `# ${b.image}`,
    `# env ${b.envImage} (${b.envId})`,
    `# base commit ${b.baseCommit}, history ${b.history}`,
    `# runner ${b.runner.name}: ${b.files.join(' ')} baked at ${EVAL_RUNNER_PATH}`,
    `# started ${new Date().toISOString()}`,
    '',
  ]);
  logLine(b.log, `building ${b.image} at ${b.baseCommit.slice(0, 12)} (${b.history}) on ${b.envImage} (log: ${b.logPath})`);
  const fail = async (detail: string): Promise<EvalImageResult> => {
    await append(`\n# FAILED after ${Math.round((Date.now() - b.t0) / 1000)} s\n`);
    logLine(b.log, `${b.image}: build failed (see ${b.logPath})`);
    return { kind: 'failed', reason: 'build_failed', image: b.image, key: b.key, detail, log: b.logPath, durationMs: Date.now() - b.t0 };
  };

  signal?.throwIfAborted();
  let container: Docker.Container;
  try {
    container = await docker.createContainer({
      Image: b.envImage,
      Cmd: ['sleep', 'infinity'],
      User: '0:0',
      WorkingDir: '/',
      Labels: {
        ...ownerLabels(),
        [EVAL_KEY_LABEL]: b.key,
        [EVAL_COMMIT_LABEL]: b.baseCommit,
        [EVAL_HISTORY_LABEL]: b.history,
        [EVAL_ENV_LABEL]: b.envImage,
        [EVAL_CREATED_LABEL]: new Date().toISOString(),
        [TIER_LABEL]: '3',
      },
      NetworkDisabled: true,
      HostConfig: {
        NetworkMode: 'none',
        Binds: [`${gitDir}:/src:ro`],
        SecurityOpt: ['no-new-privileges'],
        Init: true,
      },
    });
  } catch (err) {
    throw dockerError(`cannot create the eval build container from ${b.envImage}`, err);
  }
  const dispose = removeOnAbort(docker, container.id, signal);
  try {
    try {
      signal?.throwIfAborted();
      await container.start();
      await container.putArchive(b.tar, { path: '/' });
    } catch (err) {
      if (signal?.aborted) throw signal.reason;
      throw dockerError('cannot start the eval build container and bake the runner files into it', err);
    }
    await append(`# runner files baked at ${EVAL_RUNNER_PATH}\n`);
    const env = [`FORESIGHT_BASE_COMMIT=${b.baseCommit}`, `FORESIGHT_HISTORY=${b.history}`, `FORESIGHT_RUNNER_SCRIPT=${b.runner.script}`];
    const res = await runBuildStep(container, BUILD_SCRIPT, env, deadline, append, 'docker exec in the eval build container failed', undefined, { log: b.log, what: b.image });
    signal?.throwIfAborted();
    if (res.timedOut) return await fail(`timed out after ${b.timeoutSec} s\n${lastLines(res.text)}`);
    if (res.exitCode !== 0) return await fail(lastLines(res.text) || `the build script exited with ${res.exitCode}`);

    const { repo, tag } = splitRef(b.image);
    try {
      await container.commit({
        repo,
        tag,
        comment: `foresight eval image at ${b.baseCommit} (${b.history}) on ${b.envImage}`,
        // Dockerfile syntax: a double-quoted value keeps spaces and quotes; `$` is escaped, or ENV would expand it.
        changes: [`WORKDIR ${EVAL_REPO_PATH}`, CLEAR_OWNER_LABELS, ...Object.entries(b.testEnv ?? {}).map(([k, v]) => `ENV ${k}=${JSON.stringify(v).replace(/\$/g, '\\$')}`)],
      });
    } catch (err) {
      throw dockerError(`cannot commit ${b.image}`, err);
    }
    await append(`\n# committed ${b.image} after ${Math.round((Date.now() - b.t0) / 1000)} s\n`);
    logLine(b.log, `built ${b.image} in ${Math.round((Date.now() - b.t0) / 1000)} s`);
    return null;
  } finally {
    dispose();
    await forceRemove(docker, container.id).catch(() => undefined);
  }
}
