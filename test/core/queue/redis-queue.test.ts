import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../../core/foundation/log.ts';
import { handlerRegistry, JobFailedError, openWorkQueue, redisQueue, type ItemProgress, type WorkQueue } from '../../../core/queue/index.ts';
import { PROJECT_ROOT } from '../../../core/foundation/version.ts';
import { buggyKind, chainFailsKind, flakyKind, sharedKind, slowKind } from '../../helpers/redis-kinds.ts';
import { startRedis, type TestRedis } from '../../helpers/redis.ts';
import { recordingLogger } from '../../helpers/fake-github.ts';

interface WorkerProc {
  name: string;
  child: ChildProcess;
  output: () => string;
}

/** A worker in its own process and data folder (test/helpers/redis-worker.ts). */
async function startWorker(url: string, root: string, name: string): Promise<WorkerProc> {
  const dataDir = join(root, `data-${name}`);
  await mkdir(dataDir, { recursive: true });
  const child = spawn(process.execPath, ['--import', 'tsx', join(PROJECT_ROOT, 'test/helpers/redis-worker.ts'), url, dataDir, name], {
    cwd: PROJECT_ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.setEncoding('utf8').on('data', (d: string) => (out += d));
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (out += d));
  for (let i = 0; i < 300 && !out.includes('ready'); i++) {
    if (child.exitCode !== null) throw new Error(`worker ${name} exited: ${out}`);
    await sleep(50);
  }
  if (!out.includes('ready')) throw new Error(`worker ${name} did not start: ${out}`);
  return { name, child, output: () => out };
}

async function stopWorker(w: WorkerProc): Promise<void> {
  if (w.child.exitCode !== null || w.child.signalCode !== null) return;
  const exited = new Promise((resolve) => w.child.once('exit', resolve));
  w.child.kill('SIGTERM');
  await exited;
}

describe('work queue on a real redis-server: a coordinator and two worker processes', () => {
  let redis: TestRedis;
  let root: string;
  let ledger: string;
  let queue: WorkQueue;
  const workers: WorkerProc[] = [];

  /** Ledger lines `<event> <kind> <id> <worker> <attempt>` for one item. */
  async function entries(kind: string, id: string): Promise<Array<{ event: string; worker: string; attempt: number }>> {
    const text = await readFile(ledger, 'utf8');
    return text
      .split('\n')
      .map((l) => l.split(' '))
      .filter((f) => f[1] === kind && f[2] === id)
      .map((f) => ({ event: f[0]!, worker: f[3]!, attempt: Number(f[4]) }));
  }

  beforeAll(async () => {
    redis = await startRedis();
    root = await mkdtemp(join(tmpdir(), 'foresight-queue-'));
    ledger = join(root, 'ledger.txt');
    await writeFile(ledger, '');
    workers.push(...(await Promise.all([startWorker(redis.url, root, 'w1'), startWorker(redis.url, root, 'w2')])));
    queue = await redisQueue({ url: redis.url, log: silentLogger, retry: { attempts: 3, backoffMs: 100 } });
  }, 30_000);

  afterAll(async () => {
    await queue?.close();
    await Promise.all(workers.map(stopWorker));
    await redis?.stop();
    await rm(root, { recursive: true, force: true });
  });

  it('runs each id once: duplicate submits share one job, and both workers take items', async () => {
    const submit = (i: number) => queue.submit(slowKind, `item-${i}`, { ledger, value: i, ms: 500 });
    const results = await Promise.all([1, 2, 3, 4, 1, 2].map(submit));
    expect(results.map((r) => r.doubled)).toEqual([2, 4, 6, 8, 2, 4]);
    for (const i of [1, 2, 3, 4]) expect((await entries('test.slow', `item-${i}`)).filter((e) => e.event === 'start')).toHaveLength(1);
    // Each worker runs one job at a time: four half-second jobs cannot all go to one of them while the other idles.
    expect(new Set(results.map((r) => r.worker))).toEqual(new Set(['w1', 'w2']));
  });

  it('a rerun (another coordinator) finds a finished item in Redis without running it again', async () => {
    // As a stage opens it from config.queue.url (no local handlers: the workers have them).
    const again = await openWorkQueue({ url: redis.url, handlers: handlerRegistry([]), jobs: 1, dataDir: root, log: silentLogger });
    expect(again).toMatchObject({ mode: 'redis', capacity: Number.POSITIVE_INFINITY });
    try {
      const before = await entries('test.slow', 'item-3');
      const r = await again.submit(slowKind, 'item-3', { ledger, value: 3, ms: 500 });
      expect(r.doubled).toBe(6);
      expect(await entries('test.slow', 'item-3')).toEqual(before);
    } finally {
      await again.close();
    }
  });

  it("a worker's progress reaches the coordinator, naming the worker", async () => {
    const seen: ItemProgress[] = [];
    const r = await queue.submit(slowKind, 'progress-1', { ledger, value: 5, ms: 400 }, { onProgress: (p) => seen.push(p) });
    expect(seen).toContainEqual({ id: 'progress-1', done: 1, total: 2, note: 'half-way', worker: r.worker });
  });

  it('each worker process builds a shared resource once and reuses it for its later jobs', async () => {
    const results = await Promise.all([1, 2, 3, 4, 5, 6].map((i) => queue.submit(sharedKind, `shared-${i}`, { ledger, ms: 200 })));
    const tokensOf = new Map<string, Set<string>>();
    for (const r of results) tokensOf.set(r.worker, (tokensOf.get(r.worker) ?? new Set()).add(r.token));
    for (const [worker, tokens] of tokensOf) expect(tokens.size, worker).toBe(1);
    const creates = (await readFile(ledger, 'utf8')).split('\n').filter((l) => l.startsWith('create test.shared'));
    expect(creates).toHaveLength(tokensOf.size);
  });

  it('a worker SIGKILLed mid-job: the job comes back stalled and completes on the other worker, once', async () => {
    const pending = queue.submit(slowKind, 'killed-1', { ledger, value: 21, ms: 3_000 });
    let started: Array<{ event: string; worker: string }> = [];
    for (let i = 0; i < 200 && started.length === 0; i++) {
      await sleep(50);
      started = await entries('test.slow', 'killed-1');
    }
    expect(started).toHaveLength(1);
    const victim = workers.find((w) => w.name === started[0]!.worker)!;
    victim.child.kill('SIGKILL');
    const r = await pending;
    expect(r.doubled).toBe(42);
    expect(r.worker).not.toBe(victim.name);
    const all = await entries('test.slow', 'killed-1');
    expect(all.filter((e) => e.event === 'start').map((e) => e.worker)).toEqual([victim.name, r.worker]);
    expect(all.filter((e) => e.event === 'end').map((e) => e.worker)).toEqual([r.worker]);
  }, 20_000);

  it("an infrastructure failure is retried with backoff; the item's own failure is a result, run once; a handler bug is not retried", async () => {
    expect(await queue.submit(flakyKind, 'flaky-1', { ledger, okFrom: 3 })).toEqual({ outcome: 'done', attempt: 3 });
    expect((await entries('test.flaky', 'flaky-1')).map((e) => e.attempt)).toEqual([1, 2, 3]);

    const exhausted = await queue.submit(flakyKind, 'flaky-2', { ledger, okFrom: 99 }).catch((e: unknown) => e);
    expect(exhausted).toBeInstanceOf(JobFailedError);
    expect(exhausted).toMatchObject({ reason: 'infra', external: true, remedy: 'restart dockerd' });
    expect((await entries('test.flaky', 'flaky-2')).map((e) => e.attempt)).toEqual([1, 2, 3]);

    expect(await queue.submit(chainFailsKind, 'chain-1', { ledger })).toEqual({ outcome: 'excluded', reason: 'tests-fail-after-fix' });
    expect(await entries('test.chain-fails', 'chain-1')).toHaveLength(1);

    const bug = await queue.submit(buggyKind, 'bug-1', { ledger }).catch((e: unknown) => e);
    expect(bug).toMatchObject({ reason: 'handler-error', external: false });
    expect((bug as Error).message).toContain('cannot read properties of undefined');
    expect(await entries('test.buggy', 'bug-1')).toHaveLength(1);
  }, 20_000);

  it('a stopped coordinator stops waiting at once; the job runs on, and the next run gets its result without a second run', async () => {
    const stop = new AbortController();
    const stopping = await openWorkQueue({ url: redis.url, handlers: handlerRegistry([]), jobs: 1, dataDir: root, log: silentLogger, signal: stop.signal });
    const pending = stopping.submit(slowKind, 'stopped-1', { ledger, value: 7, ms: 1_500 }).catch((e: unknown) => e);
    await sleep(300);
    const stoppedAt = Date.now();
    stop.abort(new Error('SIGTERM'));
    expect(await pending).toMatchObject({ message: 'SIGTERM' });
    expect(Date.now() - stoppedAt).toBeLessThan(500);
    await stopping.close();
    expect(await queue.submit(slowKind, 'stopped-1', { ledger, value: 7, ms: 1_500 })).toMatchObject({ doubled: 14 });
    expect((await entries('test.slow', 'stopped-1')).filter((e) => e.event === 'start')).toHaveLength(1);
  });

  it('an item that failed runs again, with all its attempts, when submitted again', async () => {
    const first = await queue.submit(flakyKind, 'flaky-3', { ledger, okFrom: 99 }).catch((e: unknown) => e);
    expect(first).toMatchObject({ reason: 'infra' });
    const second = await queue.submit(flakyKind, 'flaky-3', { ledger, okFrom: 99 }).catch((e: unknown) => e);
    expect(second).toMatchObject({ reason: 'infra' });
    expect((await entries('test.flaky', 'flaky-3')).map((e) => e.attempt)).toEqual([1, 2, 3, 1, 2, 3]);
  }, 20_000);
});

describe('a coordinator whose queue has no worker', () => {
  it('warns once, naming the queue and the command that starts a worker; a worker then takes the job', async () => {
    const redis = await startRedis();
    const root = await mkdtemp(join(tmpdir(), 'foresight-noworker-'));
    const ledger = join(root, 'ledger');
    await writeFile(ledger, '');
    const log = recordingLogger();
    const alone = await redisQueue({ url: redis.url, log, noWorkerWarnMs: 300 });
    let worker: WorkerProc | undefined;
    try {
      const pending = alone.submit(slowKind, 'nobody-1', { ledger, value: 1, ms: 10 });
      for (let i = 0; i < 100 && !log.lines.some((l) => l.level === 'warn'); i++) await sleep(50);
      await sleep(500);
      const warnings = log.lines.filter((l) => l.level === 'warn').map((l) => l.msg);
      expect(warnings).toEqual([`no worker is taking jobs from ${redis.url} (1 waiting for ${warnings[0]?.match(/for (\d+) s/)?.[1]} s): start \`foresight worker --queue ${redis.url}\` on a host with Docker`]);
      worker = await startWorker(redis.url, root, 'late');
      expect(await pending).toMatchObject({ outcome: 'done', doubled: 2, worker: 'late' });
    } finally {
      if (worker) await stopWorker(worker);
      await alone.close();
      await redis.stop();
      await rm(root, { recursive: true, force: true });
    }
  }, 30_000);
});
