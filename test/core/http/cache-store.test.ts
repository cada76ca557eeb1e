/** The shared on-disk HTTP cache store: keys, file layout, torn entries, the 304 refresh, JSON documents. */
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { cacheKey, conditionalHeaders, HttpCacheStore, isFresh, responseEntry, stripUserinfo, type CacheEntry } from '../../../core/http/cache-store.ts';
import { JsonDocuments } from '../../../core/http/documents.ts';

describe('HTTP cache store', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'foresight-cachestore-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  const entry = (over: Partial<CacheEntry> = {}): CacheEntry => ({
    url: 'https://api.example.com/x',
    status: 200,
    etag: '"1"',
    lastModified: null,
    headers: { etag: '"1"' },
    storedAt: '2024-01-01T00:00:00.000Z',
    body: '{"a":1}',
    ...over,
  });

  it('keys by method and URL, without credentials embedded in the URL', () => {
    expect(cacheKey('get', 'https://user:secret@api.example.com/repos/a/b/issues/1?page=2')).toBe('GET https://api.example.com/repos/a/b/issues/1?page=2');
    expect(cacheKey('GET', 'https://api.example.com/x', 'application/json')).toBe('GET https://api.example.com/x\naccept: application/json');
    expect(stripUserinfo('https://token@ghe.example.com/api/v3')).toBe('https://ghe.example.com/api/v3');
    expect(stripUserinfo('https://ghe.example.com/api/v3')).toBe('https://ghe.example.com/api/v3');
    expect(stripUserinfo('not a url')).toBe('not a url');
  });

  it('writes atomically under sharded hashed names and treats a torn, absent or foreign file as a miss', async () => {
    const store = new HttpCacheStore(join(dir, 'http'));
    await store.write('GET https://api.github.com/x', entry());
    expect(await store.read('GET https://api.github.com/x')).toEqual(entry());
    const shards = await readdir(join(dir, 'http'));
    expect(shards).toHaveLength(1);
    expect(shards[0]).toMatch(/^[0-9a-f]{2}$/);
    const names = await readdir(join(dir, 'http', shards[0]!));
    expect(names).toEqual([expect.stringMatching(new RegExp(`^${shards[0]}[0-9a-f]{62}\\.json$`))]);
    expect(store.pathFor('GET https://api.github.com/x')).toBe(join(dir, 'http', shards[0]!, names[0]!));

    await writeFile(store.pathFor('GET https://api.github.com/x'), '{"trunc');
    expect(await store.read('GET https://api.github.com/x')).toBeNull();
    await writeFile(store.pathFor('GET https://api.github.com/x'), JSON.stringify({ url: 'x', status: 200, body: { a: 1 } }));
    expect(await store.read('GET https://api.github.com/x')).toBeNull();
    expect(await store.read('never stored')).toBeNull();
  });

  it('never writes userinfo into an entry', async () => {
    const store = new HttpCacheStore(dir);
    await store.write('k', entry({ url: 'https://user:pw-secret@api.example.com/x' }));
    expect((await store.read('k'))!.url).toBe('https://api.example.com/x');
    expect(await readFile(store.pathFor('k'), 'utf8')).not.toContain('pw-secret');
    expect(responseEntry('https://user:pw-secret@h.example/y', 200, new Headers(), '').url).toBe('https://h.example/y');
  });

  it('makes requests conditional on the cached validators', () => {
    expect(conditionalHeaders(null)).toEqual({});
    expect(conditionalHeaders(entry())).toEqual({ 'if-none-match': '"1"' });
    expect(conditionalHeaders(entry({ etag: null, lastModified: 'Wed, 01 Jan 2020 00:00:00 GMT' }))).toEqual({ 'if-modified-since': 'Wed, 01 Jan 2020 00:00:00 GMT' });
  });

  it('reads validators and kept headers from fetch Headers and from octokit header records alike', () => {
    const fromFetch = responseEntry('https://h.example/a', 200, new Headers({ ETag: '"e"', 'Last-Modified': 'lm', Link: '<n>; rel="next"', 'Set-Cookie': 'c=1', 'X-Other': 'o' }), 'b');
    const fromOctokit = responseEntry('https://h.example/a', 200, { etag: '"e"', 'last-modified': 'lm', link: '<n>; rel="next"', 'set-cookie': 'c=1', 'x-ratelimit-remaining': 4999 }, 'b');
    for (const e of [fromFetch, fromOctokit]) {
      expect(e).toMatchObject({ etag: '"e"', lastModified: 'lm', headers: { etag: '"e"', 'last-modified': 'lm', link: '<n>; rel="next"' }, body: 'b' });
      expect(Object.keys(e.headers).sort()).toEqual(['etag', 'last-modified', 'link']);
    }
  });

  it('refreshes an entry on a 304: new validators when sent, the old ones otherwise, a new storedAt', async () => {
    const store = new HttpCacheStore(dir);
    const old = entry({ lastModified: 'lm1', headers: { etag: '"1"', 'last-modified': 'lm1', link: '<n>' } });
    await store.write('k', old);
    const kept = await store.refresh('k', old, {});
    expect(kept).toMatchObject({ etag: '"1"', lastModified: 'lm1', body: old.body, headers: old.headers });
    expect(kept.storedAt > old.storedAt).toBe(true);
    const rotated = await store.refresh('k', kept, new Headers({ etag: '"2"' }));
    expect(rotated).toMatchObject({ etag: '"2"', lastModified: 'lm1', headers: { etag: '"2"', 'last-modified': 'lm1', link: '<n>' } });
    expect(await store.read('k')).toEqual(rotated);
    expect(isFresh(rotated, 60_000)).toBe(true);
    expect(isFresh(old, 60_000)).toBe(false);
  });

  it('keeps JSON documents by key on the same store, in the same entry shape', async () => {
    const store = new HttpCacheStore(dir);
    const docs = new JsonDocuments(store, 'https://x:tok@api.example.com/graphql');
    await docs.put('graphql q1', { page: [1, 2] });
    expect(await docs.get('graphql q1')).toEqual({ page: [1, 2] });
    expect(await store.read('graphql q1')).toMatchObject({ url: 'https://api.example.com/graphql', status: 200, body: '{"page":[1,2]}' });
    expect(await docs.get('graphql q2')).toBeNull();
    await store.write('graphql q3', entry({ body: 'not json' }));
    expect(await docs.get('graphql q3')).toBeNull();
  });
});
