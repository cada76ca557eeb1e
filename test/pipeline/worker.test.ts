import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../core/foundation/log.ts';
import { probeKind, redisQueue } from '../../core/queue/index.ts';
import { FORESIGHT_VERSION, PROJECT_ROOT } from '../../core/foundation/version.ts';
import { startRedis, type TestRedis } from '../helpers/redis.ts';

/** `foresight worker ...` as a user starts it, with a controlled environment. */
function foresightWorker(args: string[], env: Record<string, string> = {}) {
  const child = spawn(process.execPath, ['--import', 'tsx', join(PROJECT_ROOT, 'pipeline/bin.ts'), 'worker', ...args], {
    cwd: PROJECT_ROOT,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const exit = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  return { child, stderr: () => stderr, exit };
}

describe('foresight worker', () => {
  let redis: TestRedis;
  let root: string;
  beforeAll(async () => {
    redis = await startRedis();
    root = await mkdtemp(join(tmpdir(), 'foresight-worker-'));
  });
  afterAll(async () => {
    await redis?.stop();
    await rm(root, { recursive: true, force: true });
  });

  it('takes jobs from --queue and answers them; SIGTERM stops it cleanly', async () => {
    const w = foresightWorker(['--queue', redis.url, '--data', join(root, 'w')], { FORESIGHT_WORKER_CONCURRENCY: '2' });
    for (let i = 0; i < 600 && !w.stderr().includes('taking'); i++) await sleep(50);
    expect(w.stderr()).toMatch(/worker \S+:\d+: taking worker\.probe, validate\.chain jobs from redis:\/\/127\.0\.0\.1:\d+ \(2 at once\)/);
    const queue = await redisQueue({ url: redis.url, log: silentLogger });
    try {
      const r = await queue.submit(probeKind, 'cli-1', { nonce: 'n-1' });
      expect(r).toMatchObject({ nonce: 'n-1', version: FORESIGHT_VERSION, node: process.version });
      expect(w.stderr()).toContain(`worker ${r.worker}: taking`);
    } finally {
      await queue.close();
    }
    w.child.kill('SIGTERM');
    expect(await w.exit).toBe(143);
    expect(w.stderr()).toContain('stopping: the running jobs stop');
    // Its own log, in its own data folder: the job's start and end.
    const logs = await readdir(join(root, 'w', 'worker'));
    expect(logs).toHaveLength(1);
    const lines = (await readFile(join(root, 'w', 'worker', logs[0]!), 'utf8')).trim().split('\n').map((l) => JSON.parse(l) as { msg: string });
    expect(lines.map((l) => l.msg)).toEqual(expect.arrayContaining(['worker.probe cli-1: started (attempt 1)', expect.stringMatching(/^worker\.probe cli-1: done in /)]));
  }, 60_000);

  it('a missing, malformed or silent queue is a one-line error with the remedy', async () => {
    const cases: Array<[string[], Record<string, string>, RegExp]> = [
      [[], {}, /foresight worker needs a queue — pass --queue redis:\/\/HOST:PORT/],
      [[], { FORESIGHT_QUEUE: 'http://127.0.0.1:6379' }, /FORESIGHT_QUEUE=http:\/\/127\.0\.0\.1:6379 is not a redis:\/\/HOST:PORT URL — set FORESIGHT_QUEUE to redis:\/\/127\.0\.0\.1:6379/],
      [['--queue', 'redis://127.0.0.1:1'], {}, /the work queue at redis:\/\/127\.0\.0\.1:1 does not answer \(.*ECONNREFUSED.*\) — start Redis there/],
    ];
    for (const [args, env, message] of cases) {
      const w = foresightWorker([...args, '--data', join(root, 'bad')], env);
      const code = await w.exit;
      expect(code, w.stderr()).toBe(1);
      expect(w.stderr()).toMatch(message);
      expect(w.stderr()).not.toMatch(/\n\s+at .*\.(ts|js):\d+/);
    }
    expect(existsSync(join(root, 'bad'))).toBe(false);
  }, 90_000);
});
