import { hostname } from 'node:os';
import type { Logger } from '../foundation/log.ts';
import { withRetry } from '../http/retry.ts';
import { JobFailedError } from './errors.ts';
import { type RetryPolicy, policyBackoff } from './backoff.ts';
import type { HandlerRegistry } from './registry.ts';
import { encodePayload, runHandler } from './run-handler.ts';
import { SharedResources } from './shared.ts';
import type { JobKind, SubmitOptions, WorkQueue } from './types.ts';

export interface InProcessQueueOptions {
  handlers: HandlerRegistry;
  /** Items run at once (the stage's --jobs); submits beyond it are the caller's to hold back. */
  jobs: number;
  dataDir: string;
  log: Logger;
  /** The stage's: handlers see its abort, and a submit settles once its handler has stopped. */
  signal?: AbortSignal;
  /** Default: one attempt, as a local run has always done. */
  retry?: RetryPolicy;
}

/** The default queue: each item runs here, now, through the handler registered for its kind, checked as a worker would check it. */
export function inProcessQueue(opts: InProcessQueueOptions): WorkQueue {
  const retry = opts.retry ?? { attempts: 1, backoffMs: 0 };
  const worker = `${hostname()}:${process.pid}`;
  const signal = opts.signal ?? new AbortController().signal;
  // Same id, same run: a second submit shares the first one's promise.
  const runs = new Map<string, Promise<unknown>>();
  const shared = new SharedResources(opts.log);

  async function execute<P, R>(kind: JobKind<P, R>, id: string, payload: unknown, sub: SubmitOptions): Promise<R> {
    let failed = '';
    return withRetry(
      async (attempt) => {
        const outcome = await runHandler(opts.handlers, kind.name, payload, {
          id,
          attempt,
          worker,
          dataDir: opts.dataDir,
          signal,
          log: opts.log,
          progress: async (p) => sub.onProgress?.({ ...p, id, worker }),
          shared: (key, create, dispose) => shared.get(key, create, dispose),
        });
        if (outcome.status === 'done') return kind.result.parse(outcome.result);
        const f = outcome.failure;
        failed = f.message;
        // In this process the handler's own error stays attached (its stack, with FORESIGHT_DEBUG).
        throw new JobFailedError(f.reason, kind.name, id, f.message, f.remedy, outcome.error);
      },
      {
        attempts: retry.attempts,
        backoff: policyBackoff(retry),
        // Only the environment failing is worth another attempt; the item's own failures are results.
        retryable: (err) => err instanceof JobFailedError && err.reason === 'infra',
        signal,
        onRetry: ({ attempt }) => opts.log.warn(`${kind.name} ${id}: ${failed}; retrying (attempt ${attempt + 1} of ${retry.attempts})`),
      },
    );
  }

  return {
    mode: 'in-process',
    capacity: opts.jobs,
    submit<P, R>(kind: JobKind<P, R>, id: string, payload: P, sub: SubmitOptions = {}): Promise<R> {
      const key = `${kind.name}.${id}`;
      let run = runs.get(key);
      if (!run) {
        // Checked as for Redis, so a payload that would not cross the wire fails here too.
        run = Promise.resolve().then(() => execute(kind, id, encodePayload(kind, id, payload), sub));
        runs.set(key, run);
        run.catch(() => runs.delete(key));
      }
      return run as Promise<R>;
    },
    async close() {
      runs.clear();
      await shared.disposeAll();
    },
  };
}

