import { exponentialBackoff, type Backoff } from '../http/retry.ts';

/** Retries of infrastructure failures: attempts in all, and the first wait (doubled each time). */
export interface RetryPolicy {
  attempts: number;
  backoffMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = { attempts: 3, backoffMs: 5_000 };

/** The policy's waits, for withRetry: the doubling BullMQ's 'exponential' backoff does on Redis, so a job waits alike in and out of process. */
export function policyBackoff(policy: RetryPolicy): Backoff {
  return exponentialBackoff(policy.backoffMs);
}
