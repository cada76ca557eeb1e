import type { RetryPolicy } from './backoff.ts';
import { inProcessQueue, type InProcessQueueOptions } from './in-process.ts';
import { redisQueue } from './redis-queue.ts';
import type { WorkQueue } from './types.ts';

export interface OpenWorkQueueOptions extends Omit<InProcessQueueOptions, 'retry'> {
  /** config.queue.url: null runs items in this process (the other fields are the in-process queue's). */
  url: string | null;
  /** Retries of infrastructure failures on workers (default DEFAULT_RETRY); the in-process queue tries once. */
  retry?: RetryPolicy;
}

/** The queue a stage submits to, as the configuration says; close it when the stage ends. */
export async function openWorkQueue(opts: OpenWorkQueueOptions): Promise<WorkQueue> {
  const { url, retry, ...local } = opts;
  if (url === null) return inProcessQueue(local);
  return redisQueue({ url, log: opts.log, retry });
}
