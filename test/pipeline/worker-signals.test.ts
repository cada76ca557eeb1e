/**
 * Stopping a container-owning command by a signal leaves none of its containers: `foresight worker` stops
 * its running job (back in the queue for another worker) and exits 128 + the signal at once, and so do a run's stage
 * command and `eval`. Real redis-server, real Docker, the mined demo (test/helpers/demo.ts).
 */
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectDocker, removeStaleContainers, RUN_LABEL } from '../../core/env/index.ts';
import { loadConfig } from '../../core/foundation/config.ts';
import { silentLogger } from '../../core/foundation/log.ts';
import { ExtractedChainSchema } from '../../core/foundation/model/extracted.ts';
import { QUEUE_NAME, redisQueue } from '../../core/queue/index.ts';
import { validateChainKind } from '../../stages/validate/index.ts';
import { chainJobConfig } from '../../stages/validate/queue-job.ts';
import { minedDemoCopy } from '../helpers/demo.ts';
import { startRedis, type TestRedis } from '../helpers/redis.ts';
import { foresight, until, type Proc } from '../helpers/redis-foresight.ts';

const docker = connectDocker();
const REPO = 'demo/minilib';
const CHAIN = 'minilib__3-8';
/** Every container (any state) and network labelled as owned by `pid`. */
async function ownedBy(pid: number): Promise<string[]> {
  const label = [`${RUN_LABEL}=1`, `foresight.pid=${pid}`];
  const containers = await docker.listContainers({ all: true, filters: { label } });
  const networks = await docker.listNetworks({ filters: { label } });
  return [...containers.map((c) => `container ${c.Id.slice(0, 12)} ${c.State}`), ...networks.map((n) => `network ${n.Name}`)];
}

/** Send `sig` once `pid` has a container up; the exit code, the seconds from the signal to the exit, and what it left. */
async function stopWhileContainersUp(p: Proc, sig: NodeJS.Signals, what: string): Promise<{ code: number | null; seconds: number; left: string[] }> {
  const pid = p.child.pid!;
  await until(`${what} to have a container up`, async () => {
    if (p.child.exitCode !== null) throw new Error(`${what} exited ${p.child.exitCode} before any container was up:\n${p.stderr()}`);
    return (await docker.listContainers({ filters: { label: [`${RUN_LABEL}=1`, `foresight.pid=${pid}`], status: ['running'] } })).length > 0;
  }, 120_000);
  const t0 = Date.now();
  p.child.kill(sig);
  const code = await p.exit;
  return { code, seconds: (Date.now() - t0) / 1000, left: await ownedBy(pid) };
}

// Concurrent: the trials run side by side, each on its own copy of the demo (the stage command rewrites its validate output).
describe.concurrent('a signal stops a container-owning command with none of its containers left', () => {
  let redis: TestRedis;
  let data: string;
  let stageData: string;
  const procs: Proc[] = [];
  beforeAll(async () => {
    redis = await startRedis();
    data = await minedDemoCopy();
    stageData = await minedDemoCopy();
  }, 900_000);
  afterAll(async () => {
    for (const p of procs) if (p.child.exitCode === null) p.child.kill('SIGKILL');
    await Promise.all(procs.map((p) => p.exit));
    await removeStaleContainers(docker);
    await redis?.stop();
    for (const d of [data, stageData]) if (d) await rm(d, { recursive: true, force: true });
  });

  it('trial: two `foresight worker`s stopped by SIGTERM while validating chains left their warm foresight-env containers running (exit 143 after the grace period) → the worker stops its job at once, exits 143, leaves no container, and the job completes on another worker', async () => {
    const worker = (name: string): Proc => {
      const p = foresight(['worker', '--queue', redis.url, '--data', join(data, `worker-${name}`), '--concurrency', '1'], { FORESIGHT_WORKER_LOCK_SEC: '3' });
      procs.push(p);
      return p;
    };
    const a = worker('a');
    await until('worker a', () => a.stderr().includes('taking'), 60_000);
    const clone = join(data, 'demo__minilib', 'clone');
    const chains = (await readFile(join(data, 'demo__minilib', 'extract', 'items.jsonl'), 'utf8')).trim().split('\n').map((l) => ExtractedChainSchema.parse(JSON.parse(l)));
    const chain = chains.find((c) => c.instance_id === CHAIN)!;
    const queue = await redisQueue({ url: redis.url, log: silentLogger });
    try {
      const id = `signals-${CHAIN}`;
      const result = queue.submit(validateChainKind, id, { repo: REPO, source: { path: clone, url: null }, chain, config: chainJobConfig(loadConfig({ FORESIGHT_OFFLINE: '1' })) });
      result.catch(() => undefined);
      await until('the job on worker a', () => a.stderr().includes(`validate.chain ${id}: started`), 60_000);
      // A second worker waits meanwhile: the stopped job is retried there.
      const b = worker('b');

      const stop = await stopWhileContainersUp(a, 'SIGTERM', 'worker a');
      expect(stop.code, a.stderr()).toBe(143);
      // Well inside the 20 s grace period: the job was stopped, not waited for.
      expect(stop.seconds).toBeLessThan(12);
      expect(stop.left).toEqual([]);
      // Stopped and put back in the queue (no attempt used up), then the worker closed.
      expect(a.stderr()).toMatch(new RegExp(`validate\\.chain ${id}: stopped after \\S+ with the worker; back in the queue`));
      expect(a.stderr()).toMatch(/worker \S+: stopped$/m);

      // The job is not the item's failure: it runs again on b and gives the chain the local run gave.
      const done = await result;
      const reference = (await readFile(join(data, 'demo__minilib', 'validate', 'items.jsonl'), 'utf8')).trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>).find((c) => c.instance_id === CHAIN)!;
      const sets = (c: Record<string, unknown>) => ['FAIL_TO_PASS', 'PASS_TO_PASS', 'ANTICIPATION_FAIL_TO_PASS', 'excluded', 'gradeable'].map((k) => c[k]);
      expect(sets(done.chain as unknown as Record<string, unknown>)).toEqual(sets(reference));
      expect(b.stderr()).toMatch(new RegExp(`validate\\.chain ${id}: done in`));
      const { Queue } = await import('bullmq');
      const q = new Queue(QUEUE_NAME, { connection: { url: redis.url } });
      try {
        expect(await q.getJobCounts('completed', 'failed')).toEqual({ completed: 1, failed: 0 });
        // One attempt made, b's: a's stop cost the job none of its retries.
        expect((await q.getJob(`validate.chain.${id}`))?.attemptsMade).toBe(1);
      } finally {
        await q.close();
      }

      // b is stopped idle: 143 as well, its warm container removed.
      b.child.kill('SIGTERM');
      expect(await b.exit).toBe(143);
      expect(await ownedBy(b.child.pid!)).toEqual([]);
    } finally {
      await queue.close();
    }
  }, 240_000);

  it('trial: a stage command (`foresight validate`) stopped by SIGHUP and `foresight eval` stopped by SIGINT mid-container → exit 129 and 130 at once, no container left', async () => {
    const validate = foresight(['validate', '--repo', REPO, '--clone', join(stageData, 'demo__minilib', 'clone'), '--data', stageData, '--offline', '--force']);
    procs.push(validate);
    const v = await stopWhileContainersUp(validate, 'SIGHUP', 'foresight validate');
    expect(v.code, validate.stderr()).toBe(129);
    expect(v.seconds).toBeLessThan(12);
    expect(v.left).toEqual([]);
    expect(validate.stderr()).toContain('interrupted by SIGHUP');

    const grading = foresight(['eval', '--dataset', join(stageData, 'demo__minilib', 'emit', 'hf'), '--gold']);
    procs.push(grading);
    const e = await stopWhileContainersUp(grading, 'SIGINT', 'foresight eval');
    expect(e.code, grading.stderr()).toBe(130);
    expect(e.seconds).toBeLessThan(12);
    expect(e.left).toEqual([]);
    expect(grading.stderr()).toContain('interrupted by SIGINT');
  }, 240_000);
});
