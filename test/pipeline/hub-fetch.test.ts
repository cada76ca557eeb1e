/** hubFetch against a local hub on 127.0.0.1 (test/helpers/fake-hub.ts): a 429 is retried as Retry-After says, within a limit. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../core/foundation/log.ts';
import { hubFetch, parseRetryAfter } from '../../pipeline/publish/index.ts';
import { startFakeHub, type FakeHub } from '../helpers/fake-hub.ts';

const quiet = createLogger({ quiet: true });

describe('hubFetch: a 429 from the hub is retried, honouring Retry-After', () => {
  let hub: FakeHub;
  beforeAll(async () => {
    hub = await startFakeHub();
  });
  afterAll(async () => hub?.close());

  it('reads Retry-After as seconds or as an HTTP date; anything else is no answer', () => {
    const now = Date.parse('2026-12-01T12:00:00Z');
    expect(parseRetryAfter('3', now)).toBe(3);
    expect(parseRetryAfter('Tue, 01 Dec 2026 12:00:07 GMT', now)).toBe(7);
    expect(parseRetryAfter('Tue, 01 Dec 2026 11:00:00 GMT', now)).toBe(0);
    expect(parseRetryAfter('soon', now)).toBeNull();
    expect(parseRetryAfter('-1', now)).toBeNull();
    expect(parseRetryAfter(null, now)).toBeNull();
  });

  it('waits as long as the hub asks, then sends the same request again', async () => {
    hub.failNext('GET', /^\/api\/datasets\/x\/y$/, 429, { 'Retry-After': '1' });
    const start = hub.requests.length;
    const res = await hubFetch({ log: quiet })(`${hub.baseUrl}/api/datasets/x/y`);
    expect(res.status).toBe(404); // the retry reached the hub, which has no such repository
    const [first, second] = hub.requests.slice(start);
    expect([first?.status, second?.status]).toEqual([429, 404]);
    expect(second!.at - first!.at).toBeGreaterThanOrEqual(950);
  });

  it('backs off without Retry-After, and gives the 429 back after the last try', async () => {
    for (let i = 0; i < 3; i++) hub.failNext('GET', /^\/api\/datasets\/x\/z$/, 429);
    const start = hub.requests.length;
    const res = await hubFetch({ log: quiet, attempts: 3, baseDelayMs: 100 })(`${hub.baseUrl}/api/datasets/x/z`);
    expect(res.status).toBe(429);
    const tries = hub.requests.slice(start);
    expect(tries.map((r) => r.status)).toEqual([429, 429, 429]);
    expect(tries[1]!.at - tries[0]!.at).toBeGreaterThanOrEqual(90);
    expect(tries[2]!.at - tries[1]!.at).toBeGreaterThanOrEqual(190); // doubled
  });

  it('does not sit out a Retry-After longer than its limit', async () => {
    hub.failNext('GET', /^\/api\/datasets\/x\/w$/, 429, { 'Retry-After': '3600' });
    const started = Date.now();
    const res = await hubFetch({ log: quiet, maxWaitSec: 60 })(`${hub.baseUrl}/api/datasets/x/w`);
    expect(res.status).toBe(429);
    expect(Date.now() - started).toBeLessThan(2000);
  });
});
