import { describe, expect, it } from 'vitest';
import { exponentialBackoff, RetryableStatusError, retryAfterMs, retryAfterOf, withRetry } from '../../../core/http/retry.ts';

/** A sleep that records the waits and returns at once. */
function fakeSleep(): { waits: number[]; sleep: (ms: number) => Promise<void> } {
  const waits: number[] = [];
  return { waits, sleep: async (ms) => void waits.push(ms) };
}

const status = (code: number, headers: Record<string, string> = {}) => new RetryableStatusError(new Response(null, { status: code, headers }));

describe('withRetry', () => {
  it('counts attempts, backs off between them, and returns the first success', async () => {
    const { waits, sleep } = fakeSleep();
    const seen: number[] = [];
    const retried: number[] = [];
    const result = await withRetry(
      async (attempt) => {
        seen.push(attempt);
        if (attempt < 3) throw new Error(`boom ${attempt}`);
        return 'ok';
      },
      { attempts: 5, backoff: exponentialBackoff(100), sleep, onRetry: ({ attempt }) => void retried.push(attempt) },
    );
    expect(result).toBe('ok');
    expect(seen).toEqual([1, 2, 3]);
    expect(retried).toEqual([1, 2]);
    expect(waits).toEqual([100, 200]);
  });

  it('gives up after the last attempt with the last failure as thrown', async () => {
    const { waits, sleep } = fakeSleep();
    let n = 0;
    const err = await withRetry(
      async () => {
        throw new Error(`failure ${++n}`);
      },
      { attempts: 3, backoff: () => 7, sleep },
    ).catch((e: unknown) => e);
    expect((err as Error).message).toBe('failure 3');
    expect(n).toBe(3);
    expect(waits).toEqual([7, 7]);
  });

  it('a failure that is not retryable stops at once, without waiting', async () => {
    const { waits, sleep } = fakeSleep();
    let n = 0;
    const fatal = new Error('fatal');
    await expect(
      withRetry(
        async () => {
          n++;
          throw fatal;
        },
        { attempts: 5, backoff: () => 1, retryable: (e) => e !== fatal, sleep },
      ),
    ).rejects.toBe(fatal);
    expect(n).toBe(1);
    expect(waits).toEqual([]);
  });

  it('a TypeError that is not a network error is a bug: never retried', async () => {
    let n = 0;
    await expect(
      withRetry(
        async () => {
          n++;
          throw new TypeError('x is not a function');
        },
        { attempts: 3, backoff: () => 0 },
      ),
    ).rejects.toThrow(TypeError);
    expect(n).toBe(1);
  });

  it('waits as Retry-After says, in seconds or as an HTTP date, instead of the backoff', async () => {
    const { waits, sleep } = fakeSleep();
    const answers = [status(429, { 'retry-after': '3' }), status(503, { 'retry-after': new Date(Date.now() + 60_000).toUTCString() })];
    await withRetry(
      async () => {
        const next = answers.shift();
        if (next) throw next;
      },
      { attempts: 3, backoff: () => 1, sleep },
    );
    expect(waits[0]).toBe(3000);
    // The date has one-second precision.
    expect(waits[1]).toBeGreaterThan(58_000);
    expect(waits[1]).toBeLessThanOrEqual(60_000);
  });

  it('does not sit out a Retry-After longer than its limit: the failure is thrown at once', async () => {
    const { waits, sleep } = fakeSleep();
    const tooLong = status(429, { 'retry-after': '3600' });
    let n = 0;
    const err = await withRetry(
      async () => {
        n++;
        throw tooLong;
      },
      { attempts: 5, backoff: () => 1, maxRetryAfterMs: 60_000, sleep },
    ).catch((e: unknown) => e);
    expect(err).toBe(tooLong);
    expect(n).toBe(1);
    expect(waits).toEqual([]);
  });

  it('an abort ends the wait with the signal reason, and no retry starts after it', async () => {
    const stop = new AbortController();
    let n = 0;
    const run = withRetry(
      async () => {
        n++;
        throw new Error('down');
      },
      { attempts: 5, backoff: () => 60_000, signal: stop.signal },
    );
    setTimeout(() => stop.abort(new Error('interrupted')), 10);
    await expect(run).rejects.toThrow('interrupted');
    expect(n).toBe(1);

    let m = 0;
    const aborted = new AbortController();
    aborted.abort(new Error('already'));
    await expect(
      withRetry(
        async () => {
          m++;
          throw new Error('down');
        },
        { attempts: 5, backoff: () => 0, signal: aborted.signal },
      ),
    ).rejects.toThrow('down');
    expect(m).toBe(1);
  });

  it('real waits are the given ones (small here)', async () => {
    const started = Date.now();
    let n = 0;
    await withRetry(
      async () => {
        if (++n < 3) throw new Error('again');
      },
      { attempts: 3, backoff: exponentialBackoff(20) },
    );
    expect(Date.now() - started).toBeGreaterThanOrEqual(55); // 20 + 40
  });
});

describe('Retry-After', () => {
  const now = Date.parse('2026-12-01T12:00:00Z');

  it('reads delta-seconds and HTTP dates; anything else is no answer', () => {
    expect(retryAfterMs('3', now)).toBe(3000);
    expect(retryAfterMs(' 1.5 ', now)).toBe(1500);
    expect(retryAfterMs('Tue, 01 Dec 2026 12:00:07 GMT', now)).toBe(7000);
    expect(retryAfterMs('Tue, 01 Dec 2026 11:00:00 GMT', now)).toBe(0);
    for (const v of ['soon', '-1', '', null, undefined]) expect(retryAfterMs(v, now)).toBeNull();
  });

  it("finds the header on a fetch Response, an octokit error's plain record, or an SDK error's Headers; Retry-After-Ms first", () => {
    expect(retryAfterOf(status(429, { 'retry-after': '2' }), now)).toBe(2000);
    expect(retryAfterOf({ status: 503, response: { headers: { 'retry-after': 'Tue, 01 Dec 2026 12:00:04 GMT' } } }, now)).toBe(4000);
    expect(retryAfterOf({ status: 429, headers: new Headers({ 'retry-after-ms': '1200', 'retry-after': '9' }) }, now)).toBe(1200);
    expect(retryAfterOf(new Error('no response'), now)).toBeNull();
    expect(retryAfterOf(null, now)).toBeNull();
  });

  it('exponential backoff doubles from the base, caps, and jitters within its spread', () => {
    const b = exponentialBackoff(500, { maxMs: 8_000 });
    expect([1, 2, 3, 4, 5, 6].map(b)).toEqual([500, 1000, 2000, 4000, 8000, 8000]);
    const j = exponentialBackoff(1000, { jitter: 0.25 });
    for (let i = 0; i < 50; i++) {
      const ms = j(1);
      expect(ms).toBeGreaterThanOrEqual(750);
      expect(ms).toBeLessThanOrEqual(1250);
    }
  });
});
