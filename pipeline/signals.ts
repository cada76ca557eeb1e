/**
 * The process's one signal owner. SIGINT, SIGTERM and SIGHUP abort the run's AbortSignal: every stage
 * stops starting work, containers tied to the signal are removed at once, and nothing computed after
 * the abort is checkpointed (pipeline/run-stage.ts), so a rerun redoes exactly the interrupted items.
 *
 * Every way out after a signal removes the containers this process still owns (labelled with its pid,
 * core/env removeOwnContainers): the command's own `close()` once it has unwound, or the exit forced by a
 * second signal or by a run that does not unwind within the grace period. Only a process killed outright
 * (SIGKILL) leaves containers, swept by the next run (core/env/container/cleanup.ts).
 */
import { setMaxListeners } from 'node:events';
import type Docker from 'dockerode';
import { removeOwnContainers } from '../core/env/index.ts';
import { ForesightError } from '../core/foundation/errors.ts';
import type { Logger } from '../core/foundation/log.ts';

const EXIT_CODES = { SIGINT: 130, SIGTERM: 143, SIGHUP: 129 } as const;
type Handled = keyof typeof EXIT_CODES;

/** The longest the final sweep may take: it is part of the grace period, not added to it. */
const SWEEP_MS = 4_000;

export interface SignalOptions {
  /** How long the run may take to unwind after the first signal before the process exits anyway (default 20 s). */
  graceMs?: number;
  onSignal?: (name: Handled) => void;
  /** The daemon this process creates containers on: after a signal, what it still owns there is removed before it exits. */
  docker?: Docker;
  /** Where the final sweep says what it removed, or could not. */
  log?: Logger;
}

export interface SignalOwner {
  signal: AbortSignal;
  /** The exit code of the signal received (130, 143, 129), or null when none came. */
  exitCode(): number | null;
  /** Stop listening (the run finished). */
  dispose(): void;
  /**
   * The command has unwound. After a signal: remove the containers this process still owns, set the exit
   * code (128 + the signal) and keep listening (a further signal exits at once). Otherwise: stop listening.
   */
  close(): Promise<void>;
}

export function abortOnSignals(opts: SignalOptions = {}): SignalOwner {
  const controller = new AbortController();
  // Every live container, build and exec of the run listens on it (pooled containers, look-ahead builds, chains at once): no leak.
  setMaxListeners(0, controller.signal);
  const graceMs = opts.graceMs ?? 20_000;
  const sweepMs = Math.min(SWEEP_MS, graceMs / 2);
  let received: Handled | null = null;
  let exiting = false;

  async function sweep(deadlineMs: number): Promise<void> {
    if (!opts.docker) return;
    const { removed, left } = await removeOwnContainers(opts.docker, { deadlineMs });
    if (removed.length) opts.log?.info(`removed ${removed.length} container(s) of this process on the way out`);
    if (left.length) opts.log?.warn(`${left.length} container(s) of this process are still there (${left.map((id) => id.slice(0, 12)).join(' ')}): the next run removes them, or \`docker rm -f\` them`);
  }

  /** Leave now: the final sweep (bounded), then exit with the signal's code; asked again, exit at once. */
  function exit(code: number): void {
    if (exiting) process.exit(code);
    exiting = true;
    setTimeout(() => process.exit(code), sweepMs + 1_000);
    void sweep(sweepMs).finally(() => process.exit(code));
  }

  const handlers = new Map<Handled, () => void>();
  for (const name of Object.keys(EXIT_CODES) as Handled[]) {
    const handler = (): void => {
      if (received) return exit(EXIT_CODES[received]); // a second signal: stop waiting for the unwinding
      received = name;
      opts.onSignal?.(name);
      controller.abort(new ForesightError(`interrupted by ${name}`, { remedy: 'rerun the same command: finished items are kept, the interrupted ones are redone' }));
      setTimeout(() => exit(EXIT_CODES[name]), graceMs - sweepMs).unref();
    };
    handlers.set(name, handler);
    process.on(name, handler);
  }
  const dispose = (): void => {
    for (const [name, handler] of handlers) process.off(name, handler);
  };
  return {
    signal: controller.signal,
    exitCode: () => (received ? EXIT_CODES[received] : null),
    dispose,
    async close() {
      if (!received) return dispose();
      await sweep(sweepMs);
      process.exitCode = EXIT_CODES[received];
    },
  };
}
