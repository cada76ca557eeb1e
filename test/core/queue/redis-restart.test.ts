import { appendFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { ForesightError } from '../../../core/foundation/errors.ts';
import { silentLogger } from '../../../core/foundation/log.ts';
import { handlerRegistry, inProcessQueue, JobFailedError, redisQueue, startQueueWorker, type QueueWorker, type WorkQueue } from '../../../core/queue/index.ts';
import { recordingLogger } from '../../helpers/fake-github.ts';
import { slowKind, TEST_HANDLERS } from '../../helpers/redis-kinds.ts';
import { startRedis, type TestRedis } from '../../helpers/redis.ts';

type Recording = ReturnType<typeof recordingLogger>;

/** Everything a test starts, stopped after it whatever happened. */
const cleanup: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const stop of cleanup.splice(0).reverse()) await stop().catch(() => undefined);
});

async function scratch(): Promise<{ root: string; ledger: string }> {
  const root = await mkdtemp(join(tmpdir(), 'foresight-restart-'));
  cleanup.push(() => rm(root, { recursive: true, force: true }));
  const ledger = join(root, 'ledger.txt');
  await writeFile(ledger, '');
  return { root, ledger };
}

async function redisServer(appendonly: boolean): Promise<TestRedis> {
  const redis = await startRedis({ appendonly });
  cleanup.push(() => redis.stop());
  return redis;
}

/** An in-process worker with short locks, so a job whose lock went with Redis runs again within seconds. */
async function worker(url: string, root: string, name: string): Promise<QueueWorker & { log: Recording }> {
  const log = recordingLogger();
  const w = await startQueueWorker({ url, handlers: handlerRegistry(TEST_HANDLERS), concurrency: 1, dataDir: root, log, name, lockDurationMs: 1_000, stalledIntervalMs: 500 });
  cleanup.push(() => w.close(true));
  return Object.assign(w, { log });
}

async function coordinator(url: string, opts: { pollMs?: number; redisDownMs?: number; maxRequeues?: number } = {}): Promise<WorkQueue & { log: Recording }> {
  const log = recordingLogger();
  const queue = await redisQueue({ url, log, retry: { attempts: 3, backoffMs: 100 }, pollMs: 200, ...opts });
  cleanup.push(() => queue.close());
  return Object.assign(queue, { log });
}

/** Ledger lines `<event> <kind> <id> <worker> <attempt>`, and `restarted` where the server came back. */
async function ledgerLines(ledger: string): Promise<string[][]> {
  return (await readFile(ledger, 'utf8')).split('\n').filter(Boolean).map((l) => l.split(' '));
}

async function until(what: string, ok: () => Promise<boolean> | boolean, ms: number): Promise<void> {
  for (const end = Date.now() + ms; !(await ok()); await sleep(50)) if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
}

const ITEMS = [1, 2, 3, 4, 5, 6];

/** The items as a local run (the in-process queue) computes them; `worker` names the process, so it is left out. */
async function localResults(root: string, ledger: string): Promise<unknown[]> {
  const local = inProcessQueue({ handlers: handlerRegistry(TEST_HANDLERS), jobs: ITEMS.length, dataDir: root, log: silentLogger });
  try {
    const results = await Promise.all(ITEMS.map((i) => local.submit(slowKind, `local-${i}`, { ledger: `${ledger}.local`, value: i, ms: 10 })));
    return results.map(({ worker: _, ...r }) => r);
  } finally {
    await local.close();
  }
}

/**
 * Two workers and a coordinator with six 1.5 s jobs in flight; redis-server is SIGKILLed once two jobs run and
 * started again on the same port `downMs` later. Every submit must resolve with the local run's results.
 */
async function restartMidRun(appendonly: boolean, downMs: number) {
  const { root, ledger } = await scratch();
  const redis = await redisServer(appendonly);
  for (const name of ['w1', 'w2']) await worker(redis.url, root, name);
  const queue = await coordinator(redis.url);
  const pending = ITEMS.map((i) => queue.submit(slowKind, `item-${i}`, { ledger, value: i, ms: 1_500 }));
  const settled = Promise.allSettled(pending);
  await until('two jobs running', async () => (await ledgerLines(ledger)).filter((l) => l[0] === 'start').length >= 2, 10_000);
  await redis.kill();
  await sleep(downMs);
  await redis.restart();
  await appendFile(ledger, 'restarted\n');
  const results = await settled;
  expect(results.filter((r) => r.status === 'rejected')).toEqual([]);
  const got = results.map((r) => (r.status === 'fulfilled' ? r.value : null)!);
  expect(got.map(({ worker: _, ...r }) => r)).toEqual(await localResults(root, ledger));
  const lines = await ledgerLines(ledger);
  const after = lines.slice(lines.findIndex((l) => l[0] === 'restarted'));
  // Every item ran to its end at least once, and both workers took jobs after the restart.
  for (const i of ITEMS) expect(lines.some((l) => l[0] === 'end' && l[2] === `item-${i}`), `item-${i}`).toBe(true);
  expect(new Set(after.filter((l) => l[0] === 'start').map((l) => l[3]))).toEqual(new Set(['w1', 'w2']));
  return { queue, ledger };
}

describe('the Redis work queue across a redis-server restart', () => {
  it('trial: redis-server killed -9 mid-run and restarted without persistence → the jobs it lost are queued again and every submit gets the local run\'s result', async () => {
    const { queue } = await restartMidRun(false, 300);
    const requeued = queue.log.lines.filter((l) => l.level === 'warn' && /vanished from Redis/.test(l.msg));
    // At least the two running jobs were lost with the server; each was queued again under its id.
    expect(requeued.length).toBeGreaterThanOrEqual(2);
    expect(requeued[0]!.msg).toMatch(/^test\.slow\.item-\d: vanished from Redis at redis:\/\/127\.0\.0\.1:\d+ \(restarted without persistence, flushed, or evicting keys\); queued again \(1 of 3\)$/);
  }, 40_000);

  it('trial: redis-server killed -9 mid-run and restarted with appendonly yes → the jobs are kept and every submit gets the local run\'s result', async () => {
    // Down for longer than the 1 s lock: the running jobs come back stalled and run again, as attempt 2.
    const { queue, ledger } = await restartMidRun(true, 1_500);
    expect(queue.log.lines.filter((l) => /vanished from Redis/.test(l.msg))).toEqual([]);
    const lines = await ledgerLines(ledger);
    const restarted = lines.findIndex((l) => l[0] === 'restarted');
    const interrupted = lines.slice(0, restarted).filter((l) => l[0] === 'start').map((l) => l[2]);
    expect(interrupted.length).toBeGreaterThanOrEqual(2);
    for (const id of interrupted) expect(lines.slice(restarted).some((l) => l[0] === 'start' && l[2] === id && l[4] === '2'), id).toBe(true);
  }, 40_000);

  it('trial: `Missing key for job … moveToFinished` on a worker → it keeps taking jobs, that one included', async () => {
    const { root, ledger } = await scratch();
    const redis = await redisServer(false);
    const w = await worker(redis.url, root, 'w1');
    // A coordinator that does not look again before the job ends: the worker finds its job gone.
    const blind = await coordinator(redis.url, { pollMs: 60_000 });
    const lost = blind.submit(slowKind, 'lost-1', { ledger, value: 1, ms: 1_500 }).catch((e: unknown) => e);
    await until('the job running', async () => (await ledgerLines(ledger)).some((l) => l[0] === 'start'), 10_000);
    await redis.kill();
    await redis.restart();
    await until('the worker to find its job gone', () => w.log.lines.some((l) => /Missing key for job .*moveToFinished/.test(l.msg)), 15_000);
    const queue = await coordinator(redis.url);
    expect(await Promise.all([queue.submit(slowKind, 'lost-1', { ledger, value: 1, ms: 100 }), queue.submit(slowKind, 'next-1', { ledger, value: 5, ms: 100 })])).toEqual([
      { outcome: 'done', doubled: 2, worker: 'w1' },
      { outcome: 'done', doubled: 10, worker: 'w1' },
    ]);
    // The first coordinator's wait settles too: with the result (its event), or closed first, with the closed error.
    await blind.close();
    expect(await lost).toSatisfy((r: unknown) => r instanceof ForesightError || (r as { doubled?: number }).doubled === 2);
  }, 40_000);

  it("trial: the coordinator misses a job's `completed` event (as across a reconnect) → it reads the result from Redis", async () => {
    const { root, ledger } = await scratch();
    const redis = await redisServer(false);
    await worker(redis.url, root, 'w1');
    const blind = await coordinator(redis.url, { pollMs: 60_000 });
    const queue = await coordinator(redis.url);
    const { Redis } = await import('ioredis');
    const admin = new Redis(redis.url);
    cleanup.push(async () => admin.disconnect());
    // The event stream is replaced under the readers (as a restart without persistence does): they read on after
    // an entry id the new stream's entries come before, so they see none of its events.
    await admin.xadd('bull:foresight:events', '9999999999999-0', 'event', 'planted');
    await sleep(300);
    await admin.del('bull:foresight:events');
    const unseen = blind.submit(slowKind, 'missed-1', { ledger, value: 4, ms: 300 }).catch((e: unknown) => e);
    expect(await queue.submit(slowKind, 'missed-1', { ledger, value: 4, ms: 300 })).toEqual({ outcome: 'done', doubled: 8, worker: 'w1' });
    const written = await admin.xrange('bull:foresight:events', '-', '+');
    expect(written.some(([, fields]) => fields[1] === 'completed' && fields[3] === 'test.slow.missed-1')).toBe(true);
    // The control: a coordinator that relies on the event alone is still waiting.
    expect(await Promise.race([unseen, sleep(1_000).then(() => 'still waiting')])).toBe('still waiting');
    await blind.close();
    expect(await unseen).toMatchObject({ message: expect.stringMatching(/was closed while items were in flight$/) });
  }, 20_000);

  it('trial: hundreds of items in flight at once → they share the connections and the poll, and all resolve', async () => {
    const { root, ledger } = await scratch();
    const redis = await redisServer(false);
    await worker(redis.url, root, 'w1');
    await worker(redis.url, root, 'w2');
    const queue = await coordinator(redis.url);
    const { Redis } = await import('ioredis');
    const admin = new Redis(redis.url);
    cleanup.push(async () => admin.disconnect());
    const clients = async (): Promise<number> => ((await admin.client('LIST')) as string).trim().split('\n').length;
    const before = await clients();
    const ids = Array.from({ length: 300 }, (_, i) => i);
    const pending = Promise.all(ids.map((i) => queue.submit(slowKind, `many-${i}`, { ledger, value: i, ms: 10 })));
    await sleep(500);
    expect(await clients()).toBe(before);
    // Measured while most of them were still waiting.
    expect((await ledgerLines(ledger)).filter((l) => l[0] === 'end').length).toBeLessThan(200);
    expect((await pending).map((r) => r.doubled)).toEqual(ids.map((i) => i * 2));
  }, 30_000);

  it('trial: redis-server killed and not restarted → one warning that it waits for Redis, then every submit fails in one line naming the cause and the remedy', async () => {
    const { ledger } = await scratch();
    const redis = await redisServer(false);
    const queue = await coordinator(redis.url, { redisDownMs: 1_500 });
    const before = queue.submit(slowKind, 'down-1', { ledger, value: 1, ms: 100 }).catch((e: unknown) => e);
    await sleep(300);
    await redis.kill();
    const started = Date.now();
    const during = queue.submit(slowKind, 'down-2', { ledger, value: 2, ms: 100 }).catch((e: unknown) => e);
    const errors = await Promise.all([before, during]);
    expect(Date.now() - started).toBeLessThan(5_000);
    for (const err of errors) {
      expect(err).toBeInstanceOf(ForesightError);
      const e = err as ForesightError;
      expect(e.oneLine()).toMatch(new RegExp(`^the work queue at ${redis.url} has not answered for [\\d.]+ s \\(connect ECONNREFUSED [^)]*\\) — start Redis at ${redis.url} again \\(with appendonly yes it keeps its jobs\\) or fix --queue / FORESIGHT_QUEUE, then rerun$`));
      expect(e.oneLine()).not.toContain('\n');
      expect(e.external).toBe(true);
    }
    expect(queue.log.lines.filter((l) => l.level === 'warn').map((l) => l.msg)).toEqual([expect.stringMatching(new RegExp(`^waiting for Redis at ${redis.url}: no answer for [\\d.]+ s`))]);
    // Closing does not hang on the missing server either.
    const closing = Date.now();
    await queue.close();
    expect(Date.now() - closing).toBeLessThan(2_000);
  }, 20_000);

  it('trial: the queue flushed again and again under a waiting job → its submit fails as lost after the bounded requeues', async () => {
    const { ledger } = await scratch();
    const redis = await redisServer(false);
    const queue = await coordinator(redis.url, { maxRequeues: 2, pollMs: 100 });
    const { Redis } = await import('ioredis');
    const admin = new Redis(redis.url);
    cleanup.push(async () => admin.disconnect());
    const pending = queue.submit(slowKind, 'flushed-1', { ledger, value: 1, ms: 100 }).catch((e: unknown) => e);
    for (let flushes = 0; flushes < 3; flushes++) {
      await until('the job in Redis', async () => (await admin.exists('bull:foresight:test.slow.flushed-1')) === 1, 5_000);
      await admin.flushall();
    }
    const err = await pending;
    expect(err).toBeInstanceOf(JobFailedError);
    expect(err).toMatchObject({ reason: 'lost', external: true });
    expect((err as JobFailedError).oneLine()).toBe(
      `test.slow flushed-1: the job vanished from Redis at ${redis.url} 3 times (restarted without persistence, flushed, or evicting keys) — run Redis with appendonly yes and maxmemory-policy noeviction, then rerun`,
    );
    expect(queue.log.lines.filter((l) => /queued again/.test(l.msg))).toHaveLength(2);
  }, 20_000);
});
