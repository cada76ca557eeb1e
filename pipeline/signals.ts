/**
 * The process's one signal owner. SIGINT, SIGTERM and SIGHUP abort the run's AbortSignal: every stage
 * stops starting work, containers tied to the signal are removed at once, and nothing computed after
 * the abort is checkpointed (pipeline/run-stage.ts), so a rerun redoes exactly the interrupted items.
 * A second signal, or a run that does not unwind within the grace period, exits at once; containers
 * left then are swept by the next run (core/env/container/cleanup.ts).
 */
import { setMaxListeners } from 'node:events';
import { ForesightError } from '../core/foundation/errors.ts';

const EXIT_CODES = { SIGINT: 130, SIGTERM: 143, SIGHUP: 129 } as const;
type Handled = keyof typeof EXIT_CODES;

export interface SignalOwner {
  signal: AbortSignal;
  /** The exit code of the signal received (130, 143, 129), or null when none came. */
  exitCode(): number | null;
  /** Stop listening (the run finished). */
  dispose(): void;
}

export function abortOnSignals(opts: { graceMs?: number; onSignal?: (name: Handled) => void } = {}): SignalOwner {
  const controller = new AbortController();
  // Every live container, build and exec of the run listens on it (pooled containers, look-ahead builds, chains at once): no leak.
  setMaxListeners(0, controller.signal);
  let received: Handled | null = null;
  const handlers = new Map<Handled, () => void>();
  for (const name of Object.keys(EXIT_CODES) as Handled[]) {
    const handler = (): void => {
      if (received) process.exit(EXIT_CODES[received]); // a second signal: stop waiting for the cleanup
      received = name;
      opts.onSignal?.(name);
      controller.abort(new ForesightError(`interrupted by ${name}`, { remedy: 'rerun the same command: finished items are kept, the interrupted ones are redone' }));
      setTimeout(() => process.exit(EXIT_CODES[name]), opts.graceMs ?? 20_000).unref();
    };
    handlers.set(name, handler);
    process.on(name, handler);
  }
  return {
    signal: controller.signal,
    exitCode: () => (received ? EXIT_CODES[received] : null),
    dispose: () => {
      for (const [name, handler] of handlers) process.off(name, handler);
    },
  };
}
