/**
 * Docker plumbing of the validate stage: reach the daemon, make sure the image exists, and open
 * one locked-down container per chain in which every state of the chain runs (see chain-env.ts).
 */
import type Docker from 'dockerode';
import { ForesightError } from '../errors.ts';
import { ensureBaseImage, DEFAULT_BASE_ALIAS } from './base-image.ts';
import { connectDocker, dockerEndpoint } from './connect.ts';

export { openChainEnv, DEFAULT_LIMITS, REPO_PATH } from './chain-env.ts';
export type { ChainEnv, ChainEnvOptions, StateRequest, StateRun } from './chain-env.ts';
export { connectDocker, dockerEndpoint } from './connect.ts';
export { forceRemove, ownContainerIds, removeStaleContainers, RUN_LABEL } from './cleanup.ts';
export { DEFAULT_BASE_ALIAS } from './base-image.ts';

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
  /** The base image's alias (config images.baseAlias): that name is built offline when missing. */
  baseAlias?: string;
  lockDir?: string | null;
}

/**
 * Make sure `name` exists locally. The offline base image's alias is built (one build path:
 * ensureBaseImage, about 90 s); any other missing image is an error (no registry is assumed reachable).
 */
export async function ensureImage(name: string, opts: EnsureImageOptions = {}): Promise<void> {
  const docker = opts.docker ?? connectDocker();
  if (await imagePresent(docker, name)) return;
  const alias = opts.baseAlias ?? DEFAULT_BASE_ALIAS;
  if (name !== alias) {
    throw new ForesightError(`Docker image ${name} is not present`, {
      remedy: `build or \`docker load\` it first, or use the offline base image ${alias}`,
      external: true,
    });
  }
  await ensureBaseImage({ docker, alias, lockDir: opts.lockDir, log: opts.log });
}
