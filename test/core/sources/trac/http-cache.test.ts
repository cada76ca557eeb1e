import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Logger } from '../../../../core/log.ts';
import { silentLogger } from '../../../../core/log.ts';
import { HttpCache, retryAfterMs } from '../../../../core/sources/http-cache.ts';

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
});
