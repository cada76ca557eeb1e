import type { Logger } from '../../core/foundation/log.ts';
import { exponentialBackoff, RetryableStatusError, retryAfterMs, withRetry } from '../../core/http/retry.ts';

/**
 * `fetch` for the hub with 429 retried. @huggingface/hub 2.17.5 retries nothing on the hub's own API
 * (only its Xet downloads handle 429), so every call it makes goes through this wrapper (`fetch:` option).
 * Only 429 is retried: the hub refused the request without doing it. A 5xx on a commit may have landed,
 * and a blind retry would then fail on its own parent commit.
 */
export interface HubFetchOptions {
  log: Logger;
  /** The fetch to wrap (default: the global one). */
  fetch?: typeof fetch;
  /** Tries in all, the first included (default 5). */
  attempts?: number;
  /** A Retry-After longer than this is not waited for: the 429 is returned (default 120 s). */
  maxWaitSec?: number;
  /** Backoff without Retry-After: base, then doubled per try (default 1000 ms). */
  baseDelayMs?: number;
  signal?: AbortSignal;
}

/** Whole seconds a Retry-After value asks for (core/http/retry.ts reads it), or null when absent or unreadable. */
export function parseRetryAfter(value: string | null, now: number = Date.now()): number | null {
  const ms = retryAfterMs(value, now);
  return ms === null ? null : Math.ceil(ms / 1000);
}

function describe(input: Parameters<typeof fetch>[0], init?: RequestInit): string {
  const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
  const method = init?.method ?? (typeof input === 'object' && 'method' in input ? input.method : 'GET');
  // The path only: an upload URL's query may carry a signature.
  return `${method} ${new URL(url).pathname}`;
}

export function hubFetch(opts: HubFetchOptions): typeof fetch {
  const inner = opts.fetch ?? fetch;
  const attempts = opts.attempts ?? 5;
  return async (input, init) => {
    try {
      return await withRetry(
        async () => {
          const res = await inner(input, init);
          if (res.status === 429) throw new RetryableStatusError(res);
          return res;
        },
        {
          attempts,
          backoff: exponentialBackoff(opts.baseDelayMs ?? 1000),
          maxRetryAfterMs: (opts.maxWaitSec ?? 120) * 1000,
          retryable: (err) => err instanceof RetryableStatusError,
          signal: opts.signal ?? init?.signal ?? undefined,
          onRetry: async ({ error, attempt, delayMs }) => {
            // Free the connection before waiting.
            await (error as RetryableStatusError).response.body?.cancel().catch(() => undefined);
            opts.log.warn(`the hub answered 429 (rate limit) to ${describe(input, init)}: retrying in ${(delayMs / 1000).toFixed(1)} s (try ${attempt + 1} of ${attempts})`);
          },
        },
      );
    } catch (err) {
      // Out of tries, or asked to wait too long: the caller words the 429.
      if (err instanceof RetryableStatusError) return err.response;
      throw err;
    }
  };
}
