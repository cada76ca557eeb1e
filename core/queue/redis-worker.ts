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
  /** Stop taking jobs and wait for the running ones (force: stop them, back to the queue with no attempt used; Redis away: stop them, they come back stalled). */
  close(force?: boolean): Promise<void>;
}

/** The socket failed or closed, not a command: what ioredis reports on each reconnect attempt. */
function isConnectionError(err: Error & { code?: string }): boolean {
  return ['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENOTFOUND'].includes(err.code ?? '') || err.message === 'Connection is closed.';
}

/** A process's worker on the shared queue: runs the jobs whose kind it has a handler for. */
export async function startQueueWorker(opts: QueueWorkerOptions): Promise<QueueWorker> {
  await assertRedisReachable(opts.url);
  const { UnrecoverableError, WaitingError, Worker } = await import('bullmq');
  const name = opts.name ?? `${hostname()}:${process.pid}`;
  const log = opts.log;
  const stopping = new AbortController();
  const shared = new SharedResources(log);
  /** Jobs running here whose lock renewal failed: stopped once, said once. */
  const lockLost = new Set<string>();
  /** The handlers running now, so a close without Redis still waits for them to stop. */
  const running = new Set<Promise<unknown>>();
  const worker = new Worker(
    QUEUE_NAME,
    async (job, token, signal) => {
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
        // Best effort: a progress event lost with Redis (restarting, the job gone from it) is no failure of the item.
        progress: async (p: { done: number; total: number; note?: string }) => {
          job.updateProgress({ ...p, worker: name }).catch((err: unknown) => log.debug(`${job.id}: progress not sent: ${err instanceof Error ? err.message : String(err)}`));
        },
        shared: <T>(key: string, create: () => Promise<T>, dispose?: (value: T) => Promise<void>) => shared.get(key, create, dispose),
      };
      const run = runHandler(opts.handlers, job.name, (job.data as { payload?: unknown }).payload, ctx);
      running.add(run);
      const outcome = await run.finally(() => running.delete(run));
      const lost = lockLost.delete(job.id!);
      const took = `${((Date.now() - started) / 1000).toFixed(1)}s`;
      if (outcome.status === 'done' && !stopping.signal.aborted) {
        log.info(`${job.name} ${id}: done in ${took}`);
        return outcome.result;
      }
      // Stopped with this worker (closed with force): back to the front of the wait list, no attempt used up
      // (with Redis away it cannot move: it comes back stalled instead).
      if (stopping.signal.aborted && !lost && token && lostSince === null && (await job.moveToWait(token).then(() => true, () => false))) {
        log.info(`${job.name} ${id}: stopped after ${took} with the worker; back in the queue`);
        throw new WaitingError();
      }
      // A result the handler returned although the worker stopped under it (its containers pulled away) is dropped as one.
      const f = outcome.status === 'done' ? { reason: 'infra' as const, message: 'the worker stopped while the job ran', remedy: 'nothing to do: it runs again on a worker' } : outcome.failure;
      if (lost) {
        // Not ours any more: what is thrown here only tries to record a failure Redis no longer takes from us.
        log.info(`${job.name} ${id}: stopped after ${took} (its lock is gone; it runs again)`);
        throw new Error(encodeFailure({ ...f, reason: 'infra' }));
      }
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
  // Redis away (restarting, unreachable): ioredis reconnects by itself; say so once per spell, not per retry.
  let lostSince: number | null = null;
  worker.on('error', (err) => {
    if (isConnectionError(err)) {
      if (lostSince === null) log.warn(`lost Redis at ${opts.url} (${err.message}): waiting for it; jobs resume when it is back`);
      lostSince ??= Date.now();
    } else if (/^could not renew lock for job /.test(err.message)) {
      // Said by lockRenewalFailed below.
    } else if (/Missing key for job|Missing lock for job|Lock mismatch for job/.test(err.message)) {
      log.warn(`queue: ${err.message} (the job left Redis or changed hands while it ran: its result here is dropped; it runs again)`);
    } else {
      log.warn(`queue: ${err.message}`);
    }
  });
  worker.getBackend().on('ready', () => {
    if (lostSince === null) return;
    log.info(`Redis at ${opts.url} is back after ${Math.round((Date.now() - lostSince) / 1000)} s: taking jobs again`);
    lostSince = null;
  });
  // Our lock on a job is gone (Redis restarted, or it lapsed): the job runs again elsewhere, so stop it here.
  worker.on('lockRenewalFailed', (jobIds) => {
    for (const jobId of jobIds) {
      if (lockLost.has(jobId)) continue;
      lockLost.add(jobId);
      log.warn(`${jobId}: lost its lock (Redis restarted or the lock lapsed): stopped here, it runs again`);
      worker.cancelJob(jobId, 'lost the job lock');
    }
  });
  worker.on('stalled', (jobId) => log.warn(`${jobId}: came back stalled (a worker died with it); it runs again`));
  await worker.waitUntilReady();
  return {
    name,
    async close(force = false) {
      // A drain ends with its jobs' completions and QUIT, which wait for Redis forever while it is away: then stop
      // the running jobs here (they come back stalled) and close without it.
      const away = lostSince !== null;
      if (away) log.warn(`Redis at ${opts.url} is away: stopping the running jobs (they run again) and closing without it`);
      if (force || away) stopping.abort(new Error('worker stopped'));
      if (force || away) await Promise.allSettled(running);
      // With Redis here, BullMQ waits for the processors: a stopped job is back in the wait list before the warm containers go.
      await worker.close(away);
      await shared.disposeAll();
    },
  };
}
