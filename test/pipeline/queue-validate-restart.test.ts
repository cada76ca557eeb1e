import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectDocker, removeStaleContainers } from '../../core/env/index.ts';
import { minedDemoCopy } from '../helpers/demo.ts';
import { foresight, jobs, until, validateItems, type Proc } from '../helpers/redis-foresight.ts';
import { startRedis, type TestRedis } from '../helpers/redis.ts';

describe('validate through a Redis queue whose redis-server restarts mid-run', () => {
  let redis: TestRedis;
  let reference: string;
  let coordinated: string;
  const procs: Proc[] = [];
  beforeAll(async () => {
    // No persistence: the restart loses every job, as the fleet's plain `redis-server` does.
    redis = await startRedis();
    // The demo mined locally (shared by the test run) is the reference; a second copy is revalidated through the queue.
    [reference, coordinated] = [await minedDemoCopy(), await minedDemoCopy()];
  }, 900_000);
  afterAll(async () => {
    for (const p of procs) if (p.child.exitCode === null) p.child.kill('SIGKILL');
    await Promise.all(procs.map((p) => p.exit));
    await removeStaleContainers(connectDocker(null));
    await redis?.stop();
    for (const d of [reference, coordinated]) if (d) await rm(d, { recursive: true, force: true });
  });

  it("trial: redis-server killed -9 while a worker validates a chain, restarted on the same port → the run ends with the local run's items", async () => {
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
