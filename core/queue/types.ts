import type { z } from 'zod';
import type { Logger } from '../foundation/log.ts';

/**
 * A kind of work item: its name and the zod schemas of its payload and result. The coordinator needs only
 * the kind (to submit and to parse what comes back); a worker needs its handler (JobHandler). Payloads
 * and results cross Redis as JSON, so both are parsed at each end.
 */
export interface JobKind<P, R> {
  /** `validate.chain`, `eval.instance`: letters, digits, dots and dashes. */
  readonly name: string;
  readonly payload: z.ZodType<P>;
  readonly result: z.ZodType<R>;
}

/** Progress a handler reports while it runs (states done of states planned, a short note). */
export interface JobProgress {
  done: number;
  total: number;
  note?: string;
}

/** What a handler is given besides its payload. */
export interface JobContext {
  /** The item's id (its content key). */
  id: string;
  /** 1 on the first try; more when an infrastructure failure was retried or the job came back stalled. */
  attempt: number;
  /** `host:pid` of the process running it. */
  worker: string;
  /** The worker's own data folder (clones, logs): never shared with the coordinator. */
  dataDir: string;
  /** Aborted when the worker shuts down: stop, remove containers, throw. */
  signal: AbortSignal;
  log: Logger;
  progress(p: JobProgress): Promise<void>;
  /**
   * A resource kept across this process's jobs under `key` (a repository's clone, its image cache, a pool
   * of warm containers): built by the first job that asks, disposed when the queue or worker closes.
   */
  shared<T>(key: string, create: () => Promise<T>, dispose?: (value: T) => Promise<void>): Promise<T>;
}

/**
 * The code that runs items of one kind. Its own outcome (a chain whose tests fail, an excluded chain) is a
 * result value; it throws InfraError when the environment failed (retried with backoff); anything else it
 * throws is a bug and fails the item without a retry.
 */
export interface JobHandler<P, R> {
  readonly kind: JobKind<P, R>;
  run(payload: P, ctx: JobContext): Promise<R>;
}

/** A progress event as the coordinator sees it: which item, on which worker. */
export interface ItemProgress extends JobProgress {
  id: string;
  worker: string;
}

export interface SubmitOptions {
  onProgress?: (p: ItemProgress) => void;
}

/**
 * Where items run: in this process (the default), or on workers pulling from a Redis queue. Submitting
 * an id twice runs the item once; both calls get its result.
 */
export interface WorkQueue {
  readonly mode: 'in-process' | 'redis';
  /** How many submits are worth keeping in flight: the local jobs, or unbounded when workers pull. */
  readonly capacity: number;
  submit<P, R>(kind: JobKind<P, R>, id: string, payload: P, opts?: SubmitOptions): Promise<R>;
  close(): Promise<void>;
}
