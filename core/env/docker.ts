/**
 * Docker plumbing of the validate stage: reach the daemon, make sure the image exists, and open
 * one locked-down container per chain in which every state of the chain runs (see chain-env.ts).
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type Docker from 'dockerode';
import { ForesightError } from '../errors.ts';
import { connectDocker, dockerEndpoint } from './connect.ts';

export { openChainEnv, DEFAULT_LIMITS, REPO_PATH } from './chain-env.ts';
export type { ChainEnv, ChainEnvOptions, StateRequest, StateRun } from './chain-env.ts';
export { connectDocker, dockerEndpoint } from './connect.ts';
export {
  liveContainerIds,
  removeLiveContainers,
  removeStaleContainers,
  setExitAfterSignalCleanup,
  RUN_LABEL,
} from './cleanup.ts';

const BUILD_SCRIPT = fileURLToPath(new URL('./build-base-image.sh', import.meta.url));

/** The offline base image `core/env/build-base-image.sh` builds (FORESIGHT_BASE_IMAGE overrides). */
export function baseImageName(env: NodeJS.ProcessEnv = process.env): string {
  return env['FORESIGHT_BASE_IMAGE'] || 'foresight-base:bookworm';
}

async function ping(docker: Docker, timeoutMs: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      docker.ping(),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

export async function isDockerReachable(docker: Docker = connectDocker(), timeoutMs = 5000): Promise<boolean> {
  try {
    await ping(docker, timeoutMs);
    return true;
  } catch {
    return false;
  }
}

/** Throws ForesightError when the daemon does not answer a ping. */
export async function assertDockerReachable(docker: Docker = connectDocker(), timeoutMs = 5000): Promise<void> {
  try {
    await ping(docker, timeoutMs);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const where = (docker.modem as { socketPath?: string } | undefined)?.socketPath ?? dockerEndpoint();
    throw new ForesightError(`Docker is not reachable at ${where}${code ? ` (${code})` : ''}`, {
      remedy: 'start it: `dockerd >/var/log/dockerd.log 2>&1 &` (or run `make setup`)',
      external: true,
      cause: err,
    });
  }
}

async function imagePresent(docker: Docker, name: string): Promise<boolean> {
  try {
    await docker.getImage(name).inspect();
    return true;
  } catch (err) {
    if ((err as { statusCode?: number }).statusCode === 404) return false;
    throw err;
  }
}

/** Where ensureImage streams the build's output: a chunk callback, or a logger (one info line per line). */
export type BuildLog = ((chunk: string) => void) | { info(msg: string): void };

export interface EnsureImageOptions {
  docker?: Docker;
  log?: BuildLog;
}

function chunkWriter(log: BuildLog | undefined): { write: (chunk: string) => void; flush: () => void } {
  if (log === undefined) return { write: (c) => void process.stderr.write(c), flush: () => undefined };
  if (typeof log === 'function') return { write: log, flush: () => undefined };
  let pending = '';
  return {
    write: (chunk) => {
      const lines = (pending + chunk).split('\n');
      pending = lines.pop() ?? '';
      for (const l of lines) if (l.trim()) log.info(l);
    },
    flush: () => {
      if (pending.trim()) log.info(pending);
      pending = '';
    },
  };
}

/**
 * Make sure `name` exists locally. The offline base image is built with
 * `core/env/build-base-image.sh NAME` (about 80 s, output streamed to the log); any other missing
 * image is an error (no registry is assumed reachable). The second argument is either options or
 * just the log (a logger such as the pipeline's, or a chunk callback).
 */
export async function ensureImage(name: string, optsOrLog: EnsureImageOptions | BuildLog = {}): Promise<void> {
  const opts: EnsureImageOptions =
    typeof optsOrLog === 'function' || 'info' in optsOrLog ? { log: optsOrLog } : optsOrLog;
  const docker = opts.docker ?? connectDocker();
  if (await imagePresent(docker, name)) return;
  if (name !== baseImageName()) {
    throw new ForesightError(`Docker image ${name} is not present`, {
      remedy: `build or \`docker load\` it first, or use the offline base image ${baseImageName()}`,
      external: true,
    });
  }
  const out = chunkWriter(opts.log);
  const code = await new Promise<number | null>((resolve, reject) => {
    const child = spawn('bash', [BUILD_SCRIPT, name], { stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.setEncoding('utf8').on('data', out.write);
    child.stderr.setEncoding('utf8').on('data', out.write);
    child.on('error', reject);
    child.on('close', resolve);
  }).catch((err: unknown) => {
    throw new ForesightError(`cannot run ${BUILD_SCRIPT}`, { remedy: 'check that bash is installed', cause: err });
  });
  out.flush();
  if (code !== 0) {
    throw new ForesightError(`building the base image ${name} failed (exit ${code})`, {
      remedy: `run \`core/env/build-base-image.sh ${name}\` and fix what it reports`,
      external: true,
    });
  }
  if (!(await imagePresent(docker, name))) {
    throw new ForesightError(`core/env/build-base-image.sh finished but ${name} is still missing`, {
      remedy: `run \`docker image ls\` and \`core/env/build-base-image.sh ${name}\` by hand`,
      external: true,
    });
  }
}
