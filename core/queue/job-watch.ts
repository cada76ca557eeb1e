import type { Queue, QueueEvents } from 'bullmq';
import { ForesightError } from '../foundation/errors.ts';
import type { Logger } from '../foundation/log.ts';
import { decodeFailure, JobFailedError } from './errors.ts';

export interface JobWatchOptions {
  url: string;
  log: Logger;
  queue: Queue;
  events: QueueEvents;
  /** How often the jobs in flight are read from Redis (more often when noWorkerWarnMs asks for it). */
  pollMs: number;
  /** How long Redis may stay unanswering before every wait fails. */
  redisDownMs: number;
  /** Times a job that vanished from Redis is queued again before its wait fails. */
  maxRequeues: number;
  /** Warn when jobs wait this long with no worker connected. */
  noWorkerWarnMs: number;
}

/** One job in flight; every submit of its id shares it. */
interface Watched {
  jobId: string;
  kind: string;
  id: string;
  enqueue: () => Promise<void>;
  /** Whether the job is in Redis as far as this process knows (events and polls count only then). */
  enqueued: boolean;
  /** An enqueue or a read of its state is under way: the poll leaves it alone. */
  busy: boolean;
  requeues: number;
  promise: Promise<unknown>;
  resolve: (raw: unknown) => void;
  reject: (err: unknown) => void;
}

export interface JobWatch {
  /** Enqueue the job (once for all submits of the id) and wait for its raw result. */
  wait(jobId: string, kind: string, id: string, enqueue: () => Promise<void>): Promise<unknown>;
  /** Stop polling; waits still pending reject. */
  close(): void;
}

/** A job's returnvalue as Redis stores it (JSON), as BullMQ reads it. */
function returnValue(stored: string | undefined): unknown {
  if (stored === undefined) return null;
  try {
    return JSON.parse(stored);
  } catch {
    return stored;
  }
}

/** `0.4 s`, `12 s`. */
const seconds = (ms: number): string => (ms < 10_000 ? (ms / 1000).toFixed(1) : String(Math.round(ms / 1000)));

/**
 * Waits for jobs on Redis. Events (completed, failed) settle a wait at once; one shared poll reads the state
 * of every job in flight, so a result whose event was missed (a reconnect) still arrives, and a job that
 * vanished (Redis restarted without persistence, flushed, evicted) is queued again under its id. A Redis
 * that stops answering is reported once per spell and, past `redisDownMs`, fails the waits.
 */
export function watchJobs(opts: JobWatchOptions): JobWatch {
  const { url, log, queue, events } = opts;
  const backend = queue.getBackend();
  const watched = new Map<string, Watched>();

  function settle(w: Watched, outcome: { raw: unknown } | { err: unknown }): void {
    if (watched.get(w.jobId) !== w) return;
    watched.delete(w.jobId);
    if ('raw' in outcome) w.resolve(outcome.raw);
    else w.reject(outcome.err);
  }

  function failed(w: Watched, failedReason: string): void {
    const f = decodeFailure(failedReason);
    settle(w, { err: new JobFailedError(f.reason, w.kind, w.id, f.message, f.remedy) });
  }

  events.on('completed', ({ jobId, returnvalue }: { jobId: string; returnvalue: unknown }) => {
    const w = watched.get(jobId);
    if (w?.enqueued) settle(w, { raw: returnvalue });
  });
  events.on('failed', ({ jobId, failedReason }: { jobId: string; failedReason: string }) => {
    const w = watched.get(jobId);
    if (w?.enqueued) failed(w, failedReason);
  });

  /** Read the job's state; settle it when finished, queue it again when it is gone. */
  async function check(w: Watched): Promise<void> {
    const answer = await backend.isFinished(w.jobId, true);
    const [status, value] = Array.isArray(answer) ? answer : [answer, undefined];
    if (status === 1) settle(w, { raw: returnValue(value) });
    else if (status === 2) failed(w, value ?? 'failed');
    else if (status === -1 && watched.get(w.jobId) === w) await requeue(w);
  }

  async function requeue(w: Watched): Promise<void> {
    if (w.requeues >= opts.maxRequeues) {
      const err = new JobFailedError(
        'lost',
        w.kind,
        w.id,
        `the job vanished from Redis at ${url} ${w.requeues + 1} times (restarted without persistence, flushed, or evicting keys)`,
        'run Redis with appendonly yes and maxmemory-policy noeviction, then rerun',
      );
      settle(w, { err });
      return;
    }
    w.requeues++;
    log.warn(`${w.jobId}: vanished from Redis at ${url} (restarted without persistence, flushed, or evicting keys); queued again (${w.requeues} of ${opts.maxRequeues})`);
    await enqueue(w);
  }

  async function enqueue(w: Watched): Promise<void> {
    w.enqueued = false;
    await w.enqueue();
    w.enqueued = true;
    // A job already finished (a rerun) settles here; one finishing from now on, by its event or the poll.
    await check(w);
  }

  /** Run one operation on a job at a time; a failure other than Redis's absence fails its wait. */
  async function exclusive(w: Watched, op: (w: Watched) => Promise<void>): Promise<void> {
    w.busy = true;
    try {
      await op(w);
    } catch (err) {
      settle(w, { err });
    } finally {
      w.busy = false;
    }
  }

  // The poll: one round trip for the worker count (it also shows Redis answers) and one per job in flight.
  let polling: { since: number } | null = null;
  let downSince: number | null = null;
  let lastError = '';
  let noWorkerSince: number | null = null;
  let noWorkerWarned = false;

  function unanswered(since: number): void {
    const now = Date.now();
    if (downSince === null) {
      downSince = since;
      log.warn(`waiting for Redis at ${url}: no answer for ${seconds(now - since)} s${lastError ? ` (${lastError})` : ''}, ${watched.size} item(s) in flight; giving up after ${seconds(opts.redisDownMs)} s`);
    }
    if (now - downSince < opts.redisDownMs) return;
    const err = new ForesightError(`the work queue at ${url} has not answered for ${seconds(now - downSince)} s${lastError ? ` (${lastError})` : ''}`, {
      remedy: `start Redis at ${url} again (with appendonly yes it keeps its jobs) or fix --queue / FORESIGHT_QUEUE, then rerun`,
      external: true,
    });
    for (const w of [...watched.values()]) settle(w, { err });
  }

  function answered(workers: number): void {
    if (downSince !== null) log.info(`Redis at ${url} answers again after ${seconds(Date.now() - downSince)} s`);
    downSince = null;
    lastError = '';
    // Jobs in flight with no worker connected wait forever: say so, once per such spell, with the remedy.
    if (workers > 0 || watched.size === 0) {
      noWorkerSince = null;
      noWorkerWarned = false;
      return;
    }
    noWorkerSince ??= Date.now();
    const waited = Date.now() - noWorkerSince;
    if (!noWorkerWarned && waited >= opts.noWorkerWarnMs) {
      noWorkerWarned = true;
      log.warn(`no worker is taking jobs from ${url} (${watched.size} waiting for ${Math.round(waited / 1000)} s): start \`foresight worker --queue ${url}\` on a host with Docker`);
    }
  }

  async function poll(): Promise<number> {
    const due = [...watched.values()].filter((w) => w.enqueued && !w.busy);
    const [workers] = await Promise.all([queue.getWorkersCount(), ...due.map((w) => exclusive(w, check))]);
    return workers;
  }

  // ioredis reports each failed reconnect here (ECONNREFUSED): the cause a warning names.
  queue.on('error', (err: Error) => {
    if (downSince !== null || polling) lastError = err.message;
  });

  const timer = setInterval(() => {
    if (watched.size === 0 && downSince === null) return;
    if (polling) {
      // Commands wait while ioredis reconnects: a poll still out at the next tick is Redis not answering.
      unanswered(polling.since);
      return;
    }
    const current = { since: Date.now() };
    polling = current;
    poll().then(
      (workers) => answered(workers),
      (err: unknown) => {
        lastError = err instanceof Error ? err.message : String(err);
        log.debug(`reading the jobs in flight: ${lastError}`);
        unanswered(current.since);
      },
    ).finally(() => {
      if (polling === current) polling = null;
    });
  }, Math.min(opts.pollMs, Math.max(100, opts.noWorkerWarnMs / 4)));
  timer.unref();

  return {
    wait(jobId, kind, id, enqueueJob) {
      const existing = watched.get(jobId);
      if (existing) return existing.promise;
      const w = { jobId, kind, id, enqueue: enqueueJob, enqueued: false, busy: false, requeues: 0 } as Watched;
      w.promise = new Promise((resolve, reject) => Object.assign(w, { resolve, reject }));
      watched.set(jobId, w);
      void exclusive(w, enqueue);
      return w.promise;
    },
    close() {
      clearInterval(timer);
      const err = new ForesightError(`the work queue at ${url} was closed while items were in flight`, { remedy: 'rerun: their jobs stay queued in Redis and the next run finds them' });
      for (const w of [...watched.values()]) settle(w, { err });
    },
  };
}
