import type { RetryPolicy } from './backoff.ts';
import { inProcessQueue, type InProcessQueueOptions } from './in-process.ts';
import { redisQueue } from './redis-queue.ts';
import type { JobKind, SubmitOptions, WorkQueue } from './types.ts';

export interface OpenWorkQueueOptions extends Omit<InProcessQueueOptions, 'retry'> {
  /** config.queue.url: null runs items in this process (`handlers`, `jobs` and `dataDir` are for that queue only). */
  url: string | null;
  /** Retries of infrastructure failures on workers (default DEFAULT_RETRY); the in-process queue tries once. */
  retry?: RetryPolicy;
}

/**
 * The queue a stage submits to, as the configuration says; close it when the stage ends. An abort of
 * `signal` stops the items running here (a submit settles once its handler has stopped), or stops the
 * waiting for workers (their jobs stay queued: the next run finds them).
 */
export async function openWorkQueue(opts: OpenWorkQueueOptions): Promise<WorkQueue> {
  const { url, retry, ...local } = opts;
  if (url === null) return inProcessQueue(local);
  const queue = await redisQueue({ url, log: opts.log, retry });
  return opts.signal ? stopsWaiting(queue, opts.signal) : queue;
}

/** A queue whose submits reject with the abort reason as soon as `signal` aborts, whatever the items do. */
function stopsWaiting(queue: WorkQueue, signal: AbortSignal): WorkQueue {
  const stopped = new Promise<never>((_, reject) => {
    const stop = (): void => reject(signal.reason instanceof Error ? signal.reason : new Error('stopped'));
    if (signal.aborted) stop();
    else signal.addEventListener('abort', stop, { once: true });
  });
  stopped.catch(() => undefined);
  return {
    mode: queue.mode,
    capacity: queue.capacity,
    submit<P, R>(kind: JobKind<P, R>, id: string, payload: P, sub?: SubmitOptions): Promise<R> {
      return Promise.race([queue.submit(kind, id, payload, sub), stopped]);
    },
    close: () => queue.close(),
  };
}
