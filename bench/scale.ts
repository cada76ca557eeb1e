/**
 * Benchmark: validate on a fleet. The same extracted chains are validated through a Redis
 * queue by 1, then 2 (then more, as --workers says) local `foresight worker` processes; per pass the
 * coordinator's validate wall time, chains per minute, and the speed-up against one worker. Per-chain
 * costs (wall, in-container time, container starts) come from the validate items' `cost` fields, and the
 * job sizes that cross Redis from the items themselves: bench/README.md turns them into an estimate.
 *
 *   make bench-scale [CLONE=/path/to/clone REPO=owner/name SINCE=… UNTIL=… WORKERS=1,2]   (default: the generated demo)
 *   node_modules/.bin/tsx bench/scale.ts [--clone … --repo … --since … --until …] [--workers 1,2] [--concurrency 1] [--queue redis://…] [--data DIR]
 *
 * Without --queue, a private redis-server is started on 127.0.0.1 (Debian package redis-server). Each
 * pass starts from an empty queue (FLUSHDB), so no pass finds another's finished jobs. An untimed local
 * validate pass first builds the window's env images, and every worker host gets its clone before the
 * timed passes, so every pass runs on equal terms. SIGINT/SIGTERM stop the workers and remove containers.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { hostname, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { repoDataDir, stageDir } from '../core/foundation/artifacts.ts';
import { loadConfig } from '../core/foundation/config.ts';
import { CHOICE_FILE } from '../core/env/index.ts';
import { PROJECT_ROOT } from '../core/foundation/version.ts';
import { runPipeline } from '../pipeline/pipeline.ts';
import { workerClonePath } from '../stages/validate/index.ts';
import { abortOnSignals } from '../pipeline/signals.ts';
import { mineWindow } from './window.ts';

const { values } = parseArgs({
  options: {
    clone: { type: 'string' },
    repo: { type: 'string' },
    since: { type: 'string' },
    until: { type: 'string' },
    workers: { type: 'string', default: '1,2' },
    concurrency: { type: 'string', default: '1' },
    queue: { type: 'string' },
    keep: { type: 'boolean' },
    data: { type: 'string' },
  },
});
const fleet = values.workers.split(',').map((s) => Number(s.trim()));
if (fleet.some((n) => !Number.isInteger(n) || n < 1)) {
  console.error(`bench-scale: --workers ${values.workers}: give worker counts, e.g. 1,2`);
  process.exit(2);
}
const work = values.data ? resolve(values.data) : await mkdtemp(join(tmpdir(), 'foresight-bench-scale-'));
await mkdir(work, { recursive: true });
const { repo, clone, dataRoot, log, env } = await mineWindow({
  work,
  clone: values.clone, repo: values.repo, since: values.since, until: values.until,
  // Other runs on this host keep their images.
  env: { FORESIGHT_ENV_KEEP: process.env.FORESIGHT_ENV_KEEP ?? '500' },
});
// Ctrl-C or SIGTERM: the in-process validate removes its containers, the workers and redis are stopped.
const owner = abortOnSignals({ onSignal: (sig) => log.warn(`${sig}: stopping the workers and this pass's containers`) });
const base = { dataRoot, repo: { name: repo, clone }, log, signal: owner.signal };

/** A private redis-server, or the one --queue names. */
async function redisAt(): Promise<{ url: string; stop: () => Promise<void> }> {
  if (values.queue) return { url: values.queue, stop: async () => undefined };
  if (spawnSync('redis-server', ['--version']).error) throw new Error('redis-server is not installed: bash scripts/setup.sh, or pass --queue redis://HOST:PORT');
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as { port: number }).port;
  await new Promise<void>((r) => srv.close(() => r()));
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--loglevel', 'warning'], { stdio: 'ignore' });
  const url = `redis://127.0.0.1:${port}`;
  const { Redis } = await import('ioredis');
  for (let i = 0; ; i++) {
    const c = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    c.on('error', () => undefined);
    const ok = await c.connect().then(() => c.ping()).then(() => true, () => false);
    c.disconnect();
    if (ok) break;
    if (i > 100) throw new Error(`redis-server did not start on ${url}`);
    await sleep(50);
  }
  return { url, stop: async () => void child.kill('SIGTERM') };
}

function startWorker(url: string, dir: string): { child: ChildProcess; ready: Promise<void>; exit: Promise<unknown> } {
  const child = spawn(process.execPath, ['--import', 'tsx', join(PROJECT_ROOT, 'pipeline/bin.ts'), 'worker', '--queue', url, '--data', dir, '--concurrency', values.concurrency, '-q'], { cwd: PROJECT_ROOT, env, stdio: 'ignore' });
  const exit = new Promise((r) => child.on('close', r));
  // Ready once its log names the queue (it writes nothing to the terminal with -q).
  const ready = (async () => {
    for (let i = 0; i < 1200; i++) {
      const text = await readFile(join(dir, 'worker', logName(child.pid!)), 'utf8').catch(() => '');
      if (text.includes('taking')) return;
      if (child.exitCode !== null) throw new Error(`worker in ${dir} exited with ${child.exitCode}`);
      await sleep(100);
    }
    throw new Error(`worker in ${dir} did not start`);
  })();
  return { child, ready, exit };
}

/** The worker's own log file (pipeline/worker names it after host and pid). */
function logName(pid: number): string {
  return `${`${hostname()}:${pid}`.replace(/[^\w.-]/g, '_')}.log`;
}

type Row = { instance_id: string; cost: { execMs: number; wallMs: number; containerStarts: number } | null };
async function items(): Promise<{ rows: Row[]; bytes: number[] }> {
  const lines = (await readFile(join(stageDir(dataRoot, repo, 'validate'), 'items.jsonl'), 'utf8')).trim().split('\n').filter(Boolean);
  return { rows: lines.map((l) => JSON.parse(l) as Row), bytes: lines.map((l) => Buffer.byteLength(l)) };
}
const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? 0 : s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

// Untimed: builds every env image the window needs (and is the local reference).
const w0 = performance.now();
await runPipeline({ ...base, config: loadConfig(env), only: 'validate', force: true });
const localS = (performance.now() - w0) / 1000;
const local = await items();

// Each worker host already holds its clone and the era choices of earlier runs (a worker clones and
// chooses on first use: in the first timed pass, and in the next only on the hosts new to it, which
// made two workers look 2.36x as fast as one).
for (let i = 1; i <= Math.max(...fleet); i++) {
  const host = join(work, `worker-${i}`);
  const dir = workerClonePath(host, repo);
  await mkdir(repoDataDir(host, repo), { recursive: true });
  // Absent when the warm-up pass chose nothing: nothing to carry over.
  await copyFile(join(repoDataDir(dataRoot, repo), CHOICE_FILE), join(repoDataDir(host, repo), CHOICE_FILE)).catch(() => undefined);
  if (spawnSync('git', ['-C', dir, 'rev-parse', '--git-dir'], { stdio: 'ignore' }).status === 0) continue;
  const r = spawnSync('git', ['clone', '--no-checkout', '--quiet', clone, dir], { stdio: 'inherit' });
  if (r.status !== 0) throw new Error(`bench-scale: git clone ${clone} ${dir} failed`);
}

const redis = await redisAt();
const results: Array<{ workers: number; wallS: number; validated: number; medianChainS: number; medianExecS: number }> = [];
try {
  const { Redis } = await import('ioredis');
  for (const n of fleet) {
    const admin = new Redis(redis.url, { maxRetriesPerRequest: 1 });
    await admin.flushdb();
    admin.disconnect();
    // Worker i keeps its data folder (its clone) across passes, as a host would.
    const workers = Array.from({ length: n }, (_, i) => startWorker(redis.url, join(work, `worker-${i + 1}`)));
    try {
      await Promise.all(workers.map((w) => w.ready));
      owner.signal.throwIfAborted();
      const t0 = performance.now();
      await runPipeline({ ...base, config: loadConfig({ ...env, FORESIGHT_QUEUE: redis.url }), only: 'validate', force: true });
      const wallS = (performance.now() - t0) / 1000;
      const validated = (await items()).rows.filter((r) => r.cost !== null);
      results.push({ workers: n, wallS, validated: validated.length, medianChainS: median(validated.map((r) => r.cost!.wallMs)) / 1000, medianExecS: median(validated.map((r) => r.cost!.execMs)) / 1000 });
    } finally {
      for (const w of workers) w.child.kill('SIGTERM');
      await Promise.all(workers.map((w) => w.exit));
    }
  }
} finally {
  await redis.stop();
  owner.dispose();
}

const validatedLocal = local.rows.filter((r) => r.cost !== null);
console.log(`repository: ${repo}${values.since || values.until ? ` (fixes ${values.since ?? '…'} to ${values.until ?? '…'})` : ''}; chains: ${local.rows.length}, validated in containers: ${validatedLocal.length}; worker concurrency: ${values.concurrency}`);
console.log(`local validate (in-process, --jobs ${loadConfig(env).validate.jobs}, untimed warm-up that builds the images): ${localS.toFixed(1)} s`);
console.log(`per chain (local pass): median wall ${(median(validatedLocal.map((r) => r.cost!.wallMs)) / 1000).toFixed(1)} s, median in-container ${(median(validatedLocal.map((r) => r.cost!.execMs)) / 1000).toFixed(1)} s, mean wall ${(validatedLocal.reduce((a, r) => a + r.cost!.wallMs, 0) / Math.max(1, validatedLocal.length) / 1000).toFixed(1)} s`);
console.log(`job result size (a validated item as it crosses Redis): median ${(median(local.bytes) / 1024).toFixed(0)} KiB, max ${(Math.max(...local.bytes) / 1024).toFixed(0)} KiB`);
console.log('| workers | validate wall | chains/min | speed-up vs 1 worker | median chain wall | median in-container |');
console.log('|---|---|---|---|---|---|');
const one = results.find((r) => r.workers === 1);
for (const r of results) {
  console.log(`| ${r.workers} | ${r.wallS.toFixed(1)} s | ${((r.validated / r.wallS) * 60).toFixed(2)} | ${one ? (one.wallS / r.wallS).toFixed(2) : '-'} | ${r.medianChainS.toFixed(1)} s | ${r.medianExecS.toFixed(1)} s |`);
}
if (values.keep || values.data) console.log(`artifacts kept in ${work}`);
else await rm(work, { recursive: true, force: true });
