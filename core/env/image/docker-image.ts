/** Docker image primitives shared by the image tiers (core/env/README.md): inspect, tag, error wrapping. */
import type Docker from 'dockerode';
import { ForesightError } from '../../foundation/errors.ts';

export const statusCode = (err: unknown): number | undefined => (err as { statusCode?: number } | null)?.statusCode;

export function dockerError(what: string, err: unknown): ForesightError {
  if (err instanceof ForesightError) return err;
  return new ForesightError(`${what}: ${(err as Error).message}`, {
    remedy: 'check `docker info` and the daemon log',
    external: true,
    cause: err,
  });
}

/** Where build output goes: a chunk callback, or a logger (one info line per line). */
export type BuildLog = ((chunk: string) => void) | { info(msg: string): void };

export function logLine(log: BuildLog | undefined, msg: string): void {
  if (!log) return;
  if (typeof log === 'function') log(`${msg}\n`);
  else log.info(msg);
}

export async function inspectImage(docker: Docker, name: string): Promise<Docker.ImageInspectInfo | null> {
  try {
    return await docker.getImage(name).inspect();
  } catch (err) {
    if (statusCode(err) === 404) return null;
    throw dockerError(`cannot inspect image ${name}`, err);
  }
}

export function splitRef(ref: string): { repo: string; tag: string } {
  const i = ref.lastIndexOf(':');
  if (i <= ref.lastIndexOf('/')) return { repo: ref, tag: 'latest' };
  return { repo: ref.slice(0, i), tag: ref.slice(i + 1) };
}

export async function tagImage(docker: Docker, source: string, ref: string): Promise<void> {
  try {
    await docker.getImage(source).tag(splitRef(ref));
  } catch (err) {
    throw dockerError(`cannot tag ${source} as ${ref}`, err);
  }
}
