import pRetry from 'p-retry';
import { ForesightError } from '../foundation/errors.ts';
import type { Logger } from '../foundation/log.ts';

/**
 * Retries, in one place: `withRetry` (on p-retry) runs an attempt until it succeeds, the failure is not
 * worth another attempt, or the attempts run out, waiting between attempts as the failure's Retry-After
 * asks or else as the caller's backoff says. Every retry loop of the tree goes through it: HTTP (the
 * fetch below, GitHub, the hub, the LLM endpoint), the in-process work queue and container cleanup.
 *
 * Below it, bounded HTTP requests against public services (Trac, OSV): a per-attempt timeout, a maximum
 * body size, and bounded retries on 429 / 408 / 5xx / network errors. The cached GET client
 * (fetch-cache.ts) is built on them; POSTs use them directly.
 */

/** The wait before retry `n` (1 for the first retry) when the failure asks for none. */
export type Backoff = (retry: number) => number;

/** `baseMs`, doubled per retry, at most `maxMs`, each wait spread by ±`jitter` (a fraction) so clients do not retry in step. */
export function exponentialBackoff(baseMs: number, opts: { maxMs?: number; jitter?: number } = {}): Backoff {
  const maxMs = opts.maxMs ?? Number.POSITIVE_INFINITY;
  const jitter = opts.jitter ?? 0;
  return (n) => Math.min(maxMs, Math.min(maxMs, baseMs * 2 ** (n - 1)) * (1 + jitter * (2 * Math.random() - 1)));
}

export interface WithRetryOptions {
  /** Attempts in all, the first included. */
  attempts: number;
  backoff: Backoff;
  /** Whether a failure is worth another attempt (default: every one). */
  retryable?: (err: unknown) => boolean;
  /** Longest Retry-After honoured: a failure asking for longer is not retried (default: no limit). */
  maxRetryAfterMs?: number;
  /** Ends a wait at once (rejecting with the signal's reason); no retry starts after it. */
  signal?: AbortSignal;
  /** Told before each wait; `attempt` is the one that failed (1-based). Awaited. */
  onRetry?: (info: { error: unknown; attempt: number; delayMs: number }) => void | Promise<void>;
  /** The wait itself (tests shrink or fake it). */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
}

/**
 * `run(attempt)` with retries. Rejects with the last failure as it was thrown (or with the signal's reason
 * when it aborts a wait), so callers word their own "gave up" errors. As p-retry does, a TypeError that
 * is not a network error is a bug, never retried.
 */
export function withRetry<T>(run: (attempt: number) => Promise<T>, opts: WithRetryOptions): Promise<T> {
  const sleepFor = opts.sleep ?? sleep;
  return pRetry(run, {
    retries: Math.max(0, opts.attempts - 1),
    // The waits are ours (in shouldRetry): p-retry's own backoff cannot follow a server's Retry-After.
    minTimeout: 0,
    // No signal for p-retry: it would turn an attempt that succeeded under an abort into a failure.
    shouldRetry: async ({ error, attemptNumber }) => {
      if (opts.signal?.aborted || (opts.retryable && !opts.retryable(error))) return false;
      const asked = retryAfterOf(error);
      if (asked !== null && opts.maxRetryAfterMs !== undefined && asked > opts.maxRetryAfterMs) return false;
      const delayMs = Math.max(0, Math.round(asked ?? opts.backoff(attemptNumber)));
      await opts.onRetry?.({ error, attempt: attemptNumber, delayMs });
      await sleepFor(delayMs, opts.signal);
      return true;
    },
  });
}

/**
 * Milliseconds a Retry-After value asks for (delta-seconds or an HTTP date, RFC 9110 §10.2.3), or null
 * when absent or unreadable. A date must hold letters: Date.parse reads "-1" as a year.
 */
export function retryAfterMs(value: string | null | undefined, now = Date.now()): number | null {
  if (!value) return null;
  const v = value.trim();
  if (/^\d+(\.\d+)?$/.test(v)) return Math.round(Number(v) * 1000);
  const at = Date.parse(v);
  if (!/[a-z]/i.test(v) || Number.isNaN(at)) return null;
  return Math.max(0, at - now);
}

/**
 * The wait a failure's response asks for, or null: Retry-After, or first the non-standard Retry-After-Ms
 * (OpenAI-compatible servers send it). Read from the error's `headers` (the openai SDK's APIError) or its
 * `response.headers` (octokit's RequestError, RetryableStatusError), as a Headers or a plain record.
 */
export function retryAfterOf(err: unknown, now = Date.now()): number | null {
  const e = err as { headers?: unknown; response?: { headers?: unknown } } | null;
  const headers = (typeof e === 'object' && e !== null && (e.headers ?? e.response?.headers)) || null;
  if (!headers || typeof headers !== 'object') return null;
  const get = (name: string): string | null => {
    if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name);
    const v = (headers as Record<string, unknown>)[name];
    return typeof v === 'string' || typeof v === 'number' ? String(v) : null;
  };
  const ms = get('retry-after-ms')?.trim();
  if (ms && /^\d+(\.\d+)?$/.test(ms)) return Math.round(Number(ms));
  return retryAfterMs(get('retry-after'), now);
}

/** An answer worth another attempt, thrown inside withRetry so its Retry-After is seen; give the response back when retries end. */
export class RetryableStatusError extends Error {
  constructor(readonly response: Response) {
    super(`HTTP ${response.status}`);
  }
}

/** Resolves after `ms`, or rejects with the signal's reason when it aborts first. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const t = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(t);
      reject(signal!.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

export interface RetryOptions {
  /** Retries after the first attempt (so `retries + 1` attempts in all). */
  retries?: number;
  /** First backoff delay; doubles each retry, with jitter. */
  baseDelayMs?: number;
  /** Longest single wait, for backoff and Retry-After alike. A longer Retry-After fails at once. */
  maxDelayMs?: number;
  /** Per-attempt timeout. */
  timeoutMs?: number;
  /** Largest accepted body. */
  maxBytes?: number;
  log?: Logger;
  signal?: AbortSignal;
  /** Injected for tests; defaults to the global fetch. */
  fetch?: typeof fetch;
  /** Called on every retry (for counters and tests). */
  onRetry?: (info: { url: string; attempt: number; status: number | null; delayMs: number }) => void;
}

const RETRYABLE = (status: number) => status === 429 || status === 408 || (status >= 500 && status <= 599);

export class HttpError extends ForesightError {
  constructor(
    readonly url: string,
    readonly status: number,
    message: string,
    remedy: string,
  ) {
    super(message, { remedy, external: true });
  }
}

async function readBounded(res: Response, maxBytes: number, url: string): Promise<string> {
  const declared = Number(res.headers.get('content-length') ?? NaN);
  if (declared > maxBytes) {
    await res.body?.cancel();
    throw new HttpError(url, res.status, `${url} answered ${declared} bytes, more than the ${maxBytes} allowed`, 'raise the size limit or narrow the request');
  }
  if (!res.body) return '';
  const chunks: Uint8Array[] = [];
  let total = 0;
  const reader = res.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel();
      throw new HttpError(url, res.status, `${url} answered more than the ${maxBytes} bytes allowed`, 'raise the size limit or narrow the request');
    }
    chunks.push(value);
  }
  // Keep a BOM if the server sent one: parsers of the body decide what it means.
  return new TextDecoder('utf-8', { ignoreBOM: true }).decode(Buffer.concat(chunks));
}

function isAbort(err: unknown, signal?: AbortSignal): boolean {
  return Boolean(signal?.aborted) && (err === signal?.reason || (err instanceof Error && err.name === 'AbortError'));
}

/** What went wrong with one attempt, in a few words. */
function problemOf(err: unknown, timeoutMs: number): string {
  if (err instanceof RetryableStatusError) return `HTTP ${err.response.status}`;
  if (!(err instanceof Error)) return String(err);
  return err.name === 'TimeoutError' ? `timed out after ${timeoutMs} ms` : ((err.cause as Error | undefined)?.message ?? err.message);
}

/**
 * fetch with bounded retries: 429, 408 and 5xx answers and network errors are retried with exponential
 * backoff (jittered), or after the server's Retry-After when it gives one. Other answers are returned as
 * they are. Throws a ForesightError (external) when the retries run out.
 */
export async function fetchWithRetry(url: string, init: RequestInit, opts: RetryOptions = {}): Promise<{ res: Response; body: string }> {
  const retries = opts.retries ?? 4;
  const maxDelay = opts.maxDelayMs ?? 60_000;
  const timeout = opts.timeoutMs ?? 60_000;
  const maxBytes = opts.maxBytes ?? 64 * 1024 * 1024;
  const doFetch = opts.fetch ?? fetch;
  let attempts = 0;
  try {
    return await withRetry(
      async (attempt) => {
        attempts = attempt;
        const signals = [AbortSignal.timeout(timeout), ...(opts.signal ? [opts.signal] : [])];
        const res = await doFetch(url, { ...init, signal: AbortSignal.any(signals) });
        if (!RETRYABLE(res.status)) return { res, body: await readBounded(res, maxBytes, url) };
        await res.body?.cancel();
        throw new RetryableStatusError(res);
      },
      {
        attempts: retries + 1,
        backoff: exponentialBackoff(opts.baseDelayMs ?? 500, { maxMs: maxDelay, jitter: 0.25 }),
        maxRetryAfterMs: maxDelay,
        // An oversized body is refused, not retried; an abort of ours ends everything.
        retryable: (err) => !(err instanceof HttpError) && !isAbort(err, opts.signal),
        signal: opts.signal,
        onRetry: ({ error, attempt, delayMs }) => {
          opts.log?.debug(`retrying ${url} in ${delayMs} ms (${problemOf(error, timeout)})`, { attempt });
          opts.onRetry?.({ url, attempt, status: error instanceof RetryableStatusError ? error.response.status : null, delayMs });
        },
      },
    );
  } catch (err) {
    if (err instanceof HttpError || isAbort(err, opts.signal)) throw err;
    const status = err instanceof RetryableStatusError ? err.response.status : 0;
    const wait = retryAfterOf(err);
    if (wait !== null && wait > maxDelay) {
      throw new HttpError(url, status, `${url} answered ${status} and asks to wait ${Math.ceil(wait / 1000)} s`, 'rerun later; the HTTP cache keeps what was already fetched');
    }
    throw new HttpError(url, status, `${(init.method ?? 'GET').toUpperCase()} ${url} failed after ${attempts} attempts: ${problemOf(err, timeout)}`, 'check the service URL and the network, then rerun (answers already fetched are cached)');
  }
}
