/**
 * Which commit the search probes next (pure index arithmetic, search.ts's helpers): where to look for a
 * good end, and where to bisect when commits in the range cannot run.
 */
import type { Step } from './types.ts';

/** First-parent commits, oldest first. */
type Mainline = ReadonlyArray<{ sha: string; date: string }>;
type Outcome = Step['outcome'];

/**
 * Where to look for a good end, in order: the commit before the oldest candidate, then the candidates'
 * own commits oldest first (the tested behaviour may not exist before them), then commits 1, 2, 4, 8 ...
 * back from the bad end down to the start of the time window, then the window's start.
 */
export function goodEndOrder(
  mainline: Mainline,
  bad: number,
  candidates: readonly number[],
  windowDays: number,
): Array<{ index: number; from: 'candidates' | 'window' }> {
  const out: Array<{ index: number; from: 'candidates' | 'window' }> = [];
  const add = (index: number, from: 'candidates' | 'window'): void => {
    if (index >= 0 && index < bad && !out.some((o) => o.index === index)) out.push({ index, from });
  };
  const cands = candidatesBelow(candidates, bad);
  if (cands.length) {
    add(cands[0]! - 1, 'candidates');
    for (const c of cands) add(c, 'candidates');
  }
  const start = windowStart(mainline, bad, windowDays);
  for (let back = 1; bad - back > start; back *= 2) add(bad - back, 'window');
  add(start, 'window');
  return out;
}

/** Blame's candidates below the bad end, oldest first, once each. */
export function candidatesBelow(candidates: readonly number[], bad: number): number[] {
  return [...new Set(candidates)].filter((i) => i >= 0 && i < bad).sort((a, b) => a - b);
}

/**
 * The oldest index of the fallback window: commits at most `windowDays` older than the bad end. Dates
 * along the first-parent line are not monotonic (a PR authored a year before it merged): the walk back
 * stops only after 10 older commits in a row, not at the first (Django fd93db97c7: the window ended 29
 * commits back, at one such date, and the search never looked past it).
 */
export function windowStart(mainline: Mainline, bad: number, windowDays: number): number {
  const from = Date.parse(mainline[bad]!.date) - windowDays * 86_400_000;
  let start = bad;
  for (let i = bad - 1, older = 0; i >= 0 && older < 10; i--) {
    if (Date.parse(mainline[i]!.date) >= from) {
      start = i;
      older = 0;
    } else older++;
  }
  return start;
}

/**
 * The next index of (lo, hi) to probe, or null when every one is tested. The middle, and when it was
 * skipped: next to it when the skip stands alone (or two in a row: its neighbours split the range almost
 * as well), else the middle of the larger side of the skips around it (the lower on a tie), so a long
 * stretch that cannot run (Django 28781-29112: the 3.9 era's asgiref lacks what Django imports from then
 * on) is halved around, not walked through one commit at a time (f4b06a3cc1: 15 probes fell there while
 * the inducer sat 4 commits above the good end). "Around" spans every skip the range holds once there are
 * three: a middle that lands in the stretch again is then not walked out of once more.
 */
export function nextProbe(lo: number, hi: number, known: ReadonlyMap<number, Outcome>): number | null {
  if (hi - lo <= 1) return null;
  const mid = (lo + hi) >> 1;
  if (!known.has(mid)) return mid;
  let a = mid;
  let b = mid;
  while (a - 1 > lo && known.has(a - 1)) a--;
  while (b + 1 < hi && known.has(b + 1)) b++;
  const skips = [...known].filter(([i, o]) => o === 'skip' && i > lo && i < hi).map(([i]) => i);
  if (b - a < 2 && skips.length < 3) {
    for (const i of [b + 1, a - 1]) if (i > lo && i < hi) return i;
    return null;
  }
  if (skips.length >= 3) {
    a = Math.min(a, ...skips);
    b = Math.max(b, ...skips);
  }
  const below = nextProbe(lo, a, known);
  const above = nextProbe(b, hi, known);
  if (below !== null && above !== null) return a - lo >= hi - b ? below : above;
  // Both sides tested: what is left lies between the skips.
  return below ?? above ?? untested(a, b, known);
}

/** The untested index of (lo, hi) nearest its middle, or null. */
function untested(lo: number, hi: number, known: ReadonlyMap<number, Outcome>): number | null {
  const mid = (lo + hi) >> 1;
  for (let d = 0; mid - d > lo || mid + d + 1 < hi; d++) {
    for (const i of [mid - d, mid + d + 1]) if (i > lo && i < hi && !known.has(i)) return i;
  }
  return null;
}
