/**
 * Building one env image: the build container from the base, the apt step (network, then cut
 * off), the install step (offline), `docker commit` (see core/env/README.md).
 */
import { appendFile, mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type Docker from 'dockerode';
import { absoluteGitDir } from '../../git.ts';
import { redact } from '../../secrets.ts';
import { buildFields } from '../recipes/schema.ts';
import { BASE_PYTHON, type BaseImage } from './base.ts';
import { aptScript, installScript, VENV, VENV_PYTHON } from './build-scripts.ts';
import { forceRemove, ownerLabels, PID_LABEL, HOST_LABEL, RUN_LABEL, removeOnAbort } from '../container/cleanup.ts';
import type { EnvCommon, EnvImageRequest, EnvImageResult } from './types.ts';
import { BASE_LABEL, COMMIT_LABEL, CREATED_LABEL, KEY_LABEL, REPO_LABEL } from './key.ts';
import { runExec } from '../container/exec.ts';
import { dockerError, logLine, splitRef } from './docker-image.ts';
import type { PipSources } from './pip-sources.ts';
import { releaseOf } from './release.ts';

const IMAGE_PATH = `${VENV}/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin`;

/** Default limit of one env build (all steps). */
export const DEFAULT_BUILD_TIMEOUT_SEC = 1800;

const DETAIL_LINES = 25;
const DETAIL_CHARS = 3000;

/** The last non-empty lines of a step's output (at most DETAIL_LINES, DETAIL_CHARS): a failure's detail. */
export function lastLines(text: string): string {
  const lines = text.split('\n').map((l) => l.trimEnd()).filter((l) => l.trim() !== '');
  const tail = lines.slice(-DETAIL_LINES).join('\n');
  return tail.length > DETAIL_CHARS ? tail.slice(-DETAIL_CHARS) : tail;
}

/** Appends text to a build log, redacted. */
export type AppendLog = (text: string) => Promise<void>;

/** Start a build log at `logPath` with its header; what is appended later is redacted too. */
export async function openBuildLog(logPath: string, header: readonly string[]): Promise<AppendLog> {
  await mkdir(path.dirname(logPath), { recursive: true });
  await writeFile(logPath, redact(header.join('\n')));
  // Build logs leave the process: no credential (a pip index URL's, say) may reach them.
  return (text) => appendFile(logPath, redact(text.endsWith('\n') ? text : `${text}\n`));
}

export interface BuildStep {
  exitCode: number | null;
  text: string;
  timedOut: boolean;
}

/**
 * One build step: `sh -c script` (with `env` set) in a build container, its output appended to the log.
 * Past `deadline` (epoch ms) the container is killed and the step is `timedOut`. A Docker failure throws
 * a ForesightError naming `what`.
 */
export async function runBuildStep(
  container: Docker.Container,
  script: string,
  env: readonly string[],
  deadline: number,
  append: AppendLog,
  what: string,
): Promise<BuildStep> {
  const left = deadline - Date.now();
  if (left <= 0) return { exitCode: null, text: '', timedOut: true };
  try {
    const res = await runExec(container, ['env', ...env, 'sh', '-c', script], {
      capture: 'combined',
      maxChars: 4 * 1024 * 1024,
      deadlineMs: left,
      onDeadline: async () => {
        await container.kill().catch(() => undefined);
      },
    });
    await append(res.text);
    return { exitCode: res.exitCode, text: res.text, timedOut: res.deadlineHit };
  } catch (err) {
    throw dockerError(what, err);
  }
}

/** A `docker commit` change: the build container's owner labels must not mark containers of the image as stale. */
export const CLEAR_OWNER_LABELS = `LABEL ${RUN_LABEL}="" ${PID_LABEL}="" ${HOST_LABEL}=""`;

export async function buildEnv(
  docker: Docker,
  req: EnvImageRequest,
  base: BaseImage,
  common: Omit<EnvCommon, 'durationMs'>,
  logPath: string,
  t0: number,
  pipSourcesOf: () => Promise<PipSources>,
): Promise<EnvImageResult> {
  const timeoutSec = req.timeoutSec ?? DEFAULT_BUILD_TIMEOUT_SEC;
  const deadline = t0 + timeoutSec * 1000;
  const gitDir = await absoluteGitDir(req.gitDir ?? req.clone);
  const pip: PipSources = await pipSourcesOf();
  const apt = aptScript(req.recipe);
  const install = installScript(req.recipe);
  const header = [
    `# ${common.image}`,
    `# repo ${req.repo} commit ${req.commit}`,
    `# base ${base.image} (${base.id})`,
    `# recipe ${JSON.stringify(buildFields(req.recipe))}`,
    `# dependency files ${common.dependencyFiles.map((f) => `${f.path}@${f.blob.slice(0, 12)}`).join(' ') || '(none)'}`,
    ...pip.notes.map((n) => `# ${n}`),
    `# python ${req.recipe.python === 'auto' ? BASE_PYTHON : req.recipe.python} (Debian ${releaseOf(req.recipe.python)})`,
    `# started ${new Date().toISOString()}`,
    '',
  ];
  const append = await openBuildLog(logPath, header);
  logLine(req.log, `building ${common.image} for ${req.repo}@${req.commit.slice(0, 12)} (log: ${logPath})`);

  const fail = async (detail: string): Promise<EnvImageResult> => {
    await append(`\n# FAILED after ${Math.round((Date.now() - t0) / 1000)} s\n`);
    logLine(req.log, `${common.image}: install failed (see ${logPath})`);
    return { ok: false, reason: 'env_install_failed', built: false, log: logPath, detail, ...common, durationMs: Date.now() - t0 };
  };

  let container: Docker.Container;
  try {
    container = await docker.createContainer({
      Image: base.image,
      Cmd: ['sleep', 'infinity'],
      User: '0:0',
      WorkingDir: '/',
      Labels: {
        ...ownerLabels(),
        [KEY_LABEL]: common.key,
        [REPO_LABEL]: req.repo,
        [COMMIT_LABEL]: req.commit,
        [BASE_LABEL]: base.image,
        [CREATED_LABEL]: new Date().toISOString(),
      },
      NetworkDisabled: apt === null,
      HostConfig: {
        NetworkMode: apt === null ? 'none' : 'bridge',
        Binds: [`${gitDir}:/src:ro`, ...pip.binds],
        SecurityOpt: ['no-new-privileges'],
        Init: true,
      },
    });
  } catch (err) {
    throw dockerError(`cannot create the env build container from ${base.image}`, err);
  }
  const dispose = removeOnAbort(docker, container.id, req.signal);
  try {
    try {
      req.signal?.throwIfAborted();
      await container.start();
    } catch (err) {
      throw dockerError('cannot start the env build container', err);
    }
    const exec = (script: string, env: string[]): Promise<BuildStep> =>
      runBuildStep(container, script, env, deadline, append, 'docker exec in the env build container failed');

    if (apt !== null) {
      const res = await exec(apt, []);
      if (res.timedOut) return await fail(`timed out after ${timeoutSec} s during apt-get\n${lastLines(res.text)}`);
      if (res.exitCode !== 0) {
        return await fail(`apt-get install ${req.recipe.systemPackages.join(' ')} failed (exit ${res.exitCode})\n${lastLines(res.text)}`);
      }
      try {
        await docker.getNetwork('bridge').disconnect({ Container: container.id, Force: true });
      } catch (err) {
        throw dockerError('cannot disconnect the env build container from the network', err);
      }
      await append('# network disconnected\n');
    }

    const res = await exec(install, [`FORESIGHT_COMMIT=${req.commit}`, ...pip.env]);
    if (res.timedOut) return await fail(`timed out after ${timeoutSec} s\n${lastLines(res.text)}`);
    if (res.exitCode !== 0) return await fail(lastLines(res.text));

    const { repo, tag } = splitRef(common.image);
    try {
      await container.commit({
        repo,
        tag,
        comment: `foresight env for ${req.repo}@${req.commit}`,
        changes: [
          `ENV FORESIGHT_PYTHON=${VENV_PYTHON} VIRTUAL_ENV=${VENV} PATH=${IMAGE_PATH}`,
          'WORKDIR /tmp',
          CLEAR_OWNER_LABELS,
        ],
      });
    } catch (err) {
      throw dockerError(`cannot commit ${common.image}`, err);
    }
    await append(`\n# committed ${common.image} after ${Math.round((Date.now() - t0) / 1000)} s\n`);
    logLine(req.log, `built ${common.image} in ${Math.round((Date.now() - t0) / 1000)} s`);
    return { ok: true, built: true, log: logPath, ...common, durationMs: Date.now() - t0 };
  } finally {
    dispose();
    await forceRemove(docker, container.id).catch(() => undefined);
  }
}
