import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectDocker, removeStaleContainers } from '../../core/env/index.ts';
import { QUEUE_NAME } from '../../core/queue/index.ts';
import { minedDemoCopy } from '../helpers/demo.ts';
import { startRedis, type TestRedis } from '../helpers/redis.ts';
import { foresight, jobs, until, validateItems, type Proc } from '../helpers/redis-foresight.ts';

const REPO = 'demo/minilib';
// Concurrent: each trial has its redis-server, workers and copy of the demo; their runs mostly wait on containers.
describe.concurrent('validate through a Redis queue: a coordinator and two `foresight worker`s', () => {
  let reference: string;
  /** Each trial's redis-server and the copy of the demo it revalidates through the queue. */
  let sigkill: { redis: TestRedis; coordinated: string };
  let restart: { redis: TestRedis; coordinated: string };
  const procs: Proc[] = [];
  beforeAll(async () => {
    // The demo mined locally (shared by the test run) is the reference; the trials revalidate copies of it.
    reference = await minedDemoCopy();
    sigkill = { redis: await startRedis(), coordinated: await minedDemoCopy() };
    // No persistence: the restart loses every job, as the fleet's plain `redis-server` does.
    restart = { redis: await startRedis(), coordinated: await minedDemoCopy() };
  }, 900_000);
  afterAll(async () => {
    for (const p of procs) if (p.child.exitCode === null) p.child.kill('SIGKILL');
    await Promise.all(procs.map((p) => p.exit));
    // The SIGKILLed worker's containers: owned by a dead process now.
    await removeStaleContainers(connectDocker(null));
    for (const t of [sigkill, restart]) await t?.redis.stop();
    for (const d of [reference, sigkill?.coordinated, restart?.coordinated]) if (d) await rm(d, { recursive: true, force: true });
  });

  it('gives the items a local run gives; a worker SIGKILLed mid-job loses nothing; a rerun finds the finished jobs', async () => {
    const { redis, coordinated } = sigkill;
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
    // What each chain was doing on its worker showed on the coordinator's terminal, as a local run shows it.
    expect(run.stderr()).toMatch(/\[validate\] minilib__\d+-\d+: S\d run \d\/\d/);
    expect(run.stderr()).toMatch(/5 items \(5 computed, 0 reused from checkpoint\)/);
    const local = await validateItems(reference);
    expect(await validateItems(coordinated)).toEqual(local);
    // Each job's id is its chain's checkpoint key (the excluded chain was no job).
    const keys = (await readFile(join(coordinated, 'demo__minilib/validate/checkpoint.jsonl'), 'utf8')).trim().split('\n').map((l) => (JSON.parse(l) as { key: string }).key);
    expect(keys).toHaveLength(5);
    expect(keys).toEqual(expect.arrayContaining(done));

    // No worker left: a rerun without its checkpoint gets every result back from Redis, nothing enqueued again.
    b.child.kill('SIGTERM');
    expect(await b.exit).toBe(143);
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

  it("trial: redis-server killed -9 while a worker validates a chain, restarted on the same port → the run ends with the local run's items", async () => {
    const { redis, coordinated } = restart;
    const worker = (name: string) => foresight(['worker', '--queue', redis.url, '--data', join(coordinated, `worker-${name}`), '--concurrency', '1'], { FORESIGHT_WORKER_LOCK_SEC: '3' });
    const a = worker('a');
    const b = worker('b');
    procs.push(a, b);
    await until('both workers', () => a.stderr().includes('taking') && b.stderr().includes('taking'), 60_000);
    const run = foresight(['validate', '--repo', 'demo/minilib', '--clone', join(coordinated, 'demo__minilib/clone'), '--data', coordinated, '--offline', '--force', '--queue', redis.url]);
    procs.push(run);

    // Redis dies in the middle of a chain (containers running, lock held) and comes back empty.
    await until('a job on a worker', () => jobs(a.stderr(), 'started').length + jobs(b.stderr(), 'started').length > 0, 120_000);
    await sleep(2_000);
    await redis.kill();
    await sleep(500);
    await redis.restart();

    const exit = await Promise.race([run.exit, sleep(240_000).then(() => 'hung')]);
    expect(exit, run.stderr()).toBe(0);
    // The jobs Redis lost were queued again under their ids; the workers took them after the restart.
    expect(run.stderr()).toMatch(/validate\.chain\.[0-9a-f]{64}: vanished from Redis at redis:\/\/127\.0\.0\.1:\d+ .*queued again \(1 of 3\)/);
    expect(run.stderr()).toMatch(/validating chains 5\/5/);
    expect(run.stderr()).toMatch(/5 items \(5 computed, 0 reused from checkpoint\)/);
    expect(await validateItems(coordinated)).toEqual(await validateItems(reference));
  }, 360_000);
});
