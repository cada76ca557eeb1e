import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Logger } from '../../../core/foundation/log.ts';
import { silentLogger } from '../../../core/foundation/log.ts';
import { cacheKey, CacheEntrySchema } from '../../../core/http/cache-store.ts';
import { HttpCache } from '../../../core/http/fetch-cache.ts';
import { retryAfterMs } from '../../../core/http/retry.ts';

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

async function serve(handler: Handler): Promise<{ url: string; server: Server }> {
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}
const stop = (s: Server) =>
  new Promise<void>((resolve) => {
    s.close(() => resolve());
    s.closeAllConnections();
  });

describe('HttpCache', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'foresight-http-'));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));
  const cache = (name: string, extra: Partial<ConstructorParameters<typeof HttpCache>[0]> = {}) =>
    new HttpCache({ dir: join(dir, name), baseDelayMs: 5, maxDelayMs: 2_000, timeoutMs: 2_000, log: silentLogger, ...extra });

  it('reads Retry-After as seconds or an HTTP date', () => {
    expect(retryAfterMs('3')).toBe(3000);
    expect(retryAfterMs(new Date(10_000).toUTCString(), 4_000)).toBe(6000);
    expect(retryAfterMs('soon')).toBeNull();
    expect(retryAfterMs(null)).toBeNull();
  });

  it('revalidates with If-Modified-Since when the server gives only Last-Modified', async () => {
    const seen: Array<string | undefined> = [];
    const { url, server } = await serve((req, res) => {
      seen.push(req.headers['if-modified-since']);
      if (req.headers['if-modified-since']) return void res.writeHead(304).end();
      res.writeHead(200, { 'last-modified': 'Wed, 01 Jan 2020 00:00:00 GMT' }).end('hello');
    });
    const c = cache('lm');
    expect((await c.get(`${url}/a`)).cache).toBe('miss');
    const again = await c.get(`${url}/a`);
    expect(again).toMatchObject({ cache: 'revalidated', body: 'hello', status: 200 });
    expect(seen).toEqual([undefined, 'Wed, 01 Jan 2020 00:00:00 GMT']);
    // Within maxAgeMs no request at all.
    expect((await c.get(`${url}/a`, { maxAgeMs: 60_000 })).cache).toBe('fresh');
    expect(seen).toHaveLength(2);
    await stop(server);
  });

  it('retries 429 after the Retry-After date, and gives up at once when asked to wait too long', async () => {
    let n = 0;
    const { url, server } = await serve((req, res) => {
      n++;
      if (req.url === '/long') return void res.writeHead(429, { 'retry-after': '3600' }).end();
      if (n === 1) return void res.writeHead(429, { 'retry-after': new Date(Date.now() + 200).toUTCString() }).end();
      res.writeHead(200).end('ok');
    });
    const c = cache('429');
    expect((await c.get(`${url}/x`)).body).toBe('ok');
    expect(c.stats.retries).toBe(1);
    await expect(c.get(`${url}/long`)).rejects.toMatchObject({ external: true, message: expect.stringMatching(/asks to wait 3600 s/) });
    await stop(server);
  });

  it('bounds the body size and the time per attempt', async () => {
    const { url, server } = await serve((req, res) => {
      if (req.url === '/big') return void res.writeHead(200).end('x'.repeat(2000));
      // never answers
    });
    const c = cache('bounds', { maxBytes: 1000, timeoutMs: 100, retries: 1 });
    await expect(c.get(`${url}/big`)).rejects.toThrow(/more than the 1000 bytes allowed/);
    await expect(c.get(`${url}/slow`)).rejects.toThrow(/failed after 2 attempts: timed out after 100 ms/);
    await stop(server);
  });

  it('keeps at most `concurrency` requests in flight', async () => {
    let active = 0;
    let peak = 0;
    const { url, server } = await serve((_req, res) => {
      active++;
      peak = Math.max(peak, active);
      setTimeout(() => {
        active--;
        res.writeHead(200).end('ok');
      }, 30);
    });
    const c = cache('conc', { concurrency: 2 });
    await Promise.all(Array.from({ length: 6 }, (_, i) => c.get(`${url}/${i}`)));
    expect(peak).toBe(2);
    await stop(server);
  });

  it('a failed request frees its slot for the next', async () => {
    let active = 0;
    let peak = 0;
    let failing: () => void = () => {};
    const failSeen = new Promise<void>((resolve) => (failing = resolve));
    const { url, server } = await serve((req, res) => {
      active++;
      peak = Math.max(peak, active);
      if (req.url === '/fail') failing();
      setTimeout(() => {
        active--;
        if (req.url === '/fail') res.socket?.destroy();
        else res.writeHead(200).end('ok');
      }, 50);
    });
    const c = cache('conc-fail', { concurrency: 1, retries: 0 });
    const first = c.get(`${url}/fail`).catch((err: unknown) => err);
    await failSeen;
    // Queued behind the failing request, the only slot's holder.
    const rest = [c.get(`${url}/a`), c.get(`${url}/b`)];
    expect(await first).toMatchObject({ name: 'ForesightError' });
    expect((await Promise.all(rest)).map((r) => r.body)).toEqual(['ok', 'ok']);
    expect(peak).toBe(1);
    await stop(server);
  });

  it('answers from the cached copy, with a warning, when the server is gone', async () => {
    const { url, server } = await serve((_req, res) => void res.writeHead(200, { etag: '"1"' }).end('cached body'));
    const warnings: string[] = [];
    const log: Logger = { ...silentLogger, warn: (m: string) => void warnings.push(m) };
    const c = cache('stale', { retries: 1, log });
    await c.get(`${url}/r`);
    await stop(server);
    const res = await c.get(`${url}/r`);
    expect(res).toMatchObject({ cache: 'stale', body: 'cached body' });
    expect(warnings[0]).toMatch(/failed after 2 attempts.*using the copy cached/);
    await expect(cache('stale-none', { retries: 0 }).get(`${url}/never`)).rejects.toMatchObject({ name: 'ForesightError' });
  });

  it('stores one entry per URL and Accept, in the shared entry shape, under sharded hashed names', async () => {
    const { url, server } = await serve((req, res) => {
      const json = req.headers.accept === 'application/json';
      res.writeHead(200, { etag: json ? '"j"' : '"t"', 'content-type': json ? 'application/json' : 'text/plain', 'set-cookie': 'session=s3cret' });
      res.end(json ? '{"a":1}' : 'text');
    });
    const c = cache('shape');
    await c.get(`${url}/doc`, { headers: { accept: 'application/json' } });
    await c.get(`${url}/doc`);
    const shards = await readdir(join(dir, 'shape'));
    expect(shards.every((s) => /^[0-9a-f]{2}$/.test(s))).toBe(true);
    const files = (await Promise.all(shards.map(async (s) => (await readdir(join(dir, 'shape', s))).map((f) => join(dir, 'shape', s, f))))).flat();
    expect(files).toHaveLength(2);
    expect(files.every((f) => /\/[0-9a-f]{64}\.json$/.test(f))).toBe(true);
    const entry = CacheEntrySchema.parse(JSON.parse(await readFile(c.pathFor(`${url}/doc`, 'application/json'), 'utf8')));
    expect(entry).toMatchObject({ url: `${url}/doc`, status: 200, etag: '"j"', lastModified: null, body: '{"a":1}' });
    expect(entry.headers).toEqual({ etag: '"j"', 'content-type': 'application/json' }); // kept headers only: no cookie
    expect(c.pathFor(`${url}/doc`, 'application/json')).toBe(c.store.pathFor(cacheKey('GET', `${url}/doc`, 'application/json')));
    await stop(server);
  });

  it('refetches in full, unconditionally, when the cached entry is torn', async () => {
    const seen: Array<string | undefined> = [];
    const { url, server } = await serve((req, res) => {
      seen.push(req.headers['if-none-match']);
      if (req.headers['if-none-match'] === '"v1"') return void res.writeHead(304).end();
      res.writeHead(200, { etag: '"v1"' }).end('body');
    });
    const c = cache('torn');
    await c.get(`${url}/t`);
    await writeFile(c.pathFor(`${url}/t`), '{"url":"x","status":200,"bo');
    expect(await c.get(`${url}/t`)).toMatchObject({ cache: 'miss', body: 'body' });
    // An entry of another shape (an older cache format) is a miss too.
    await writeFile(c.pathFor(`${url}/t`), JSON.stringify({ url: 'x', status: 200, etag: '"v1"', lastModified: null, contentType: null, storedAt: '', body: 'old' }));
    expect(await c.get(`${url}/t`)).toMatchObject({ cache: 'miss', body: 'body' });
    expect(seen).toEqual([undefined, undefined, undefined]);
    expect(await c.get(`${url}/t`)).toMatchObject({ cache: 'revalidated', body: 'body' });
    expect(seen[3]).toBe('"v1"');
    await stop(server);
  });

  it('takes the validators a 304 sends and restamps the entry', async () => {
    let etag = '"a"';
    const { url, server } = await serve((req, res) => {
      if (req.headers['if-none-match'] === '"a"') {
        etag = '"b"';
        return void res.writeHead(304, { etag }).end();
      }
      if (req.headers['if-none-match'] === '"b"') return void res.writeHead(304).end();
      res.writeHead(200, { etag }).end('same');
    });
    const c = cache('rotate');
    const first = await c.get(`${url}/r`);
    await new Promise((r) => setTimeout(r, 5));
    const second = await c.get(`${url}/r`);
    expect(second).toMatchObject({ cache: 'revalidated', etag: '"b"', body: 'same', headers: { etag: '"b"' } });
    expect(Date.parse(second.storedAt)).toBeGreaterThan(Date.parse(first.storedAt));
    expect(await c.get(`${url}/r`)).toMatchObject({ cache: 'revalidated', etag: '"b"' });
    expect(c.stats.notModified).toBe(2);
    await stop(server);
  });

  it('keeps credentials out of the key and the entry: userinfo is stripped', async () => {
    const c = cache('creds');
    expect(c.pathFor('https://user:pw@t.example/x')).toBe(c.pathFor('https://t.example/x'));
    const { url, server } = await serve((_req, res) => void res.writeHead(200, { etag: '"1"' }).end('ok'));
    const res = await c.get(`${url}/p`, { headers: { authorization: 'Bearer tok-123456' } });
    expect(res.cache).toBe('miss');
    const text = await readFile(c.pathFor(`${url}/p`), 'utf8');
    expect(text).not.toContain('tok-123456');
    await stop(server);
  });

  it('does not cache answers other than 200', async () => {
    const { url, server } = await serve((_req, res) => void res.writeHead(404, { etag: '"x"' }).end('nope'));
    const c = cache('404');
    expect(await c.get(`${url}/missing`)).toMatchObject({ cache: 'uncached', status: 404, body: 'nope' });
    await expect(readFile(c.pathFor(`${url}/missing`))).rejects.toMatchObject({ code: 'ENOENT' });
    await stop(server);
  });
});
