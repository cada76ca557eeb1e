/**
 * Building one env image: the build container from the base, the apt step (network, then cut
 * off), the install step (offline), `docker commit` (see images.ts).
 */
import { appendFile, mkdir, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type Docker from 'dockerode';
import { git } from '../git.ts';
import { buildFields } from './recipes/schema.ts';
import { BASE_PYTHON, type BaseImage } from './base-image.ts';
import { aptScript, installScript, VENV, VENV_PYTHON } from './build-scripts.ts';
import { forceRemove, ownerLabels, PID_LABEL, HOST_LABEL, RUN_LABEL, trackContainer, untrackContainer } from './cleanup.ts';
import type { EnvCommon, EnvImageRequest, EnvImageResult } from './env-image.ts';
import { BASE_LABEL, COMMIT_LABEL, CREATED_LABEL, KEY_LABEL, REPO_LABEL } from './env-key.ts';
import { runExec } from './exec.ts';
import { dockerError, logLine, splitRef } from './image-docker.ts';
import { pipSources, type PipSources } from './pip-sources.ts';

const IMAGE_PATH = `${VENV}/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin`;

/** Default limit of one env build (all steps). */
export const DEFAULT_BUILD_TIMEOUT_SEC = 1800;

const DETAIL_LINES = 25;
const DETAIL_CHARS = 3000;

let pipMemo: Promise<PipSources> | null = null;
/** The host's pip sources, read once per process. */
function hostPipSources(): Promise<PipSources> {
  pipMemo ??= pipSources().catch((err: unknown) => {
    pipMemo = null;
    throw err;
  });
  return pipMemo;
}

async function resolveGitDir(clone: string, gitDir: string | undefined): Promise<string> {
  if (gitDir) {
    const abs = path.resolve(gitDir);
    const dotGit = path.join(abs, '.git');
    return (await stat(dotGit).catch(() => null))?.isDirectory() ? dotGit : abs;
  }
  return (await git(clone, ['rev-parse', '--absolute-git-dir'])).trim();
}

function lastLines(text: string): string {
  const lines = text.split('\n').map((l) => l.trimEnd()).filter((l) => l.trim() !== '');
  const tail = lines.slice(-DETAIL_LINES).join('\n');
  return tail.length > DETAIL_CHARS ? tail.slice(-DETAIL_CHARS) : tail;
}

export async function buildEnv(
  docker: Docker,
  req: EnvImageRequest,
  base: BaseImage,
  common: Omit<EnvCommon, 'durationMs'>,
  logPath: string,
  t0: number,
): Promise<EnvImageResult> {
  const timeoutSec = req.timeoutSec ?? DEFAULT_BUILD_TIMEOUT_SEC;
  const deadline = t0 + timeoutSec * 1000;
  const gitDir = await resolveGitDir(req.clone, req.gitDir);
  const pip: PipSources = await hostPipSources();
  const apt = aptScript(req.recipe);
  const install = installScript(req.recipe);
  await mkdir(path.dirname(logPath), { recursive: true });
  const header = [
    `# ${common.image}`,
    `# repo ${req.repo} commit ${req.commit}`,
    `# base ${base.image} (${base.id})`,
    `# recipe ${JSON.stringify(buildFields(req.recipe))}`,
    `# dependency files ${common.dependencyFiles.map((f) => `${f.path}@${f.blob.slice(0, 12)}`).join(' ') || '(none)'}`,
    ...pip.notes.map((n) => `# ${n}`),
    ...(req.recipe.python === BASE_PYTHON ? [] : [`# note: the recipe names Python ${req.recipe.python}; the image has ${BASE_PYTHON} (Debian bookworm)`]),
    `# started ${new Date().toISOString()}`,
    '',
  ];
  await writeFile(logPath, header.join('\n'));
  const append = (text: string): Promise<void> => appendFile(logPath, text.endsWith('\n') ? text : `${text}\n`);
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
  trackContainer(docker, container.id);
  try {
    try {
      await container.start();
    } catch (err) {
      throw dockerError('cannot start the env build container', err);
    }
    const exec = async (script: string, env: string[]): Promise<{ exitCode: number | null; text: string; timedOut: boolean }> => {
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
        throw dockerError('docker exec in the env build container failed', err);
      }
    };

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
          // The build container's owner labels must not mark containers of this image as stale.
          `LABEL ${RUN_LABEL}="" ${PID_LABEL}="" ${HOST_LABEL}=""`,
        ],
      });
    } catch (err) {
      throw dockerError(`cannot commit ${common.image}`, err);
    }
    await append(`\n# committed ${common.image} after ${Math.round((Date.now() - t0) / 1000)} s\n`);
    logLine(req.log, `built ${common.image} in ${Math.round((Date.now() - t0) / 1000)} s`);
    return { ok: true, built: true, log: logPath, ...common, durationMs: Date.now() - t0 };
  } finally {
    await forceRemove(docker, container.id).catch(() => undefined);
    untrackContainer(container.id);
  }
}
