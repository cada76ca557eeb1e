import type { Logger } from '../log.ts';
import type { RetryPolicy } from './backoff.ts';
import { inProcessQueue } from './in-process.ts';
import { redisQueue } from './redis-queue.ts';
import type { HandlerRegistry } from './registry.ts';
import type { WorkQueue } from './types.ts';

export interface OpenWorkQueueOptions {
  /** config.queue.url: null runs items in this process. */
  url: string | null;
  /** The handlers the in-process queue runs (a Redis queue's workers have their own). */
  handlers: HandlerRegistry;
  /** config.validate.jobs: items at once in this process. */
  jobs: number;
  /** Where in-process handlers keep their files (the run's data root). */
  dataDir: string;
  log: Logger;
  signal?: AbortSignal;
  /** Retries of infrastructure failures on workers (default DEFAULT_RETRY). */
  retry?: RetryPolicy;
}

/** The queue a stage submits to, as the configuration says; close it when the stage ends. */
export async function openWorkQueue(opts: OpenWorkQueueOptions): Promise<WorkQueue> {
  if (opts.url === null) return inProcessQueue({ handlers: opts.handlers, jobs: opts.jobs, dataDir: opts.dataDir, log: opts.log, signal: opts.signal });
  return redisQueue({ url: opts.url, log: opts.log, retry: opts.retry });
}
