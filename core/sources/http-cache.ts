import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ForesightError } from '../errors.ts';
import type { Logger } from '../log.ts';

/**
 * A small on-disk cache for HTTP GETs against public trackers (Trac, OSV): every answer is kept with its
 * validators (ETag, Last-Modified) and a rerun asks the server with If-None-Match / If-Modified-Since,
 * so an unchanged resource costs a 304 and no body. Writes are atomic (temp file + rename). Requests are
 * bounded: a few at once, a per-request timeout, a maximum body size, and a bounded number of retries
 * with exponential backoff on 429 / 5xx / network errors that honours Retry-After.
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

export interface HttpCacheOptions extends RetryOptions {
  /** Folder holding the cached entries. */
  dir: string;
  /** Requests in flight at once. */
  concurrency?: number;
  /** Sent as User-Agent. */
  userAgent?: string;
  /** On a network failure after all retries, answer from a cached copy (with a warning) instead of failing. */
  staleOnError?: boolean;
}

export interface CachedResponse {
  url: string;
  status: number;
  body: string;
  /** miss: fetched in full; revalidated: the server answered 304; fresh: served from disk within maxAgeMs; stale: network failed, served from disk. */
  cache: 'miss' | 'revalidated' | 'fresh' | 'stale' | 'uncached';
  etag: string | null;
  lastModified: string | null;
  contentType: string | null;
}

export interface HttpCacheStats {
  requests: number;
  notModified: number;
  fresh: number;
  retries: number;
  stale: number;
}

interface Entry {
  url: string;
  status: number;
  etag: string | null;
  lastModified: string | null;
  contentType: string | null;
  storedAt: string;
  body: string;
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
      throw new HttpError(url, status ?? 0, `GET ${url} failed after ${attempt + 1} attempts: ${lastProblem}`, 'check the service URL and the network, then rerun (answers already fetched are cached)');
    }
    const backoff = Math.min(maxDelay, base * 2 ** attempt) * (0.75 + Math.random() * 0.5);
    const delayMs = Math.min(maxDelay, Math.round(wait ?? backoff));
    opts.log?.debug(`retrying ${url} in ${delayMs} ms (${lastProblem})`, { attempt: attempt + 1 });
    opts.onRetry?.({ url, attempt: attempt + 1, status, delayMs });
    await sleep(delayMs, opts.signal);
  }
}

/** A counting semaphore: at most `n` holders at once. */
class Limiter {
  private active = 0;
  private readonly waiting: Array<() => void> = [];
  constructor(private readonly n: number) {}
  async run<T>(fn: () => Promise<T>): Promise<T> {
    if (this.active >= this.n) await new Promise<void>((resolve) => this.waiting.push(resolve));
    this.active++;
    try {
      return await fn();
    } finally {
      this.active--;
      this.waiting.shift()?.();
    }
  }
}

/** Shared with every other artifact writer. */
import { writeAtomic as writeFileAtomic } from '../artifacts.ts';

export { writeFileAtomic };

export class HttpCache {
  readonly stats: HttpCacheStats = { requests: 0, notModified: 0, fresh: 0, retries: 0, stale: 0 };
  private readonly limiter: Limiter;

  constructor(private readonly opts: HttpCacheOptions) {
    this.limiter = new Limiter(Math.max(1, opts.concurrency ?? 4));
  }

  /** Where the entry for a request lives: sharded by the hash of URL + Accept. */
  pathFor(url: string, accept = ''): string {
    const h = createHash('sha256').update(`${url}\n${accept}`).digest('hex');
    return join(this.opts.dir, h.slice(0, 2), `${h}.json`);
  }

  private async load(path: string): Promise<Entry | null> {
    try {
      const e = JSON.parse(await readFile(path, 'utf8')) as Entry;
      return typeof e.body === 'string' && typeof e.status === 'number' ? e : null;
    } catch {
      return null; // absent or torn: refetch
    }
  }

  /**
   * GET `url`. 200 answers are cached with their validators; a cached entry is revalidated with a
   * conditional request (or, with `maxAgeMs`, served without asking while younger than that). Other
   * statuses are returned uncached (the caller decides what a 404 means).
   */
  async get(url: string, req: { headers?: Record<string, string>; maxAgeMs?: number; signal?: AbortSignal } = {}): Promise<CachedResponse> {
    const headers: Record<string, string> = { ...(this.opts.userAgent ? { 'user-agent': this.opts.userAgent } : {}), ...req.headers };
    const accept = headers.accept ?? headers.Accept ?? '';
    const path = this.pathFor(url, accept);
    const cached = await this.load(path);
    if (cached && req.maxAgeMs !== undefined && Date.now() - Date.parse(cached.storedAt) < req.maxAgeMs) {
      this.stats.fresh++;
      return this.answer(cached, 'fresh');
    }
    if (cached?.etag) headers['if-none-match'] = cached.etag;
    if (cached?.lastModified) headers['if-modified-since'] = cached.lastModified;

    let result: { res: Response; body: string };
    try {
      result = await this.limiter.run(() => {
        this.stats.requests++;
        return fetchWithRetry(url, { method: 'GET', headers }, {
          ...this.opts,
          signal: req.signal ?? this.opts.signal,
          onRetry: (info) => {
            this.stats.retries++;
            this.opts.onRetry?.(info);
          },
        });
      });
    } catch (err) {
      if (cached && (this.opts.staleOnError ?? true) && err instanceof HttpError) {
        this.stats.stale++;
        this.opts.log?.warn(`${err.message}; using the copy cached ${cached.storedAt}`);
        return this.answer(cached, 'stale');
      }
      throw err;
    }
    const { res, body } = result;
    if (res.status === 304 && cached) {
      this.stats.notModified++;
      const refreshed: Entry = {
        ...cached,
        etag: res.headers.get('etag') ?? cached.etag,
        lastModified: res.headers.get('last-modified') ?? cached.lastModified,
        storedAt: new Date().toISOString(),
      };
      await writeFileAtomic(path, JSON.stringify(refreshed));
      return this.answer(refreshed, 'revalidated');
    }
    const entry: Entry = {
      url,
      status: res.status,
      etag: res.headers.get('etag'),
      lastModified: res.headers.get('last-modified'),
      contentType: res.headers.get('content-type'),
      storedAt: new Date().toISOString(),
      body,
    };
    if (res.status === 200) {
      await writeFileAtomic(path, JSON.stringify(entry));
      return this.answer(entry, 'miss');
    }
    return this.answer(entry, 'uncached');
  }

  private answer(e: Entry, cache: CachedResponse['cache']): CachedResponse {
    return { url: e.url, status: e.status, body: e.body, cache, etag: e.etag, lastModified: e.lastModified, contentType: e.contentType };
  }
}
