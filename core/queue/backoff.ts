/** Retries of infrastructure failures: attempts in all, and the first wait (doubled each time). */
export interface RetryPolicy {
  attempts: number;
  backoffMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = { attempts: 3, backoffMs: 5_000 };

/** The wait before attempt `attempt + 1`. */
export function backoffDelay(policy: RetryPolicy, attempt: number): number {
  return policy.backoffMs * 2 ** (attempt - 1);
}
