import type { Logger } from '../../core/foundation/log.ts';

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

/**
 * Seconds to wait from a Retry-After value (delta-seconds or an HTTP date, RFC 9110 §10.2.3), or null
 * when absent or unreadable.
 */
export function parseRetryAfter(value: string | null, now: number = Date.now()): number | null {
  if (value === null) return null;
  const v = value.trim();
  if (/^\d+$/.test(v)) return Number(v);
  const at = Date.parse(v);
  if (!/[a-z]/i.test(v) || Number.isNaN(at)) return null;
  return Math.max(0, Math.ceil((at - now) / 1000));
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
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
  const maxWaitSec = opts.maxWaitSec ?? 120;
  const base = opts.baseDelayMs ?? 1000;
  return async (input, init) => {
    for (let attempt = 1; ; attempt++) {
      const res = await inner(input, init);
      if (res.status !== 429 || attempt >= attempts) return res;
      const asked = parseRetryAfter(res.headers.get('retry-after'));
      if (asked !== null && asked > maxWaitSec) return res;
      const waitMs = asked !== null ? asked * 1000 : base * 2 ** (attempt - 1);
      // Free the connection before waiting.
      await res.body?.cancel().catch(() => undefined);
      opts.log.warn(`the hub answered 429 (rate limit) to ${describe(input, init)}: retrying in ${(waitMs / 1000).toFixed(1)} s (try ${attempt + 1} of ${attempts})`);
      await sleep(waitMs, opts.signal ?? init?.signal ?? undefined);
    }
  };
}
