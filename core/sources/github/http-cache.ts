import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { writeAtomic } from '../../artifacts.ts';
import { join } from 'node:path';
import type { Octokit } from '@octokit/rest';


/**
 * JSON documents on disk, one file per key (named by the key's sha256, so nothing of the key leaks into
 * file names). Writes are atomic: `<file>.<pid>-<n>.incomplete`, then rename. A missing or unreadable
 * file is a miss.
 */
export class JsonStore {
  constructor(readonly dir: string) {}

  file(key: string): string {
    return join(this.dir, `${createHash('sha256').update(key).digest('hex')}.json`);
  }

  async get<T>(key: string): Promise<T | null> {
    try {
      return JSON.parse(await readFile(this.file(key), 'utf8')) as T;
    } catch {
      return null;
    }
  }

  async put(key: string, value: unknown): Promise<void> {
    await writeAtomic(this.file(key), JSON.stringify(value));
  }
}

/** What is kept of a GET answer: validators, status, body, and the headers a caller reads (Link paginates). */
export interface CachedResponse {
  url: string;
  status: number;
  etag: string | null;
  lastModified: string | null;
  headers: Record<string, string>;
  body: unknown;
}

export interface CacheStats {
  /** GETs answered with a full body (200). */
  fetched: number;
  /** GETs answered 304 Not Modified and served from the cache (free on GitHub's rate limit). */
  notModified: number;
}

const KEPT_HEADERS = ['link', 'etag', 'last-modified', 'content-type'];

/** The cache key: method and URL only (credentials travel in headers and never reach it); userinfo stripped. */
export function cacheKey(method: string, url: string): string {
  const u = new URL(url);
  u.username = '';
  u.password = '';
  return `${method.toUpperCase()} ${u.toString()}`;
}

/** The HTTP status of an octokit error, if any. */
export function statusOf(err: unknown): number | undefined {
  const s = (err as { status?: unknown } | null)?.status;
  return typeof s === 'number' ? s : undefined;
}

/**
 * Conditional GETs through an on-disk cache, as the outermost `request` hook (so it sits around the
 * throttling and retry plugins and before authentication is added): a cached answer's ETag /
 * Last-Modified go out as If-None-Match / If-Modified-Since; a 304 (which @octokit/request throws) is
 * answered from the cache; a 200 carrying a validator replaces the entry.
 */
export function installHttpCache(octokit: Octokit, store: JsonStore, stats: CacheStats): void {
  octokit.hook.wrap('request', async (request, options) => {
    if (options.method !== 'GET') return request(options);
    const key = cacheKey('GET', octokit.request.endpoint.parse(options).url);
    const cached = await store.get<CachedResponse>(key);
    // The hooks inside this one are bound to this very options object (before-after-hook ignores what is
    // passed to `request`), so the validators go onto it rather than onto a copy.
    const headers = { ...options.headers };
    if (cached?.etag) headers['if-none-match'] = cached.etag;
    if (cached?.lastModified) headers['if-modified-since'] = cached.lastModified;
    options.headers = headers;
    try {
      const res = await request(options);
      stats.fetched++;
      const kept: Record<string, string> = {};
      for (const h of KEPT_HEADERS) if (res.headers[h] !== undefined) kept[h] = String(res.headers[h]);
      const etag = kept.etag ?? null;
      const lastModified = kept['last-modified'] ?? null;
      if (res.status === 200 && (etag || lastModified)) {
        const entry: CachedResponse = { url: res.url, status: res.status, etag, lastModified, headers: kept, body: res.data };
        await store.put(key, entry);
      }
      return res;
    } catch (err) {
      if (cached && statusOf(err) === 304) {
        stats.notModified++;
        return { url: cached.url, status: cached.status, headers: { ...cached.headers }, data: cached.body };
      }
      throw err;
    }
  });
}
