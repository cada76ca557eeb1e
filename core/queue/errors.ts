import { ForesightError } from '../foundation/errors.ts';

/**
 * The environment failed (Docker daemon, disk, network, a lost container), not the item: a handler throws
 * this to have the item retried with backoff. It is never evidence about the item.
 */
export class InfraError extends ForesightError {
  constructor(message: string, opts: { remedy: string; cause?: unknown }) {
    super(message, { ...opts, external: true });
  }
}

/** Why an item has no result. */
export type JobFailureReason =
  /** InfraError on every attempt. */
  | 'infra'
  /** The worker died with it more often than allowed (SIGKILL, host lost). */
  | 'stalled'
  /** The job vanished from Redis more often than allowed (restarted without persistence, flushed, evicted). */
  | 'lost'
  /** The handler threw something else than InfraError: a bug, not retried. */
  | 'handler-error'
  /** No worker knows the kind, or the payload/result does not parse: the worker runs other code. */
  | 'mismatch';

/** An item that ended without a result; `external` unless the handler itself broke. */
export class JobFailedError extends ForesightError {
  constructor(
    readonly reason: JobFailureReason,
    readonly kind: string,
    readonly id: string,
    detail: string,
    remedy: string,
    cause?: unknown,
  ) {
    super(`${kind} ${id}: ${detail}`, { remedy, external: reason === 'infra' || reason === 'stalled' || reason === 'lost', cause });
  }
}

/** The failure as it crosses Redis (a job's failedReason is one string). */
export interface WireFailure {
  reason: JobFailureReason;
  message: string;
  remedy: string;
}

const PREFIX = 'foresight-failure:';

export function encodeFailure(f: WireFailure): string {
  return PREFIX + JSON.stringify(f);
}

/** A failedReason written by encodeFailure, or BullMQ's own (a stalled job, a lost lock): read as infrastructure. */
export function decodeFailure(text: string): WireFailure {
  if (text.startsWith(PREFIX)) {
    try {
      return JSON.parse(text.slice(PREFIX.length)) as WireFailure;
    } catch {
      /* fall through */
    }
  }
  const stalled = /stalled/i.test(text);
  return {
    reason: stalled ? 'stalled' : 'infra',
    message: text,
    remedy: stalled ? 'workers keep dying on this item (out of memory? killed?): check their logs and hosts, then rerun' : 'check the workers and Redis, then rerun',
  };
}
