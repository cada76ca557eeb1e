import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, onTestFinished, vi } from 'vitest';
import { createLogger } from '../../core/foundation/log.ts';
import { HEARTBEAT_MS, NOTE_MIN_INTERVAL_MS, ProgressTracker, stopProgressBars } from '../../core/foundation/progress.ts';

/** What the logger writes on stderr, each line with the (fake) time it was written; stderr a terminal or not. */
function captureStderr(tty: boolean): { lines: () => string[]; at: () => Array<[ms: number, line: string]>; raw: () => string } {
  const written: Array<[number, string]> = [];
  vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
    written.push([Date.now(), String(chunk)]);
    return true;
  });
  const had = Object.getOwnPropertyDescriptor(process.stderr, 'isTTY');
  Object.defineProperty(process.stderr, 'isTTY', { value: tty, configurable: true });
  onTestFinished(() => {
    if (had) Object.defineProperty(process.stderr, 'isTTY', had);
    else delete (process.stderr as { isTTY?: boolean }).isTTY;
  });
  const raw = () => written.map(([, c]) => c).join('');
  return {
    raw,
    lines: () => raw().split('\n').filter(Boolean),
    at: () => written.flatMap(([t, c]) => c.split('\n').filter(Boolean).map((l) => [t, l] as [number, string])),
  };
}

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'foresight-progress-'));
  vi.useFakeTimers({ toFake: ['Date', 'setTimeout', 'clearTimeout'] });
  vi.setSystemTime(0);
});
afterEach(async () => {
  stopProgressBars();
  vi.useRealTimers();
  vi.restoreAllMocks();
  await rm(dir, { recursive: true, force: true });
});

describe('notes inside a long item', () => {
  it('trial: stderr not a terminal, a chain ran 219 s with nothing printed → its state and run at once, then a line at least every 30 s', () => {
    const out = captureStderr(false);
    const stage = createLogger().child({ stage: 'validate' });
    stage.progress('validating chains', 0, 5);
    const chain = stage.child({ instance_id: 'minilib__1-9' });
    chain.child({ state: 'S1', run: 1 }).note("S1 run 1/3 (pr1_base + PR1's tests)");
    // A change right after is held back (at most one line per NOTE_MIN_INTERVAL_MS), then shown.
    vi.advanceTimersByTime(2000);
    chain.child({ state: 'S2', run: 1 }).note('S2 run 1/3 (pr1_head)');
    vi.advanceTimersByTime(NOTE_MIN_INTERVAL_MS);
    // Then one state runs for 219 s without a word of its own.
    vi.setSystemTime(20_000);
    chain.child({ state: 'S3', run: 1 }).note("S3 run 1/3 (pr1_head + PR2's tests)");
    vi.advanceTimersByTime(219_000);
    chain.note(null);
    const at = out.at();
    expect(at.slice(0, 4)).toEqual([
      [0, '[validate] validating chains 0/5 (starting)'],
      [0, "[validate] minilib__1-9: S1 run 1/3 (pr1_base + PR1's tests)"],
      [NOTE_MIN_INTERVAL_MS, '[validate] minilib__1-9: S2 run 1/3 (pr1_head)'],
      [20_000, "[validate] minilib__1-9: S3 run 1/3 (pr1_head + PR2's tests)"],
    ]);
    // The heartbeats: the current note again, with how long it has run, never more than 30 s apart.
    const beats = at.slice(4);
    expect(beats.length).toBeGreaterThanOrEqual(Math.floor(219_000 / HEARTBEAT_MS));
    expect(beats[0]![1]).toBe("[validate] minilib__1-9: S3 run 1/3 (pr1_head + PR2's tests) (30s so far)");
    expect(beats.at(-1)![1]).toMatch(/S3 run 1\/3 .* \(3m\d\ds so far\)$/);
    const times = at.slice(3).map(([t]) => t);
    for (let i = 1; i < times.length; i++) expect(times[i]! - times[i - 1]!).toBeLessThanOrEqual(HEARTBEAT_MS);
    expect(239_000 - times.at(-1)!).toBeLessThanOrEqual(HEARTBEAT_MS);
    // Once the chain is done its note is gone: no more heartbeats.
    const before = out.lines().length;
    vi.advanceTimersByTime(5 * HEARTBEAT_MS);
    expect(out.lines()).toHaveLength(before);
  });

  it('trial: bisection probes were silent → "probe n of at most budget" is a note like a state run, one per chain at --jobs 2', () => {
    const out = captureStderr(false);
    const stage = createLogger().child({ stage: 'validate' });
    const a = stage.child({ instance_id: 'minilib__6-10' });
    const b = stage.child({ instance_id: 'minilib__3-8' });
    a.child({ state: 'a1b2c3d4e5f6', probe: 3 }).note("bisecting PR2's fail->pass tests: probe 3 of at most 28 at a1b2c3d4e5 (bisect)");
    b.child({ state: 'S5', run: 3 }).note('S5 run 3/3 (pr2_head)');
    vi.advanceTimersByTime(HEARTBEAT_MS);
    a.note(null);
    b.note(null);
    expect(out.lines()).toEqual([
      "[validate] minilib__6-10: bisecting PR2's fail->pass tests: probe 3 of at most 28 at a1b2c3d4e5 (bisect)",
      '[validate] minilib__3-8: S5 run 3/3 (pr2_head)',
      "[validate] minilib__6-10: bisecting PR2's fail->pass tests: probe 3 of at most 28 at a1b2c3d4e5 (bisect) (30s so far)",
      '[validate] minilib__3-8: S5 run 3/3 (pr2_head) (30s so far)',
    ]);
  });

  it('on a terminal the running chain\'s note shows beside the bar, and goes with it', () => {
    const out = captureStderr(true);
    // A wide terminal: cli-progress trims the line to its width.
    const had = Object.getOwnPropertyDescriptor(process.stderr, 'columns');
    Object.defineProperty(process.stderr, 'columns', { value: 200, configurable: true });
    onTestFinished(() => {
      if (had) Object.defineProperty(process.stderr, 'columns', had);
      else delete (process.stderr as { columns?: number }).columns;
    });
    const stage = createLogger().child({ stage: 'validate' });
    stage.progress('validating chains', 0, 2);
    stage.child({ instance_id: 'minilib__1-9' }).child({ state: 'S4', run: 2 }).note("S4 run 2/3 (pr2_base + PR2's tests)");
    vi.advanceTimersByTime(1000);
    expect(out.raw()).toMatch(/\[validate\] validating chains =*-+ 0\/2 \(starting\) · minilib__1-9: S4 run 2\/3 \(pr2_base \+ PR2's tests\)/);
    // No separate line for it: the bar shows it.
    expect(out.raw()).not.toContain("minilib__1-9: S4 run 2/3 (pr2_base + PR2's tests)\n");
    stage.child({ instance_id: 'minilib__1-9' }).note(null);
    vi.setSystemTime(10_000);
    stage.progress('validating chains', 2, 2);
    expect(out.raw()).toContain('[validate] validating chains 2/2 (0.2/s, took 10s)\n');
  });
});

describe('the rate leaves one-time setup out', () => {
  it('trial: the first ETA counted the one-time image build as a chain ("ETA 27m36s" for five demo chains) → the build is left out', async () => {
    const out = captureStderr(false);
    const file = join(dir, 'log.jsonl');
    const stage = createLogger({ file }).child({ stage: 'validate' });
    stage.progress('validating chains', 0, 5);
    // The first chain builds the base and env images for 300 s, then runs its states for 40 s.
    const built = stage.child({ instance_id: 'minilib__1-9' }).setup(1);
    vi.setSystemTime(300_000);
    built();
    vi.setSystemTime(340_000);
    stage.progress('validating chains', 1, 5);
    // 4 chains left at 40 s each: 2m40s, not 4 x 5m40s.
    expect(out.lines().at(-1)).toBe('[validate] validating chains 1/5 (1.5/min, ETA 2m40s)');
    const last = JSON.parse((await readFile(file, 'utf8')).trim().split('\n').at(-1)!) as Record<string, unknown>;
    expect(last).toMatchObject({ msg: 'progress', done: 1, eta_s: 160, setup_s: 300 });
    // The final line still says how long the loop took in all.
    vi.setSystemTime(500_000);
    stage.progress('validating chains', 5, 5);
    expect(out.lines().at(-1)).toBe('[validate] validating chains 5/5 (1.5/min, took 8m20s)');
  });

  it('with chains run n at once, a build holds one of n slots: a 1/n share of its time leaves the rate; a build under way counts already', () => {
    const loop = new ProgressTracker({ done: 0, total: 10 }, 0);
    const end = loop.beginSetup(0, 2);
    // At 200 s one chain (of the other slot) is done while the build still runs: 100 s of the loop's 200 were setup.
    expect(loop.stats({ done: 1, total: 10 }, 200_000)).toMatchObject({ setupMs: 100_000, rate: 1 / 100 });
    end(300_000);
    expect(loop.stats({ done: 3, total: 10 }, 450_000)).toMatchObject({ setupMs: 150_000, rate: 3 / 300 });
    // Ending it twice changes nothing.
    end(900_000);
    expect(loop.stats({ done: 3, total: 10 }, 450_000).setupMs).toBe(150_000);
  });
});
