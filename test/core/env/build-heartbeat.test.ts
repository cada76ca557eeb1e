/**
 * A running build step is never silent for 30 s: every STEP_HEARTBEAT_MS it says how long it has run, the
 * install's current command and its last output line; it stops with the step. A lock held by another
 * process says how long it has been waited for.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { STEP_HEARTBEAT_MS, stepHeartbeat } from '../../../core/env/image/docker-image.ts';
import { WAIT_NOTE_MS, withLock } from '../../../core/env/image/lock.ts';
import { HEARTBEAT_MS } from '../../../core/foundation/progress.ts';

afterEach(() => {
  vi.useRealTimers();
});

describe('build heartbeats', () => {
  it('names the elapsed time, the current command and its last output line, under the 30 s a log may stay silent', () => {
    vi.useFakeTimers();
    const lines: string[] = [];
    const beat = stepHeartbeat({ log: (c) => void lines.push(c), what: 'env 0123abcd install' });
    expect(STEP_HEARTBEAT_MS).toBeLessThan(HEARTBEAT_MS);
    vi.advanceTimersByTime(STEP_HEARTBEAT_MS);
    expect(lines).toEqual([`env 0123abcd install: running for ${STEP_HEARTBEAT_MS / 1000}s (no output yet)\n`]);
    beat.onOutput('\n[foresight] $ pip install -e .\nProcessing /tmp/testbed\n');
    beat.onOutput('Collecting sqlparse\r\n');
    vi.advanceTimersByTime(STEP_HEARTBEAT_MS);
    expect(lines[1]).toBe(`env 0123abcd install: running for ${(2 * STEP_HEARTBEAT_MS) / 1000}s (pip install -e .; last output: Collecting sqlparse)\n`);
    beat.stop();
    vi.advanceTimersByTime(10 * STEP_HEARTBEAT_MS);
    expect(lines).toHaveLength(2);
  });

  it('without a log nothing is scheduled', () => {
    vi.useFakeTimers();
    const beat = stepHeartbeat({ log: undefined, what: 'x' });
    expect(vi.getTimerCount()).toBe(0);
    beat.stop();
  });

  it('a wait for another holder of a build lock is reported while it lasts', async () => {
    expect(WAIT_NOTE_MS).toBeLessThan(30_000);
    const dir = await mkdtemp(path.join(tmpdir(), 'foresight-lockwait-'));
    const every = 1_000; // the default (WAIT_NOTE_MS) scaled down: the same code path without 25 s of waiting
    try {
      let release!: () => void;
      const held = withLock(dir, 'k', 60_000, () => new Promise<void>((r) => (release = r)));
      await new Promise((r) => setTimeout(r, 200));
      const waits: number[] = [];
      const start = Date.now();
      const second = withLock(dir, 'k', 60_000, async () => Date.now() - start, (ms) => waits.push(ms), every);
      await new Promise((r) => setTimeout(r, 2_600));
      release();
      await held;
      expect(await second).toBeGreaterThanOrEqual(2_500);
      expect(waits.length).toBeGreaterThanOrEqual(1);
      expect(waits.length).toBeLessThanOrEqual(3);
      expect(waits[0]).toBeGreaterThanOrEqual(every);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 30_000);
});
