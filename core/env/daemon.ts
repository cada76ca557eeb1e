/** The Docker daemon: whether it answers, and an error that says how to start it when it does not. */
import type Docker from 'dockerode';
import { ForesightError } from '../foundation/errors.ts';
import { connectDocker, dockerEndpoint } from './connect.ts';

export { connectDocker, dockerEndpoint } from './connect.ts';

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
