import { hostname } from 'node:os';
import type { Logger } from '../foundation/log.ts';
import { encodeFailure } from './errors.ts';
import { connectionOf, QUEUE_NAME } from './redis-queue.ts';
import { assertRedisReachable } from './reachable.ts';
import type { HandlerRegistry } from './registry.ts';
import { runHandler } from './run-handler.ts';
import { SharedResources } from './shared.ts';

export interface QueueWorkerOptions {
  url: string;
  handlers: HandlerRegistry;
  /** Jobs run at once by this process. */
  concurrency: number;
  dataDir: string;
  log: Logger;
  /** Default `host:pid`: stored on each job it runs and sent with its progress. */
  name?: string;
  /**
   * How long a job stays ours without a lock renewal (renewed every half of it): a worker killed
   * mid-job is noticed this long after (plus up to stalledIntervalMs) and its job runs elsewhere.
   */
  lockDurationMs?: number;
  stalledIntervalMs?: number;
  /** Times a job may come back stalled before it fails (a job that kills every worker stops somewhere). */
  maxStalledCount?: number;
}

export interface QueueWorker {
  readonly name: string;
  /** Stop taking jobs and wait for the running ones (force: leave them; they come back as stalled). */
  close(force?: boolean): Promise<void>;
}

/** A process's worker on the shared queue: runs the jobs whose kind it has a handler for. */
export async function startQueueWorker(opts: QueueWorkerOptions): Promise<QueueWorker> {
  await assertRedisReachable(opts.url);
  const { UnrecoverableError, Worker } = await import('bullmq');
  const name = opts.name ?? `${hostname()}:${process.pid}`;
  const log = opts.log;
  const stopping = new AbortController();
  const shared = new SharedResources(log);
  const worker = new Worker(
    QUEUE_NAME,
    async (job, _token, signal) => {
      const id = job.id!.slice(job.name.length + 1);
      const attempt = Math.max(1, job.attemptsStarted);
      const started = Date.now();
      log.info(`${job.name} ${id}: started (attempt ${attempt})`);
      const ctx = {
        id,
        attempt,
        worker: name,
        dataDir: opts.dataDir,
        signal: signal ? AbortSignal.any([signal, stopping.signal]) : stopping.signal,
        log: log.child({ job: job.id }),
        progress: (p: { done: number; total: number; note?: string }) => job.updateProgress({ ...p, worker: name }),
        shared: <T>(key: string, create: () => Promise<T>, dispose?: (value: T) => Promise<void>) => shared.get(key, create, dispose),
      };
      const outcome = await runHandler(opts.handlers, job.name, (job.data as { payload?: unknown }).payload, ctx);
      const took = `${((Date.now() - started) / 1000).toFixed(1)}s`;
      if (outcome.status === 'done') {
        log.info(`${job.name} ${id}: done in ${took}`);
        return outcome.result;
      }
      const f = outcome.failure;
      // Stopped under it: the environment went away, not the item's fault.
      const retryable = f.reason === 'infra' || ctx.signal.aborted;
      log.warn(`${job.name} ${id}: ${f.reason} after ${took}: ${f.message}${retryable ? ' (retried with backoff)' : ''}`);
      if (retryable) throw new Error(encodeFailure({ ...f, reason: 'infra' }));
      throw new UnrecoverableError(encodeFailure(f));
    },
    {
      connection: connectionOf(opts.url),
      concurrency: opts.concurrency,
      name,
      lockDuration: opts.lockDurationMs ?? 30_000,
      stalledInterval: opts.stalledIntervalMs ?? 30_000,
      maxStalledCount: opts.maxStalledCount ?? 2,
    },
  );
  worker.on('error', (err) => log.warn(`queue: ${err.message}`));
  worker.on('stalled', (jobId) => log.warn(`${jobId}: came back stalled (a worker died with it); it runs again`));
  await worker.waitUntilReady();
  return {
    name,
    async close(force = false) {
      if (force) stopping.abort(new Error('worker stopped'));
      await worker.close(force);
      await shared.disposeAll();
    },
  };
}
