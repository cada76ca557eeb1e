/**
 * Real Docker: a chain container over a tiny git repo, at several states.
 * Skipped only when the daemon is unreachable AND CI is unset; in CI a missing daemon fails loudly.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ForesightError } from '../../../core/foundation/errors.ts';
import {
  assertDockerReachable,
  DEFAULT_BASE_ALIAS,
  connectDocker,
  ensureImage,
  isDockerReachable,
  ownContainerIds,
  openChainEnv,
  type ChainEnv,
} from '../../../core/env/index.ts';
import { ownerLabels } from '../../../core/env/container/cleanup.ts';
import { runExec } from '../../../core/env/container/exec.ts';
import { ChainEnvPool } from '../../../core/env/container/pool.ts';
import { pytestRunner } from '../../../core/env/runners/pytest/index.ts';
import { isContainerGone, makeCalcRepo } from '../../helpers/calc-repo.ts';

const docker = connectDocker();
const reachable = await isDockerReachable(docker);
const skip = !reachable && !process.env['CI'];
if (skip) {
  console.warn('[docker-env.test] SKIPPED: Docker is not reachable and CI is unset (start dockerd to run these tests)');
}

const IMAGE = DEFAULT_BASE_ALIAS;

describe('docker plumbing without a daemon', () => {
  it('an unreachable daemon is a ForesightError naming the socket, with the remedy', async () => {
    const nowhere = connectDocker('unix:///nonexistent/docker.sock');
    const err = await assertDockerReachable(nowhere, 2000).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ForesightError);
    expect((err as ForesightError).message).toMatch(/^Docker is not reachable at \/nonexistent\/docker\.sock/);
    expect((err as ForesightError).remedy).toContain('dockerd >/var/log/dockerd.log 2>&1 &');
    expect(await isDockerReachable(nowhere, 2000)).toBe(false);
  });
});

describe.skipIf(skip)('chain env (Docker)', () => {
  let tmp: string;
  let revs: { A: string; B: string; C: string };
  let env: ChainEnv;
  const gitDir = (): string => path.join(tmp, 'repo', '.git');

  beforeAll(async () => {
    await assertDockerReachable(docker); // in CI: fails loudly here when Docker is missing
    await ensureImage(IMAGE, { docker });
    tmp = mkdtempSync(path.join(tmpdir(), 'foresight-docker-env-'));
    mkdirSync(path.join(tmp, 'repo'));
    revs = makeCalcRepo(path.join(tmp, 'repo'));
    env = await openChainEnv({ gitDir: gitDir(), image: IMAGE, runner: pytestRunner, docker });
  });

  afterAll(async () => {
    await env?.close();
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  });

  it('ensureImage: present is a no-op; a missing image other than the base one is a ForesightError', async () => {
    const lines: string[] = [];
    await ensureImage(IMAGE, { log: { info: (m: string) => void lines.push(m) } });
    expect(lines).toEqual([]);
    await expect(ensureImage('foresight-no-such-image:never', { docker })).rejects.toThrow(
      /Docker image foresight-no-such-image:never is not present/,
    );
  });

  it('runs the container locked down', async () => {
    const info = await docker.getContainer(env.containerId).inspect();
    expect(info.Config.User).toBe('65534:65534');
    expect(info.Config.Labels['foresight.run']).toBe('1');
    expect(info.HostConfig.NetworkMode).toBe('none');
    expect(info.HostConfig.Memory).toBe(2 * 1024 ** 3);
    expect(info.HostConfig.PidsLimit).toBe(512);
    expect(info.HostConfig.NanoCpus).toBe(1e9);
    expect(info.HostConfig.CapDrop).toEqual(['ALL']);
    expect(info.HostConfig.SecurityOpt).toEqual(['no-new-privileges']);
    expect(info.HostConfig.Binds?.some((b) => b.endsWith(':/src:ro'))).toBe(true);
    // Disk: nothing writable but a tmpfs of the disk limit at /tmp (overlay2 cannot limit a writable layer).
    expect(info.HostConfig.ReadonlyRootfs).toBe(true);
    expect(info.HostConfig.Tmpfs?.['/tmp']).toContain(`size=${2 * 1024 ** 3}`);
    const exec = await docker.getContainer(env.containerId).exec({ Cmd: ['sh', '-c', 'touch /opt/x 2>&1; touch /testbed-x 2>&1; df -k /tmp | tail -1'], AttachStdout: true, AttachStderr: true, Tty: true });
    // A TTY: one plain stream, no multiplexing frames.
    const stream = await exec.start({ Tty: true });
    const out = await new Promise<string>((done) => {
      let text = '';
      stream.on('data', (b: Buffer) => (text += b.toString('utf8')));
      stream.on('end', () => done(text));
    });
    expect(out).toMatch(/touch: cannot touch '\/opt\/x': Read-only file system/);
    expect(out).toMatch(/touch: cannot touch '\/testbed-x': Read-only file system/);
    expect(out).toMatch(new RegExp(`tmpfs\\s+${2 * 1024 ** 2}\\s`));
    expect(await ownContainerIds(docker)).toContain(env.containerId);
  });

  it('at A with the tests of B overlaid: the new test fails, the old one passes', async () => {
    const run = await env.runState({ checkout: revs.A, overlay: revs.B, testFiles: ['tests/test_calc.py'] });
    expect(run.kind, run.outputTail).toBe('report');
    expect(run.exitCode).toBe(1);
    expect(run.kind).not.toBe('timeout');
    expect(run.parsed).toEqual({
      tests: { 'tests/test_calc.py::test_add_zero': 'pass', 'tests/test_calc.py::test_add': 'fail' },
      collectionErrors: [],
      failureKinds: { 'tests/test_calc.py::test_add': 'AssertionError' },
    });
  });

  it('at B both pass', async () => {
    const run = await env.runState({ checkout: revs.B, overlay: null, testFiles: ['tests/test_calc.py'] });
    expect(run.kind, run.outputTail).toBe('report');
    expect(run.exitCode).toBe(0);
    expect(run.parsed.tests).toEqual({
      'tests/test_calc.py::test_add_zero': 'pass',
      'tests/test_calc.py::test_add': 'pass',
    });
  });

  it('compiled modules kept between states never stand for a changed file of the same size', async () => {
    // calc.py is as long at A as at B: only its mtime tells the cached .pyc is stale.
    const outcomes: string[] = [];
    for (const checkout of [revs.A, revs.B, revs.A, revs.B]) {
      const run = await env.runState({ checkout, overlay: revs.B, testFiles: ['tests/test_calc.py'] });
      expect(run.kind, run.outputTail).toBe('report');
      outcomes.push(run.kind === 'report' ? (run.parsed.tests['tests/test_calc.py::test_add'] ?? 'absent') : run.kind);
    }
    expect(outcomes).toEqual(['fail', 'pass', 'fail', 'pass']);
    const cached = await runExec(docker.getContainer(env.containerId), ['sh', '-c', 'find /tmp/testbed.pycache -name "calc*.pyc" | wc -l'], { capture: 'stdout' });
    expect(Number(cached.text.trim())).toBeGreaterThan(0);
  });

  it('a pooled container is reused by the next chain only after a reset: no stray process, nothing left in /tmp', async () => {
    const pool = new ChainEnvPool(docker, 1);
    const STRAYS = 'for d in /proc/[0-9]*; do tr "\\0" " " <"$d/cmdline" 2>/dev/null; echo; done | grep -c "^sleep 300 "';
    const open = () => openChainEnv({ gitDir: gitDir(), image: IMAGE, runner: pytestRunner, docker });
    const first = await pool.acquire(IMAGE, open);
    expect(first.reused).toBe(false);
    const c = docker.getContainer(first.env.containerId);
    try {
      expect((await first.env.runState({ checkout: revs.A, overlay: revs.B, testFiles: ['tests/test_calc.py'] })).kind).toBe('report');
      // What a test could leave behind: a daemon and a file.
      await runExec(c, ['sh', '-c', 'nohup sleep 300 >/dev/null 2>&1 & echo x > /tmp/leftover'], { capture: 'combined' });
      const before = await runExec(c, ['sh', '-c', STRAYS], { capture: 'stdout' });
      expect(Number(before.text.trim())).toBe(1);
      await pool.release(IMAGE, first.env);
      // A second container released while one is idle is removed, not kept.
      const extra = await open();
      await pool.release(IMAGE, extra);
      expect(await isContainerGone(docker, extra.containerId)).toBe(true);

      const again = await pool.acquire(IMAGE, open);
      expect(again).toEqual({ env: first.env, reused: true });
      const after = await runExec(c, ['sh', '-c', `${STRAYS}; ls -A /tmp`], { capture: 'stdout' });
      const [procs, ...tmpFiles] = after.text.trim().split('\n');
      expect(Number(procs)).toBe(0);
      expect(tmpFiles.sort()).toEqual(['.gitconfig', 'testbed', 'testbed.pycache', 'testbed.stamp']);
      const run = await again.env.runState({ checkout: revs.B, overlay: null, testFiles: ['tests/test_calc.py'] });
      expect(run.kind === 'report' && run.parsed.tests).toEqual({ 'tests/test_calc.py::test_add_zero': 'pass', 'tests/test_calc.py::test_add': 'pass' });
      await pool.release(IMAGE, again.env);
      expect(pool.stats).toEqual({ opened: 1, reused: 1, discarded: 0, evicted: 0 });
    } finally {
      await pool.close();
    }
    expect(await isContainerGone(docker, first.env.containerId)).toBe(true);
    // One idle container per key, two in all: releasing a third key's container removes the oldest.
    const capped = new ChainEnvPool(docker, 1, 2);
    try {
      const envs = [await open(), await open(), await open()];
      for (const [i, e] of envs.entries()) await capped.release(`era-${i}`, e);
      expect(await isContainerGone(docker, envs[0]!.containerId)).toBe(true);
      expect(await isContainerGone(docker, envs[1]!.containerId)).toBe(false);
      const fresh = await capped.acquire('era-0', open);
      await fresh.env.close();
      expect(fresh.reused).toBe(false);
      expect(capped.stats.evicted).toBe(1);
    } finally {
      await capped.close();
    }
  });

  it('a test file that does not exist at the checkout is simply absent', async () => {
    const run = await env.runState({
      checkout: revs.A,
      overlay: null,
      testFiles: ['tests/test_calc.py', 'tests/test_env.py'],
    });
    expect(run.kind, run.outputTail).toBe('report');
    expect(run.parsed).toEqual({ tests: { 'tests/test_calc.py::test_add_zero': 'pass' }, collectionErrors: [] });
    // ... also when absent from the overlay: nothing is overlaid, nothing runs.
    const none = await env.runState({ checkout: revs.A, overlay: revs.B, testFiles: ['tests/test_env.py'] });
    expect(none.kind, none.outputTail).toBe('report');
    expect(none.exitCode).toBe(0);
    expect(none.parsed).toEqual({ tests: {}, collectionErrors: [] });
  });

  it('a module that fails to import is a collection error; the other files still run', async () => {
    const run = await env.runState({
      checkout: revs.C,
      overlay: null,
      testFiles: ['tests/test_broken.py', 'tests/test_calc.py'],
    });
    expect(run.kind, run.outputTail).toBe('report');
    expect(run.exitCode).toBe(1);
    expect(run.parsed.collectionErrors).toEqual(['tests/test_broken.py']);
    expect(run.parsed.tests).toEqual({
      'tests/test_calc.py::test_add_zero': 'pass',
      'tests/test_calc.py::test_add': 'pass',
    });
  });

  it('runs as uid 65534, with only the loopback interface, in a cleaned tree', async () => {
    for (let i = 0; i < 2; i++) {
      const run = await env.runState({ checkout: revs.C, overlay: null, testFiles: ['tests/test_env.py'] });
      expect(run.kind, run.outputTail).toBe('report');
      expect(run.parsed.tests, run.outputTail).toEqual({
        'tests/test_env.py::test_uid': 'pass',
        'tests/test_env.py::test_only_loopback': 'pass',
        'tests/test_env.py::test_clean_tree': 'pass',
      });
    }
  });

  it('rejects unsafe arguments', async () => {
    await expect(env.runState({ checkout: '--help', overlay: null, testFiles: [] })).rejects.toThrow(/invalid checkout/);
    await expect(env.runState({ checkout: revs.A, overlay: null, testFiles: ['../x.py'] })).rejects.toThrow(
      /invalid test file/,
    );
  });

  it('an unknown commit is a failed run, not a crash', async () => {
    const run = await env.runState({ checkout: 'f'.repeat(40), overlay: null, testFiles: ['tests/test_calc.py'] });
    expect(run.kind).not.toBe('report');
    expect(run.exitCode).toBe(91);
    expect(run.outputTail).toMatch(/is not in \/src/);
  });

  it('a test sleeping past runTimeoutSec=5 is timedOut, and the env still works afterwards', async () => {
    const slow = await openChainEnv({ gitDir: gitDir(), image: IMAGE, runner: pytestRunner, docker, runTimeoutSec: 5 });
    try {
      const run = await slow.runState({ checkout: revs.C, overlay: null, testFiles: ['tests/test_slow.py'] });
      expect(run.kind, run.outputTail).toBe('timeout');
      expect(run.kind).not.toBe('report');
      expect([124, 137]).toContain(run.exitCode);
      expect(run.durationMs).toBeGreaterThanOrEqual(5000);
      expect(run.durationMs).toBeLessThan(20_000);
      const after = await slow.runState({ checkout: revs.B, overlay: null, testFiles: ['tests/test_calc.py'] });
      expect(after.kind, after.outputTail).toBe('report');
      expect(after.exitCode).toBe(0);
    } finally {
      await slow.close();
    }
  });

  it('a container stopped behind its back is started again', async () => {
    await docker.getContainer(env.containerId).kill();
    const run = await env.runState({ checkout: revs.B, overlay: null, testFiles: ['tests/test_calc.py'] });
    expect(run.kind, run.outputTail).toBe('report');
    expect(run.exitCode).toBe(0);
  });

  it('the JS-side deadline kills the container when an exec does not end', async () => {
    const c = await docker.createContainer({
      Image: IMAGE,
      Cmd: ['sleep', 'infinity'],
      Labels: ownerLabels(),
      HostConfig: { NetworkMode: 'none', Init: true },
    });
    try {
      await c.start();
      const t0 = Date.now();
      const res = await runExec(c, ['sleep', '60'], {
        capture: 'combined',
        deadlineMs: 1000,
        onDeadline: async () => void (await c.kill()),
      });
      expect(res.deadlineHit).toBe(true);
      expect(Date.now() - t0).toBeLessThan(15_000);
      expect((await c.inspect()).State.Running).toBe(false);
    } finally {
      await c.remove({ force: true });
    }
  });
});
