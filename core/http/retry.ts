import { ForesightError } from '../foundation/errors.ts';
import type { Logger } from '../foundation/log.ts';

/**
 * Bounded HTTP requests against public services (Trac, OSV): a per-attempt timeout, a maximum body
 * size, and a bounded number of retries with exponential backoff on 429 / 408 / 5xx / network errors
 * that honours Retry-After. The cached GET client (fetch-cache.ts) is built on it; POSTs use it directly.
 */

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

/** Milliseconds a Retry-After header asks for (delta-seconds or an HTTP date), or null. */
export function retryAfterMs(value: string | null, now = Date.now()): number | null {
  if (!value) return null;
  const v = value.trim();
  if (/^\d+(\.\d+)?$/.test(v)) return Math.round(Number(v) * 1000);
  const at = Date.parse(v);
  return Number.isNaN(at) ? null : Math.max(0, at - now);
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
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

/**
 * fetch with bounded retries: 429, 408 and 5xx answers and network errors are retried with exponential
 * backoff (jittered), or after the server's Retry-After when it gives one. Other answers are returned as
 * they are. Throws a ForesightError (external) when the retries run out.
 */
export async function fetchWithRetry(url: string, init: RequestInit, opts: RetryOptions = {}): Promise<{ res: Response; body: string }> {
  const retries = opts.retries ?? 4;
  const base = opts.baseDelayMs ?? 500;
  const maxDelay = opts.maxDelayMs ?? 60_000;
  const timeout = opts.timeoutMs ?? 60_000;
  const maxBytes = opts.maxBytes ?? 64 * 1024 * 1024;
  const doFetch = opts.fetch ?? fetch;
  let lastProblem = '';
  for (let attempt = 0; ; attempt++) {
    const signals = [AbortSignal.timeout(timeout), ...(opts.signal ? [opts.signal] : [])];
    let status: number | null = null;
    let wait: number | null = null;
    try {
      const res = await doFetch(url, { ...init, signal: AbortSignal.any(signals) });
      status = res.status;
      if (!RETRYABLE(res.status)) return { res, body: await readBounded(res, maxBytes, url) };
      wait = retryAfterMs(res.headers.get('retry-after'));
      await res.body?.cancel();
      lastProblem = `HTTP ${res.status}`;
      if (wait !== null && wait > maxDelay) {
        throw new HttpError(url, res.status, `${url} answered ${res.status} and asks to wait ${Math.ceil(wait / 1000)} s`, 'rerun later; the HTTP cache keeps what was already fetched');
      }
    } catch (err) {
      if (err instanceof HttpError) throw err;
      if (isAbort(err, opts.signal)) throw err;
      lastProblem = err instanceof Error ? `${err.name === 'TimeoutError' ? `timed out after ${timeout} ms` : (err.cause as Error | undefined)?.message ?? err.message}` : String(err);
    }
    if (attempt >= retries) {
      throw new HttpError(url, status ?? 0, `${(init.method ?? 'GET').toUpperCase()} ${url} failed after ${attempt + 1} attempts: ${lastProblem}`, 'check the service URL and the network, then rerun (answers already fetched are cached)');
    }
    const backoff = Math.min(maxDelay, base * 2 ** attempt) * (0.75 + Math.random() * 0.5);
    const delayMs = Math.min(maxDelay, Math.round(wait ?? backoff));
    opts.log?.debug(`retrying ${url} in ${delayMs} ms (${lastProblem})`, { attempt: attempt + 1 });
    opts.onRetry?.({ url, attempt: attempt + 1, status, delayMs });
    await sleep(delayMs, opts.signal);
  }
}
