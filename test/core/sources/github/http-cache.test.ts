/**
 * GitHub's conditional GETs through the shared HTTP cache store (the octokit request hook of
 * client.ts), against a server on 127.0.0.1: entries in the store's one shape with the data as JSON
 * text, 304s answered from them, torn entries refetched, and no token anywhere on disk.
 */
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { cacheKey, CacheEntrySchema, HttpCacheStore } from '../../../../core/http/cache-store.ts';
import { silentLogger } from '../../../../core/foundation/log.ts';
import { createGithubClient, type GithubClient } from '../../../../core/sources/github/client.ts';

const TOKEN = ['ghp', 'cacheTestToken0123456789'].join('_');

interface Seen {
  url: string;
  headers: IncomingHttpHeaders;
  status: number;
}

describe('GitHub HTTP cache (octokit hook on the shared store)', () => {
  let dir: string;
  let server: Server;
  let base: string;
  let seen: Seen[];
  /** What the server answers for /repos/acme/widgets: its body, and whether it sends an ETag. */
  let doc: { body: unknown; etag: boolean };
  let client: GithubClient;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'foresight-ghcache-'));
    seen = [];
    doc = { body: { full_name: 'acme/widgets', stars: 1 }, etag: true };
    server = createServer((req, res) => {
      const text = JSON.stringify(doc.body);
      const etag = `"${Buffer.from(text).toString('base64url').slice(-12)}"`;
      const headers: Record<string, string> = { 'content-type': 'application/json; charset=utf-8', link: '<http://x/?page=2>; rel="next"' };
      if (doc.etag) headers.etag = etag;
      const status = doc.etag && req.headers['if-none-match'] === etag ? 304 : 200;
      seen.push({ url: req.url ?? '', headers: req.headers, status });
      res.writeHead(status, headers).end(status === 304 ? undefined : text);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    client = createGithubClient({ baseUrl: base, token: TOKEN, cacheDir: dir, log: silentLogger, secondMs: 1, maxRetries: 0, graphqlSpacingMs: 0 });
  });
  afterEach(async () => {
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
    await rm(dir, { recursive: true, force: true });
  });

  const get = () => client.octokit.request('GET /repos/{owner}/{repo}', { owner: 'acme', repo: 'widgets' });
  const entryPath = () => new HttpCacheStore(join(dir, 'http')).pathFor(cacheKey('GET', `${base}/repos/acme/widgets`, 'application/vnd.github.v3+json'));

  it('stores a 200 with a validator as a cache entry whose body is the JSON text, and answers a 304 from it', async () => {
    const first = await get();
    expect(first.data).toEqual(doc.body);
    const entry = CacheEntrySchema.parse(JSON.parse(await readFile(entryPath(), 'utf8')));
    expect(entry).toMatchObject({ url: `${base}/repos/acme/widgets`, status: 200, body: JSON.stringify(doc.body) });
    expect(entry.etag).toMatch(/^"/);
    expect(entry.headers.link).toBe('<http://x/?page=2>; rel="next"');

    const again = await get();
    expect(seen.map((s) => s.status)).toEqual([200, 304]);
    expect(seen[1]!.headers['if-none-match']).toBe(entry.etag);
    expect(seen[1]!.headers.authorization).toBe(`token ${TOKEN}`);
    expect(again.status).toBe(200);
    expect(again.data).toEqual(doc.body);
    expect(again.headers.link).toBe('<http://x/?page=2>; rel="next"');
    expect(client.stats).toEqual({ fetched: 1, notModified: 1 });
  });

  it('refetches in full when the entry is torn, and caches nothing without a validator', async () => {
    await get();
    await writeFile(entryPath(), '{"url":"', 'utf8');
    doc.body = { full_name: 'acme/widgets', stars: 2 };
    expect((await get()).data).toEqual(doc.body);
    expect(seen[1]!.headers['if-none-match']).toBeUndefined();

    doc.etag = false;
    await rm(entryPath());
    await get();
    await expect(readFile(entryPath())).rejects.toMatchObject({ code: 'ENOENT' });
    await get();
    expect(seen.slice(2).map((s) => [s.status, s.headers['if-none-match']])).toEqual([[200, undefined], [200, undefined]]);
  });

  it('keeps the token out of cache keys, file names and entries', async () => {
    await get();
    await client.pages.put('graphql page', { nodes: [1] });
    const files: string[] = [];
    for (const e of await readdir(dir, { recursive: true, withFileTypes: true })) if (e.isFile()) files.push(join(e.parentPath, e.name));
    expect(files.length).toBe(2);
    for (const f of files) {
      expect(f).not.toContain(TOKEN);
      expect(await readFile(f, 'utf8')).not.toContain(TOKEN);
      expect(CacheEntrySchema.safeParse(JSON.parse(await readFile(f, 'utf8'))).success).toBe(true);
    }
    expect(await client.pages.get('graphql page')).toEqual({ nodes: [1] });
  });
});
