import type { Job } from 'bullmq';
import type { Logger } from '../foundation/log.ts';
import { type RetryPolicy, DEFAULT_RETRY } from './backoff.ts';
import { decodeFailure, JobFailedError } from './errors.ts';
import { assertRedisReachable } from './reachable.ts';
import { encodePayload } from './run-handler.ts';
import type { ItemProgress, JobKind, SubmitOptions, WorkQueue } from './types.ts';

/** The BullMQ queue every coordinator and worker of one Redis shares (kinds are job names in it). */
export const QUEUE_NAME = 'foresight';

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
 * kept). A job that failed is retried when submitted again.
 */
export async function redisQueue(opts: RedisQueueOptions): Promise<WorkQueue> {
  await assertRedisReachable(opts.url);
  // Loaded on use: importing core/queue costs a local run nothing.
  const { Job, Queue, QueueEvents } = await import('bullmq');
  const retry = opts.retry ?? DEFAULT_RETRY;
  const connection = connectionOf(opts.url);
  const queue = new Queue(QUEUE_NAME, { connection });
  const events = new QueueEvents(QUEUE_NAME, { connection });
  // Each item in flight listens on both (BullMQ's waitUntilFinished): hundreds at once is normal, not a leak.
  queue.setMaxListeners(0);
  events.setMaxListeners(0);
  const onError = (err: Error): void => opts.log.debug(`queue connection: ${err.message}`);
  queue.on('error', onError);
  events.on('error', onError);
  await Promise.all([queue.waitUntilReady(), events.waitUntilReady()]);
  const listeners = new Map<string, Set<(p: WireProgress) => void>>();
  events.on('progress', ({ jobId, data }) => {
    if (isWireProgress(data)) for (const l of listeners.get(jobId) ?? []) l(data);
  });

  // Jobs in flight with no worker connected wait forever: say so, once per such spell, with the remedy.
  let inFlight = 0;
  let noWorkerSince: number | null = null;
  let warned = false;
  const warnMs = opts.noWorkerWarnMs ?? 60_000;
  const watch = setInterval(() => {
    if (!inFlight) return;
    queue.getWorkersCount().then(
      (n) => {
        if (n > 0) {
          noWorkerSince = null;
          warned = false;
          return;
        }
        noWorkerSince ??= Date.now();
        if (!warned && Date.now() - noWorkerSince >= warnMs) {
          warned = true;
          opts.log.warn(`no worker is taking jobs from ${opts.url} (${inFlight} waiting for ${Math.round((Date.now() - noWorkerSince) / 1000)} s): start \`foresight worker --queue ${opts.url}\` on a host with Docker`);
        }
      },
      (err: unknown) => opts.log.debug(`counting the workers: ${err instanceof Error ? err.message : String(err)}`),
    );
  }, Math.max(100, Math.min(15_000, warnMs / 4)));
  watch.unref();

  async function enqueue(kindName: string, jobId: string, data: { payload: unknown }): Promise<Job> {
    const existing = await Job.fromId(queue, jobId);
    if (existing) {
      if ((await existing.getState()) === 'failed') {
        opts.log.debug(`${jobId}: failed before, queued again`);
        // Another coordinator may have retried it a moment ago: then it is no longer in `failed`.
        await existing.retry('failed', { resetAttemptsMade: true, resetAttemptsStarted: true }).catch(() => undefined);
      }
      return existing;
    }
    return queue.add(kindName, data, {
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
      inFlight++;
      try {
        const job = await enqueue(kind.name, jobId, { payload: wire });
        let raw: unknown;
        try {
          raw = await job.waitUntilFinished(events);
        } catch (err) {
          const f = decodeFailure(err instanceof Error ? err.message : String(err));
          throw new JobFailedError(f.reason, kind.name, id, f.message, f.remedy);
        }
        const parsed = kind.result.safeParse(raw);
        if (!parsed.success) {
          throw new JobFailedError('mismatch', kind.name, id, `the worker's result does not parse: ${parsed.error.issues[0]?.message}`, 'run the same foresight version on the coordinator and every worker');
        }
        return parsed.data;
      } finally {
        inFlight--;
        listeners.get(jobId)?.delete(listener);
        if (listeners.get(jobId)?.size === 0) listeners.delete(jobId);
      }
    },
    async close() {
      clearInterval(watch);
      await events.close();
      await queue.close();
    },
  };
}
