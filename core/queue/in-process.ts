import { hostname } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from '../foundation/log.ts';
import { JobFailedError } from './errors.ts';
import { type RetryPolicy, backoffDelay } from './backoff.ts';
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
  signal?: AbortSignal;
  /** Default: one attempt, as a local run has always done. */
  retry?: RetryPolicy;
}

/** The default queue: each item runs here, now, through the same handler a worker would run. */
export function inProcessQueue(opts: InProcessQueueOptions): WorkQueue {
  const retry = opts.retry ?? { attempts: 1, backoffMs: 0 };
  const worker = `${hostname()}:${process.pid}`;
  const signal = opts.signal ?? new AbortController().signal;
  // Same id, same run: a second submit shares the first one's promise.
  const runs = new Map<string, Promise<unknown>>();
  const shared = new SharedResources(opts.log);

  async function execute<P, R>(kind: JobKind<P, R>, id: string, payload: unknown, sub: SubmitOptions): Promise<R> {
    for (let attempt = 1; ; attempt++) {
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
      if (f.reason !== 'infra' || attempt >= retry.attempts || signal.aborted) throw new JobFailedError(f.reason, kind.name, id, f.message, f.remedy);
      opts.log.warn(`${kind.name} ${id}: ${f.message}; retrying (attempt ${attempt + 1} of ${retry.attempts})`);
      await sleep(backoffDelay(retry, attempt), undefined, { signal });
    }
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

