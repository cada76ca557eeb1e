import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { writeAtomic } from '../foundation/artifacts.ts';

/**
 * The one on-disk HTTP cache every network source shares (Trac and OSV through fetch-cache.ts,
 * GitHub's REST GETs through an octokit hook): one entry type, one file layout, one place that turns
 * an entry into conditional-request headers and refreshes it on a 304.
 *
 * An entry lives at `<dir>/<h[0..2]>/<h>.json`, h = sha256 of its key, so nothing of the key (URLs,
 * query strings) shows in file names and no folder grows huge. Writes are atomic (core/foundation/artifacts.ts
 * `writeAtomic`: unique temp file, fsync, rename). A missing, torn or foreign-shaped file is a miss:
 * the resource is fetched again (this is also what happens to caches written by older versions).
 */

export const CacheEntrySchema = z.object({
  /** The URL the answer came from, without userinfo. */
  url: z.string(),
  status: z.number().int(),
  etag: z.string().nullable(),
  lastModified: z.string().nullable(),
  /** The kept response headers (KEPT_HEADERS), lower-case names. */
  headers: z.record(z.string(), z.string()),
  /** ISO time of the last fetch or revalidation (maxAge counts from it). */
  storedAt: z.string(),
  /** The body as text (JSON text for JSON answers: parsed by whoever reads it). */
  body: z.string(),
});
export type CacheEntry = z.infer<typeof CacheEntrySchema>;

/**
 * Response headers worth keeping: the validators, the media type, and Link (GitHub paginates with it).
 * A whitelist, so nothing like Set-Cookie is ever written to disk.
 */
export const KEPT_HEADERS = ['etag', 'last-modified', 'content-type', 'link'] as const;

/** Response headers as fetch gives them (Headers) or as octokit does (a plain lower-case record). */
export type HeaderSource = Headers | Readonly<Record<string, string | number | undefined>>;

function header(h: HeaderSource, name: string): string | null {
  if (h instanceof Headers) return h.get(name);
  const v = h[name];
  return v === undefined ? null : String(v);
}

/** `url` without user:password@ (credentials must never reach a cache key or a cache file). */
export function stripUserinfo(url: string): string {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return url; // not absolute: nothing to strip
  }
  if (!u.username && !u.password) return url;
  u.username = '';
  u.password = '';
  return u.toString();
}

/**
 * The cache key of a request: method, URL without userinfo, and the Accept header when one is sent
 * (one URL may answer several media types). Credentials travel in other headers and never reach it.
 */
export function cacheKey(method: string, url: string, accept = ''): string {
  const key = `${method.toUpperCase()} ${stripUserinfo(url)}`;
  return accept ? `${key}\naccept: ${accept}` : key;
}

/** The headers that make a request conditional on the cached copy (none without one). */
export function conditionalHeaders(cached: CacheEntry | null): Record<string, string> {
  const h: Record<string, string> = {};
  if (cached?.etag) h['if-none-match'] = cached.etag;
  if (cached?.lastModified) h['if-modified-since'] = cached.lastModified;
  return h;
}

/** Whether the entry was fetched or revalidated less than `maxAgeMs` ago. */
export function isFresh(entry: CacheEntry, maxAgeMs: number, now = Date.now()): boolean {
  return now - Date.parse(entry.storedAt) < maxAgeMs;
}

/** An entry for an answer: validators and kept headers read from the response headers. */
export function responseEntry(url: string, status: number, headers: HeaderSource, body: string): CacheEntry {
  const kept: Record<string, string> = {};
  for (const name of KEPT_HEADERS) {
    const v = header(headers, name);
    if (v !== null) kept[name] = v;
  }
  return {
    url: stripUserinfo(url),
    status,
    etag: kept.etag ?? null,
    lastModified: kept['last-modified'] ?? null,
    headers: kept,
    storedAt: new Date().toISOString(),
    body,
  };
}

export class HttpCacheStore {
  constructor(readonly dir: string) {}

  /** Where the entry for `key` lives. */
  pathFor(key: string): string {
    const h = createHash('sha256').update(key).digest('hex');
    return join(this.dir, h.slice(0, 2), `${h}.json`);
  }

  /** The entry for `key`, or null when it is absent, torn or of another shape. */
  async read(key: string): Promise<CacheEntry | null> {
    let raw: unknown;
    try {
      raw = JSON.parse(await readFile(this.pathFor(key), 'utf8'));
    } catch {
      return null;
    }
    const parsed = CacheEntrySchema.safeParse(raw);
    return parsed.success ? parsed.data : null;
  }

  async write(key: string, entry: CacheEntry): Promise<void> {
    await writeAtomic(this.pathFor(key), JSON.stringify({ ...entry, url: stripUserinfo(entry.url) }));
  }

  /**
   * The server answered 304 to a request made conditional on `cached`: the body is unchanged; take the
   * validators it sent (a server may rotate them), restamp the entry and keep it.
   */
  async refresh(key: string, cached: CacheEntry, headers: HeaderSource): Promise<CacheEntry> {
    const etag = header(headers, 'etag') ?? cached.etag;
    const lastModified = header(headers, 'last-modified') ?? cached.lastModified;
    const kept = { ...cached.headers };
    if (etag !== null) kept.etag = etag;
    if (lastModified !== null) kept['last-modified'] = lastModified;
    const refreshed: CacheEntry = { ...cached, etag, lastModified, headers: kept, storedAt: new Date().toISOString() };
    await this.write(key, refreshed);
    return refreshed;
  }
}
