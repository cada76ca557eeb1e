import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from '../foundation/log.ts';
import { type RetryPolicy, DEFAULT_RETRY } from './backoff.ts';
import { JobFailedError } from './errors.ts';
import { watchJobs } from './job-watch.ts';
import { assertRedisReachable } from './reachable.ts';
import { encodePayload } from './run-handler.ts';
import type { ItemProgress, JobKind, SubmitOptions, WorkQueue } from './types.ts';

/** The BullMQ queue every coordinator and worker of one Redis shares (kinds are job names in it). */
export const QUEUE_NAME = 'foresight';

/** How long close() lets the connections quit before dropping them (with Redis away they never would). */
const CLOSE_WAIT_MS = 1_000;

/** BullMQ's connection settings: blocking commands must wait for Redis instead of failing. */
export function connectionOf(url: string): { url: string; maxRetriesPerRequest: null } {
  return { url, maxRetriesPerRequest: null };
}

export interface RedisQueueOptions {
  url: string;
  log: Logger;
  /** Attempts and backoff of infrastructure failures (each job carries them). */
  retry?: RetryPolicy;
  /** Warn when jobs wait this long with no worker connected (default 60 s). */
  noWorkerWarnMs?: number;
  /**
   * How often the jobs in flight are read from Redis (default 2 s): a result whose event was missed still
   * arrives, and a job gone from Redis (restarted without persistence, flushed, evicted) is queued again.
   */
  pollMs?: number;
  /** How long Redis may stay unreachable before the submits waiting on it fail (default 5 min). */
  redisDownMs?: number;
  /** Times a job that vanished from Redis is queued again before its submit fails (default 3). */
  maxRequeues?: number;
}

interface WireProgress {
  done: number;
  total: number;
  note?: string;
  worker: string;
}

function isWireProgress(v: unknown): v is WireProgress {
  const o = v as Partial<WireProgress> | null;
  return typeof o === 'object' && o !== null && typeof o.done === 'number' && typeof o.total === 'number' && typeof o.worker === 'string';
}

/**
 * The coordinator's side of a Redis queue. An item is a job whose id is `<kind>.<content key>`, so it is
 * added once however often it is submitted, and a rerun finds a finished job's result in Redis (jobs are
 * kept). A job that failed is retried when submitted again. Redis may restart under it: connections come
 * back by themselves, and a job it lost is queued again (job-watch.ts).
 */
export async function redisQueue(opts: RedisQueueOptions): Promise<WorkQueue> {
  await assertRedisReachable(opts.url);
  // Loaded on use: importing core/queue costs a local run nothing.
  const { Job, Queue, QueueEvents } = await import('bullmq');
  const retry = opts.retry ?? DEFAULT_RETRY;
  const connection = connectionOf(opts.url);
  const queue = new Queue(QUEUE_NAME, { connection });
  const events = new QueueEvents(QUEUE_NAME, { connection });
  const onError = (err: Error): void => opts.log.debug(`queue connection: ${err.message}`);
  queue.on('error', onError);
  events.on('error', onError);
  await Promise.all([queue.waitUntilReady(), events.waitUntilReady()]);
  const listeners = new Map<string, Set<(p: WireProgress) => void>>();
  events.on('progress', ({ jobId, data }) => {
    if (isWireProgress(data)) for (const l of listeners.get(jobId) ?? []) l(data);
  });

  const watch = watchJobs({
    url: opts.url,
    log: opts.log,
    queue,
    events,
    pollMs: opts.pollMs ?? 2_000,
    redisDownMs: opts.redisDownMs ?? 300_000,
    maxRequeues: opts.maxRequeues ?? 3,
    noWorkerWarnMs: opts.noWorkerWarnMs ?? 60_000,
  });

  async function enqueue(kindName: string, jobId: string, data: { payload: unknown }): Promise<void> {
    const existing = await Job.fromId(queue, jobId);
    if (existing) {
      if ((await existing.getState()) === 'failed') {
        opts.log.debug(`${jobId}: failed before, queued again`);
        // Another coordinator may have retried it a moment ago: then it is no longer in `failed`.
        await existing.retry('failed', { resetAttemptsMade: true, resetAttemptsStarted: true }).catch(() => undefined);
      }
      return;
    }
    await queue.add(kindName, data, {
      jobId,
      attempts: retry.attempts,
      backoff: { type: 'exponential', delay: retry.backoffMs },
      removeOnComplete: false,
      removeOnFail: false,
    });
  }

  return {
    mode: 'redis',
    capacity: Number.POSITIVE_INFINITY,
    async submit<P, R>(kind: JobKind<P, R>, id: string, payload: P, sub: SubmitOptions = {}): Promise<R> {
      const wire = encodePayload(kind, id, payload);
      const jobId = `${kind.name}.${id}`;
      // Every worker's progress reaches the coordinator's file log, and the caller when it asked.
      const listener = (p: WireProgress): void => {
        opts.log.debug(`${jobId}: ${p.done}/${p.total}${p.note ? ` ${p.note}` : ''}`, { worker: p.worker });
        sub.onProgress?.({ ...p, id } satisfies ItemProgress);
      };
      listeners.set(jobId, (listeners.get(jobId) ?? new Set()).add(listener));
      try {
        // Settles by the job's events or by reading it from Redis; a job that vanished is queued again.
        const raw = await watch.wait(jobId, kind.name, id, () => enqueue(kind.name, jobId, { payload: wire }));
        const parsed = kind.result.safeParse(raw);
        if (!parsed.success) {
          throw new JobFailedError('mismatch', kind.name, id, `the worker's result does not parse: ${parsed.error.issues[0]?.message}`, 'run the same foresight version on the coordinator and every worker');
        }
        return parsed.data;
      } finally {
        listeners.get(jobId)?.delete(listener);
        if (listeners.get(jobId)?.size === 0) listeners.delete(jobId);
      }
    },
    async close() {
      watch.close();
      // Quitting waits for Redis in ioredis's offline queue: when it is away, drop the connections instead.
      const closing = Promise.all([events.close(), queue.close()]);
      const closed = await Promise.race([closing.then(() => true), sleep(CLOSE_WAIT_MS).then(() => false)]);
      if (closed) return;
      closing.catch(() => undefined);
      for (const c of [events, queue]) (await c.getBackend().client).disconnect();
    },
  };
}
