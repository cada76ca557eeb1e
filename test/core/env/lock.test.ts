/**
 * The build locks (core/env/image/lock.ts): one holder per name at a time, in one process and across
 * processes; a live holder keeps its lock (it refreshes it) up to staleMs, a dead one's is taken over
 * promptly; an error of `fn` releases it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readdir, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { withLock } from '../../../core/env/image/lock.ts';
import { ForesightError } from '../../../core/foundation/errors.ts';
import { PROJECT_ROOT } from '../../../core/foundation/version.ts';

const dirs: string[] = [];
const children: ChildProcess[] = [];
afterAll(async () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

async function lockDir(): Promise<string> {
  const d = await mkdtemp(path.join(tmpdir(), 'foresight-lock-test-'));
  dirs.push(d);
  return d;
}

/** Another process holding `name` for holdMs; resolves once it holds it. */
async function holder(dir: string, name: string, staleMs: number, holdMs: number): Promise<{ child: ChildProcess; released: Promise<number> }> {
  const script = path.join(dir, `holder-${name}.mts`);
  await writeFile(
    script,
    [
      `import { withLock } from ${JSON.stringify(path.join(PROJECT_ROOT, 'core/env/image/lock.ts'))};`,
      `await withLock(${JSON.stringify(dir)}, ${JSON.stringify(name)}, ${staleMs}, async () => {`,
      "  process.stdout.write('locked\\n');",
      `  await new Promise((r) => setTimeout(r, ${holdMs}));`,
      '});',
      "process.stdout.write('released\\n');",
    ].join('\n'),
  );
  // node with tsx's loader, not the tsx CLI: one process, which SIGKILL kills.
  const child = spawn(process.execPath, ['--import', 'tsx', script], { cwd: PROJECT_ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
  children.push(child);
  let out = '';
  let onLocked: () => void = () => {};
  let onReleased: (at: number) => void = () => {};
  const locked = new Promise<void>((resolve) => (onLocked = resolve));
  const released = new Promise<number>((resolve) => (onReleased = resolve));
  child.stdout!.on('data', (c: Buffer) => {
    out += c.toString();
    if (out.includes('locked\n')) onLocked();
    if (out.includes('released\n')) onReleased(Date.now());
  });
  await Promise.race([locked, new Promise((_, reject) => child.once('exit', (code) => reject(new Error(`holder exited (${code}) before locking`))))]);
  return { child, released };
}

describe('withLock', () => {
  it('one holder per name at a time in a process; another name does not wait', async () => {
    const dir = await lockDir();
    let active = 0;
    let peak = 0;
    const order: string[] = [];
    const job = (name: string, tag: string) =>
      withLock(dir, name, 60_000, async () => {
        if (name === 'k') peak = Math.max(peak, ++active);
        order.push(`${tag}+`);
        await sleep(150);
        order.push(`${tag}-`);
        if (name === 'k') active--;
        return tag;
      });
    const results = await Promise.all([job('k', 'a'), job('k', 'b'), job('k', 'c'), job('other', 'o')]);
    expect(results).toEqual(['a', 'b', 'c', 'o']);
    expect(peak).toBe(1);
    // The other name ran beside the first holder of k.
    expect(order.indexOf('o+')).toBeLessThan(order.indexOf('a-'));
    expect(await readdir(dir)).toEqual([]);
  });

  it("an error of fn propagates and releases the lock", async () => {
    const dir = await lockDir();
    await expect(withLock(dir, 'e', 60_000, () => Promise.reject(new Error('build failed')))).rejects.toThrow('build failed');
    const t0 = Date.now();
    expect(await withLock(dir, 'e', 60_000, async () => 'next')).toBe('next');
    expect(Date.now() - t0).toBeLessThan(1000);
  });

  it('across processes: a live holder keeps its lock past the 10 s a dead one keeps it (it refreshes it), then hands it over', async () => {
    const dir = await lockDir();
    const { released } = await holder(dir, 'live', 30_000, 12_000);
    const got = await withLock(dir, 'live', 30_000, async () => Date.now());
    expect(got).toBeGreaterThanOrEqual(await released);
  }, 40_000);

  it('a holder still running after staleMs (a hung build) lets the lock go', async () => {
    const dir = await lockDir();
    const { released } = await holder(dir, 'hung', 2500, 6000);
    const t0 = Date.now();
    const got = await withLock(dir, 'hung', 2500, async () => Date.now());
    expect(got - t0).toBeLessThan(4000);
    expect(got).toBeLessThan(await released);
  }, 30_000);

  it('a lock of a killed process is taken over within the stale time (staleMs, at most 10 s)', async () => {
    const dir = await lockDir();
    for (const [name, staleMs, within] of [['dead', 2000, 4000], ['dead-build', 30 * 60_000, 13_000]] as const) {
      const { child } = await holder(dir, name, staleMs, 600_000);
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGKILL');
      await exited;
      const t0 = Date.now();
      expect(await withLock(dir, name, staleMs, async () => 'taken')).toBe('taken');
      expect(Date.now() - t0).toBeLessThan(within);
    }
  }, 60_000);

  it('a plain <name>.lock file left by an older version does not block', async () => {
    const dir = await lockDir();
    await writeFile(path.join(dir, 'old.lock'), JSON.stringify({ pid: 1, host: 'elsewhere', since: new Date().toISOString() }));
    const t0 = Date.now();
    expect(await withLock(dir, 'old', 60_000, async () => 'ok')).toBe('ok');
    expect(Date.now() - t0).toBeLessThan(1000);
  });

  it('a lock that cannot be taken (not a directory where the lock goes) is a ForesightError, not an endless wait', async () => {
    const dir = await lockDir();
    const blocker = path.join(dir, 'blocked.lockdir');
    await writeFile(blocker, '');
    await utimes(blocker, new Date(0), new Date(0));
    const err = await withLock(dir, 'blocked', 2000, async () => 'never').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ForesightError);
    expect((err as ForesightError).message).toContain('blocked.lockdir');
  });
});
