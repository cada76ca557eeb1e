import { spawn, type ChildProcess } from 'node:child_process';
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectDocker, removeStaleContainers } from '../../core/env/index.ts';
import { QUEUE_NAME } from '../../core/queue/index.ts';
import { PROJECT_ROOT } from '../../core/foundation/version.ts';
import { minedDemoCopy } from '../helpers/demo.ts';
import { startRedis, type TestRedis } from '../helpers/redis.ts';

const REPO = 'demo/minilib';
const SECRETS = ['GITHUB_TOKEN', 'GH_TOKEN', 'FORESIGHT_LLM_API_KEY', 'OPENAI_API_KEY', 'HF_TOKEN'];

interface Proc {
  child: ChildProcess;
  stderr: () => string;
  exit: Promise<number | null>;
}

/** `foresight <args>` as its own process (node itself, so a SIGKILL kills the worker, not a wrapper). */
function foresight(args: string[], env: Record<string, string> = {}): Proc {
  const base: NodeJS.ProcessEnv = { ...process.env, FORESIGHT_LLM_BASE_URL: '', FORESIGHT_QUEUE: '', FORESIGHT_ENV_KEEP: '500' };
  for (const k of SECRETS) delete base[k];
  const child = spawn(process.execPath, ['--import', 'tsx', join(PROJECT_ROOT, 'pipeline/bin.ts'), ...args], { cwd: PROJECT_ROOT, env: { ...base, ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const exit = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  return { child, stderr: () => stderr, exit };
}

async function until(what: string, ok: () => boolean, ms: number): Promise<void> {
  for (const end = Date.now() + ms; !ok(); await sleep(100)) if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
}

/** A validate item without what is measured (times, costs) or random (the demo's deliberately flaky test's per-state outcomes). */
function comparable(line: string): unknown {
  const item = JSON.parse(line) as { flaky_tests: string[] };
  const flaky = new Set(item.flaky_tests);
  const strip = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(strip);
    if (v === null || typeof v !== 'object') return v;
    const kept = Object.entries(v).filter(([k]) => !['cost', 'durationMs', 'seconds'].includes(k) && !flaky.has(k)).map(([k, x]) => [k, strip(x)] as const);
    // A state's failure kinds that named only flaky tests: the same as none.
    return Object.fromEntries(kept.filter(([k, x]) => k !== 'failureKinds' || Object.keys(x as object).length > 0));
  };
  return strip(item);
}

async function validateItems(dataRoot: string): Promise<unknown[]> {
  return (await readFile(join(dataRoot, 'demo__minilib/validate/items.jsonl'), 'utf8')).trim().split('\n').map(comparable);
}

/** `<id>` of each `validate.chain <id>: <event>` line a worker printed. */
function jobs(stderr: string, event: 'started' | 'done'): string[] {
  return [...stderr.matchAll(new RegExp(`validate\\.chain ([0-9a-f]{64}): ${event}`, 'g'))].map((m) => m[1]!);
}

describe('validate through a Redis queue: a coordinator and two `foresight worker`s', () => {
  let redis: TestRedis;
  let reference: string;
  let coordinated: string;
  const procs: Proc[] = [];
  beforeAll(async () => {
    redis = await startRedis();
    // The demo mined locally (shared by the test run) is the reference; a second copy is revalidated through the queue.
    [reference, coordinated] = [await minedDemoCopy(), await minedDemoCopy()];
  }, 900_000);
  afterAll(async () => {
    for (const p of procs) if (p.child.exitCode === null) p.child.kill('SIGKILL');
    await Promise.all(procs.map((p) => p.exit));
    // The SIGKILLed worker's containers: owned by a dead process now.
    await removeStaleContainers(connectDocker(null));
    await redis?.stop();
    for (const d of [reference, coordinated]) if (d) await rm(d, { recursive: true, force: true });
  });

  it('gives the items a local run gives; a worker SIGKILLed mid-job loses nothing; a rerun finds the finished jobs', async () => {
    const worker = (name: string, concurrency: number) => foresight(['worker', '--queue', redis.url, '--data', join(coordinated, `worker-${name}`), '--concurrency', String(concurrency)], { FORESIGHT_WORKER_LOCK_SEC: '3' });
    const a = worker('a', 1);
    const b = worker('b', 2);
    procs.push(a, b);
    await until('both workers', () => a.stderr().includes('taking') && b.stderr().includes('taking'), 60_000);
    const args = ['validate', '--repo', REPO, '--clone', join(coordinated, 'demo__minilib/clone'), '--data', coordinated, '--offline', '--force', '--queue', redis.url];
    const run = foresight(args);
    procs.push(run);

    // Worker a is killed in the middle of its first chain: containers running, lock held.
    await until('a job on worker a', () => jobs(a.stderr(), 'started').length > 0, 120_000);
    const killed = jobs(a.stderr(), 'started')[0]!;
    await sleep(3_000);
    expect(jobs(a.stderr(), 'done')).toEqual([]);
    a.child.kill('SIGKILL');
    expect(await run.exit, run.stderr()).toBe(0);

    // Its chain came back stalled and ran on b; every chain ran to the end exactly once.
    const done = [...jobs(a.stderr(), 'done'), ...jobs(b.stderr(), 'done')];
    expect(jobs(b.stderr(), 'done')).toContain(killed);
    expect(done).toHaveLength(4);
    expect(new Set(done).size).toBe(4);
    expect(run.stderr()).toMatch(/validating 4 chain\(s\) on the workers of redis:/);
    expect(run.stderr()).toMatch(/validating chains 5\/5/);
    expect(run.stderr()).toMatch(/5 items \(5 computed, 0 reused from checkpoint\)/);
    const local = await validateItems(reference);
    expect(await validateItems(coordinated)).toEqual(local);
    // Each job's id is its chain's checkpoint key (the excluded chain was no job).
    const keys = (await readFile(join(coordinated, 'demo__minilib/validate/checkpoint.jsonl'), 'utf8')).trim().split('\n').map((l) => (JSON.parse(l) as { key: string }).key);
    expect(keys).toHaveLength(5);
    expect(keys).toEqual(expect.arrayContaining(done));

    // No worker left: a rerun without its checkpoint gets every result back from Redis, nothing enqueued again.
    b.child.kill('SIGTERM');
    expect(await b.exit).toBe(0);
    const again = foresight(args);
    procs.push(again);
    // A hang here means new job ids: the code changed between the runs (its fingerprint is in the key).
    const finished = await Promise.race([again.exit, sleep(120_000).then(() => 'hung')]);
    expect(finished, again.stderr()).toBe(0);
    expect(again.stderr()).toMatch(/5 items \(5 computed, 0 reused from checkpoint\)/);
    expect(await validateItems(coordinated)).toEqual(local);
    const { Queue } = await import('bullmq');
    const queue = new Queue(QUEUE_NAME, { connection: { url: redis.url } });
    try {
      expect(await queue.getJobCounts('completed', 'failed', 'waiting', 'active', 'delayed')).toEqual({ completed: 4, failed: 0, waiting: 0, active: 0, delayed: 0 });
    } finally {
      await queue.close();
    }
  }, 480_000);
});
