/** Docker image primitives shared by the image tiers (core/env/README.md): inspect, tag, error wrapping. */
import type Docker from 'dockerode';
import { ForesightError } from '../../foundation/errors.ts';
import { formatDuration, HEARTBEAT_MS } from '../../foundation/progress.ts';

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

/** A running build step says so this often: under the 30 s a run's log may stay silent (foundation/progress.ts HEARTBEAT_MS). */
export const STEP_HEARTBEAT_MS = HEARTBEAT_MS - 5_000;

/** Who hears of a running step, and what it is (`foresight-env:<key> install`). */
export interface StepProgress {
  log: BuildLog | undefined;
  what: string;
}

/** The line a heartbeat shows of a step's output: its last non-empty one, pip's progress lines included. */
function lastLine(text: string): string {
  const lines = text.split(/[\r\n]+/).map((l) => l.trim()).filter(Boolean);
  return (lines.at(-1) ?? '').slice(0, 160);
}

/**
 * Every STEP_HEARTBEAT_MS while a step runs, a line with its elapsed time and its last output line (the
 * current `[foresight] $` command of an install, pip's `Collecting …`). Returns what to feed the output
 * to and the function that stops it.
 */
export function stepHeartbeat(progress: StepProgress | undefined, t0 = Date.now()): { onOutput: (text: string) => void; stop: () => void } {
  if (!progress?.log) return { onOutput: () => {}, stop: () => {} };
  let last = '';
  let command = '';
  const timer = setInterval(() => {
    const echo = !last || last.startsWith('[foresight] $');
    const now = echo ? command || 'no output yet' : command ? `${command}; last output: ${last}` : last;
    logLine(progress.log, `${progress.what}: running for ${formatDuration(Date.now() - t0)} (${now})`);
  }, STEP_HEARTBEAT_MS);
  timer.unref?.();
  return {
    onOutput: (text) => {
      const line = lastLine(text);
      if (!line) return;
      last = line;
      const cmd = [...text.matchAll(/^\[foresight\] \$ (.+)$/gm)].at(-1)?.[1];
      if (cmd) command = cmd.slice(0, 120);
    },
    stop: () => clearInterval(timer),
  };
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
