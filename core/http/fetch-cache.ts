import PQueue from 'p-queue';
import { cacheKey, conditionalHeaders, HttpCacheStore, isFresh, responseEntry, type CacheEntry } from './cache-store.ts';
import { fetchWithRetry, HttpError, type RetryOptions } from './retry.ts';

/**
 * Cached GETs against public trackers (Trac, OSV), on the shared HTTP cache store: every 200 answer is
 * kept with its validators (ETag, Last-Modified) and a rerun asks the server with If-None-Match /
 * If-Modified-Since, so an unchanged resource costs a 304 and no body. Requests are bounded
 * (retry.ts) and at most `concurrency` are in flight at once.
 */

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

/**
 * How an answer was served. miss: fetched in full; revalidated: the server answered 304; fresh: served
 * from disk within maxAgeMs; stale: the network failed, served from disk; uncached: a non-200 answer.
 */
export type CacheOutcome = 'miss' | 'revalidated' | 'fresh' | 'stale' | 'uncached';

/** An answer: the cache entry (stored or, for `uncached`, not) and how it was served. */
export type CachedResponse = CacheEntry & { cache: CacheOutcome };

export interface HttpCacheStats {
  requests: number;
  notModified: number;
  fresh: number;
  retries: number;
  stale: number;
}

export class HttpCache {
  readonly stats: HttpCacheStats = { requests: 0, notModified: 0, fresh: 0, retries: 0, stale: 0 };
  readonly store: HttpCacheStore;
  /** Requests in flight: at most `concurrency`. */
  private readonly limiter: PQueue;

  constructor(private readonly opts: HttpCacheOptions) {
    this.store = new HttpCacheStore(opts.dir);
    this.limiter = new PQueue({ concurrency: Math.max(1, opts.concurrency ?? 4) });
  }

  /** Where the entry for a GET of `url` with this Accept header lives. */
  pathFor(url: string, accept = ''): string {
    return this.store.pathFor(cacheKey('GET', url, accept));
  }

  /**
   * GET `url`. 200 answers are cached with their validators; a cached entry is revalidated with a
   * conditional request (or, with `maxAgeMs`, served without asking while younger than that). Other
   * statuses are returned uncached (the caller decides what a 404 means).
   */
  async get(url: string, req: { headers?: Record<string, string>; maxAgeMs?: number; signal?: AbortSignal } = {}): Promise<CachedResponse> {
    const headers: Record<string, string> = { ...(this.opts.userAgent ? { 'user-agent': this.opts.userAgent } : {}), ...req.headers };
    const key = cacheKey('GET', url, headers.accept ?? headers.Accept ?? '');
    const cached = await this.store.read(key);
    if (cached && req.maxAgeMs !== undefined && isFresh(cached, req.maxAgeMs)) {
      this.stats.fresh++;
      return { ...cached, cache: 'fresh' };
    }
    Object.assign(headers, conditionalHeaders(cached));

    let result: { res: Response; body: string };
    try {
      result = await this.limiter.add(() => {
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
        return { ...cached, cache: 'stale' };
      }
      throw err;
    }
    const { res, body } = result;
    if (res.status === 304 && cached) {
      this.stats.notModified++;
      return { ...(await this.store.refresh(key, cached, res.headers)), cache: 'revalidated' };
    }
    const entry = responseEntry(url, res.status, res.headers, body);
    if (res.status !== 200) return { ...entry, cache: 'uncached' };
    await this.store.write(key, entry);
    return { ...entry, cache: 'miss' };
  }
}
