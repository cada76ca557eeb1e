/**
 * The bisection search on first-parent indices, each guard pinned by a test named after the mistake it
 * prevents. The probe reads an outcome table: the search sees only what it probes.
 */
import { describe, expect, it } from 'vitest';
import { goodEndOrder, searchFirstBad, type SearchOptions, type Step, type Verdict } from '../../../core/attribution/index.ts';
import { nextProbe } from '../../../core/attribution/probe-order.ts';

/**
 * Good, bad, skip (the test module cannot import), skip (X: infrastructure); F: passes the first time,
 * fails after (broken, but the test fails only sometimes); K: passes, then cannot run, then passes.
 * With the exception the report names: E fails with AssertionError, A with AttributeError (B names none).
 * P: of two fail->pass tests, t passes and u fails (u tests what the fix itself changed); Q: the same,
 * the report naming u's exception. T: passes with PR2's test changes on the commit's own module
 * (transplanted); W: fails with PR2's whole module laid over it, passes as T does (`recheck`).
 * Y: of three fail->pass tests, u fails and t, w pass; Z: all three fail; V: u and t fail, w passes.
 * R: t passes, u fails with AttributeError.
 */
type O = 'G' | 'B' | 'S' | 'X' | 'F' | 'K' | 'E' | 'A' | 'P' | 'Q' | 'T' | 'W' | 'Y' | 'Z' | 'V' | 'R';

/** A history of `table.length` commits, one a day, and a probe that reads the table. */
function history(table: string, over: Partial<SearchOptions> = {}) {
  const outcomes = [...table] as O[];
  const mainline = outcomes.map((_, i) => ({ sha: `c${i}`, date: new Date(Date.UTC(2024, 0, 1 + i)).toISOString() }));
  const probed: string[] = [];
  const probe = async (commit: string, role: Step['role']): Promise<Step> => {
    const nth = probed.filter((c) => c === commit).length;
    probed.push(commit);
    const at = outcomes[Number(commit.slice(1))]!;
    const o = at === 'F' ? (nth === 0 ? 'G' : 'B') : at === 'K' ? (nth % 2 ? 'X' : 'G') : at;
    if (o === 'T') return { commit, role, seconds: 0, transplanted: true, outcome: 'good' };
    const v: Verdict =
      o === 'G' ? { outcome: 'good' as const }
      : o === 'B' || o === 'W' ? { outcome: 'bad' as const, failing: ['t'] }
      : o === 'E' || o === 'A' ? { outcome: 'bad' as const, failing: ['t'], kinds: { t: o === 'E' ? 'AssertionError' : 'AttributeError' } }
      : o === 'P' ? { outcome: 'bad' as const, failing: ['u'], passing: ['t'] }
      : o === 'Q' ? { outcome: 'bad' as const, failing: ['u'], passing: ['t'], kinds: { u: 'AssertionError' } }
      : o === 'R' ? { outcome: 'bad' as const, failing: ['u'], passing: ['t'], kinds: { u: 'AttributeError' } }
      : o === 'Y' ? { outcome: 'bad' as const, failing: ['u'], passing: ['t', 'w'] }
      : o === 'V' ? { outcome: 'bad' as const, failing: ['t', 'u'], passing: ['w'] }
      : o === 'Z' ? { outcome: 'bad' as const, failing: ['t', 'u', 'w'] }
      : { outcome: 'skip' as const, reason: o === 'S' ? ('import_error' as const) : ('infra' as const), detail: 'x' };
    return { commit, role, seconds: 0, ...v };
  };
  const rechecked: string[] = [];
  const recheck = async (commit: string, role: Step['role']): Promise<Step> => {
    rechecked.push(commit);
    const at = outcomes[Number(commit.slice(1))]!;
    const v: Verdict = at === 'T' || at === 'W' || at === 'G' ? { outcome: 'good' } : { outcome: 'bad', failing: ['t'] };
    return { commit, role, seconds: 0, transplanted: true, ...v };
  };
  const opts: SearchOptions = { mainline, bad: outcomes.length - 1, candidates: [], windowDays: 365, maxProbes: 24, maxGoodEndProbes: 6, probe, recheck, ...over };
  return { opts, probed, rechecked, run: () => searchFirstBad(opts) };
}

describe('searchFirstBad', () => {
  it('finds the first bad commit between the commit before the oldest candidate and the bad end', async () => {
    const h = history('GGGGGBBBBB', { candidates: [7, 2] });
    const res = await h.run();
    expect(res).toMatchObject({ kind: 'found', commit: 'c5' });
    // c9 (bad end), c1 (before the oldest candidate: good), c2 (the candidate: good, blame was wrong), then bisection of (2, 9].
    expect(h.probed.slice(0, 3)).toEqual(['c9', 'c1', 'c2']);
    expect(h.probed.length).toBeLessThanOrEqual(3 + 3);
  });

  it('blame right: the commit before the candidate passes and the candidate fails, found in three probes, not a bisection of the whole range', async () => {
    const h = history('GGGGGGGGGBBBBBBBBBBBBBBBBBBBBB', { candidates: [9] });
    const res = await h.run();
    expect(res).toMatchObject({ kind: 'found', commit: 'c9', good: 'c8' });
    expect(h.probed).toEqual(['c29', 'c8', 'c9']);
  });

  it('a bad end validate already saw failing is not probed again, and is recorded as reused', async () => {
    const h = history('GGGGGBBBBB', { candidates: [7, 2], knownBad: ['t'] });
    const res = await h.run();
    expect(res).toMatchObject({ kind: 'found', commit: 'c5' });
    expect(h.probed).not.toContain('c9');
    expect(res.steps[0]).toMatchObject({ commit: 'c9', role: 'bad_end', outcome: 'bad', reused: true });
  });

  it('a commit whose tests cannot run is skipped, never blamed: the search steps around it', async () => {
    const h = history('GGGSGBB', { candidates: [0] });
    const res = await h.run();
    expect(res).toMatchObject({ kind: 'found', commit: 'c5' });
    expect(res.steps.find((s) => s.commit === 'c3')).toMatchObject({ outcome: 'skip', reason: 'import_error' });
  });

  it('skips next to the boundary give the candidate range, not a guess', async () => {
    const h = history('GGGSSBB', { candidates: [0] });
    const res = await h.run();
    expect(res).toMatchObject({ kind: 'ambiguous', commits: ['c3', 'c4', 'c5'], good: 'c2' });
  });

  it('tests that do not fail at the bad end stop the search (nothing to find)', async () => {
    expect(await history('GGGG').run()).toMatchObject({ kind: 'no_bad_end', verdict: { outcome: 'good' } });
    expect(await history('GGGS').run()).toMatchObject({ kind: 'no_bad_end', verdict: { outcome: 'skip', reason: 'import_error' } });
  });

  it('no passing commit anywhere probed: no_good_end; nothing runnable: all_skipped (a skip is never a good end)', async () => {
    expect(await history('BBBBBB', { candidates: [3] }).run()).toMatchObject({ kind: 'no_good_end' });
    expect(await history('XXXXXB', { candidates: [3] }).run()).toMatchObject({ kind: 'all_skipped' });
  });

  it('tests of a behaviour the candidate added fail before it: the candidate itself becomes the good end', async () => {
    // c0-c1 fail (the function does not exist yet), c2 (the candidate) adds it, c5 breaks it.
    const h = history('BBGGGBBB', { candidates: [2] });
    const res = await h.run();
    expect(res).toMatchObject({ kind: 'found', commit: 'c5', good: 'c4' });
    expect(h.probed.slice(0, 3)).toEqual(['c7', 'c1', 'c2']);
  });

  it('a refactor blamed after the inducer: the commit before it fails, and the search goes further back', async () => {
    // Inducer c3, blamed refactor c5: c4 and c5 fail, the gallop back from the oldest failure finds c2 good.
    const h = history('GGGBBBBBB', { candidates: [5] });
    const res = await h.run();
    expect(res).toMatchObject({ kind: 'found', commit: 'c3' });
    // Only below the oldest failure seen (c4): c7 and c6 are not probed; c3, then c1 (1, then 2 back).
    expect(h.probed.slice(0, 5)).toEqual(['c8', 'c4', 'c5', 'c3', 'c1']);
  });

  it('without candidates the search stays inside the time window', async () => {
    // 40 daily commits, a 10-day window: nothing older than c29 is probed, and c29 passes.
    const h = history(`${'G'.repeat(35)}${'B'.repeat(5)}`, { windowDays: 10 });
    const res = await h.run();
    expect(res).toMatchObject({ kind: 'found', commit: 'c35' });
    expect(Math.min(...h.probed.map((c) => Number(c.slice(1))))).toBeGreaterThanOrEqual(29);
    // The failure starts before the window: no good end inside it.
    expect(await history(`G${'B'.repeat(39)}`, { windowDays: 10 }).run()).toMatchObject({ kind: 'no_good_end' });
  });

  it('a window start where the tests cannot run yet is never a verdict: the pass next to it is the good end', async () => {
    // c0 has no module (skip), c1 passes, c2 (the inducer) and the blamed c3 fail.
    const h = history('SGBBB', { candidates: [3] });
    const res = await h.run();
    expect(res).toMatchObject({ kind: 'found', commit: 'c2', good: 'c1' });
    expect(h.probed).toEqual(['c4', 'c2', 'c3', 'c1']);
    // Reached from the window's start too, when the gallop back starts from c2 (no candidates' order here).
    const w = history('SGBBB', { candidates: [] });
    expect(await w.run()).toMatchObject({ kind: 'found', commit: 'c2', good: 'c1' });
    expect(w.probed).toContain('c0');
  });

  it('a bug born with the code: no commit passes, the tests cannot import before c2 and fail from it on: introduced at c2', async () => {
    const h = history('SSBBBB', { candidates: [2] });
    expect(await h.run()).toMatchObject({ kind: 'introduced', commit: 'c2' });
    expect(h.probed).toEqual(['c5', 'c1', 'c2', 'c0']);
    // Importable only at the bad end, which blame names too: the commit before PR2 brought the code in.
    expect(await history('SSSSSB', { candidates: [3, 5] }).run()).toMatchObject({ kind: 'introduced', commit: 'c5' });
  });

  it('a test module that imports only from c120 on, blame older (c40), bug at c170: halving past the import errors finds c170, not six skips in a row', async () => {
    const h = history(`${'S'.repeat(120)}${'G'.repeat(50)}${'B'.repeat(30)}`, { candidates: [40] });
    const res = await h.run();
    expect(res).toMatchObject({ kind: 'found', commit: 'c170' });
    // Before the candidate, the candidate, then the middle of (c40, c199): skip, so the middle of (c119, c199).
    expect(res.steps.filter((s) => s.role === 'good_end').map((s) => `${s.commit}:${s.outcome}`)).toEqual(['c39:skip', 'c40:skip', 'c119:skip', 'c159:good']);
    expect(h.probed.length).toBeLessThanOrEqual(24);
  });

  it('module and bug arrive together at c12 (blame older, c3): the import boundary is halved down to it, introduced at c12', async () => {
    const h = history(`${'S'.repeat(12)}${'B'.repeat(8)}`, { candidates: [3] });
    expect(await h.run()).toMatchObject({ kind: 'introduced', commit: 'c12' });
    // c19 (bad end), c2, c3 skip, then (c3, c19) halved: c11 skip, c15, c13, c12 fail.
    expect(h.probed).toEqual(['c19', 'c2', 'c3', 'c11', 'c15', 'c13', 'c12']);
  });

  it('an import boundary farther than the good-end budget can halve is not guessed: no_good_end, not introduced at the oldest failure seen', async () => {
    const h = history(`${'S'.repeat(120)}${'B'.repeat(80)}`, { candidates: [40] });
    expect(await h.run()).toMatchObject({ kind: 'no_good_end' });
    expect(h.probed).toHaveLength(1 + 6);
  });

  it('an import error between two failures is a passing breakage, not the code\'s arrival: no_good_end, not introduced', async () => {
    expect(await history('BSBBB', { candidates: [2] }).run()).toMatchObject({ kind: 'no_good_end' });
  });

  it('the probe budget is kept: the search reports the range left, not a commit', async () => {
    const h = history(`${'G'.repeat(50)}${'B'.repeat(50)}`, { candidates: [10], maxProbes: 4 });
    const res = await h.run();
    expect(res.kind).toBe('budget');
    expect(h.probed).toHaveLength(4);
    if (res.kind === 'budget') expect(res.commits).toContain('c50');
  });

  it('goodEndOrder: before the oldest candidate, the candidates oldest first, then 1, 2, 4 ... back to the window start', () => {
    const mainline = Array.from({ length: 20 }, (_, i) => ({ sha: `c${i}`, date: new Date(Date.UTC(2024, 0, 1 + i)).toISOString() }));
    const order = (cands: number[], days: number) => goodEndOrder(mainline, 19, cands, days).map((o) => `${o.from[0]}${o.index}`);
    expect(order([12, 8], 365)).toEqual(['c7', 'c8', 'c12', 'w18', 'w17', 'w15', 'w11', 'w3', 'w0']);
    expect(order([], 5)).toEqual(['w18', 'w17', 'w15', 'w14']);
  });

  it('a pass where the test is already broken (it fails only sometimes) does not name the next commit: the parent is run again, fails, and the bisection goes on below it', async () => {
    // c5 is broken but passed its first run; c5 -> c6 changed nothing (a docs-only commit).
    expect(await history('GGGGGFBBBB', { candidates: [0] }).run()).toMatchObject({ kind: 'found', commit: 'c6' });
    const h = history('GGGGGFBBBB', { candidates: [0], confirmRuns: 2 });
    const res = await h.run();
    expect(res).toMatchObject({ kind: 'found', commit: 'c5', good: 'c4' });
    expect(res.steps.filter((s) => s.role === 'confirm').map((s) => `${s.commit}:${s.outcome}`)).toEqual(['c5:bad', 'c4:good', 'c4:good']);
  });

  it('the only pass seen fails when run again and no pass lies further back: flaky, no commit named', async () => {
    expect(await history('BFBBB', { candidates: [1], confirmRuns: 2 }).run()).toMatchObject({ kind: 'flaky', commit: 'c1' });
  });

  it('a confirmation run that cannot run is no evidence: the pass stands and the commit is found', async () => {
    const h = history('GGGGKBBBBB', { candidates: [0], confirmRuns: 2 });
    expect(await h.run()).toMatchObject({ kind: 'found', commit: 'c5', good: 'c4' });
    expect(h.probed.filter((c) => c === 'c4')).toHaveLength(3);
  });

  it('every candidate fails and the inducer lies just below the oldest: the search gallops back from the oldest failure, taking turns with the newer candidates', async () => {
    // Inducer c20, blamed c21, c25, c27 (all later): c20 (before the oldest) and c21 fail; the first step back, c19, passes.
    const h = history(`${'G'.repeat(20)}${'B'.repeat(20)}`, { candidates: [21, 25, 27], maxGoodEndProbes: 8 });
    expect(await h.run()).toMatchObject({ kind: 'found', commit: 'c20', good: 'c19' });
    expect(h.probed.slice(0, 4)).toEqual(['c39', 'c20', 'c21', 'c19']);
    // Further back: strides 1, 2, 4, 8 from the oldest failure, between the candidates, reach the pass at c5.
    const far = history(`${'G'.repeat(10)}${'B'.repeat(30)}`, { candidates: [21, 25, 27], maxGoodEndProbes: 8 });
    expect(await far.run()).toMatchObject({ kind: 'found', commit: 'c10' });
    expect(far.probed.slice(0, 9)).toEqual(['c39', 'c20', 'c21', 'c19', 'c25', 'c17', 'c27', 'c13', 'c5']);
  });

  it('a newer candidate that passes (the tested behaviour arrived there) takes its turn after one step back', async () => {
    // c0-c19 lack the behaviour (fail), c20 adds it, c25 breaks it; blamed c19 and c22.
    const h = history(`${'B'.repeat(20)}${'G'.repeat(5)}${'B'.repeat(10)}`, { candidates: [19, 22], maxGoodEndProbes: 8 });
    expect(await h.run()).toMatchObject({ kind: 'found', commit: 'c25' });
    expect(h.probed.slice(0, 5)).toEqual(['c34', 'c18', 'c19', 'c17', 'c22']);
    // Eight candidates that all fail no longer spend the budget before the first step back (Django fd93db97c7).
    const many = history(`${'G'.repeat(20)}${'B'.repeat(20)}`, { candidates: [21, 22, 23, 24, 25, 26, 27, 28], maxGoodEndProbes: 8 });
    expect(await many.run()).toMatchObject({ kind: 'found', commit: 'c20' });
  });

  it('a test that fails another way than at the bad end (AttributeError: the code is not there yet) is no failure of the bug: the boundary is its arrival, introduced', async () => {
    const h = history('AAAAAEEEEE', { candidates: [2] });
    expect(await h.run()).toMatchObject({ kind: 'introduced', commit: 'c5' });
    const other = (await history('AAAAAEEEEE', { candidates: [2] }).run()).steps.find((s) => s.commit === 'c1');
    expect(other).toMatchObject({ outcome: 'skip', reason: 'other_failure' });
    // Failing the same way everywhere shows no arrival: no_good_end, blame stands.
    expect(await history('EEEEEEEEEE', { candidates: [2] }).run()).toMatchObject({ kind: 'no_good_end' });
    // A failure whose exception the report does not name counts as this bug's, as before.
    expect(await history('BBBBBEEEEE', { candidates: [2] }).run()).toMatchObject({ kind: 'no_good_end' });
    // Other failures are evidence the tests ran: never all_skipped.
    expect(await history('AAAAAAAAAE', { candidates: [2], maxGoodEndProbes: 3 }).run()).toMatchObject({ kind: 'no_good_end' });
  });

  it('above a pass, a failure another way is the breakage, not the code arriving: the first such commit is found', async () => {
    // Django 198a19b692: TypeError from the inducer (c4) on, the base's AssertionError only from c8.
    const h = history('GGGGAAAAEEEE', { candidates: [2], confirmRuns: 1 });
    const res = await h.run();
    expect(res).toMatchObject({ kind: 'found', commit: 'c4', good: 'c3' });
    // The step is kept as what it showed: the tests failed another way.
    expect(res.steps.find((s) => s.commit === 'c4')).toMatchObject({ outcome: 'skip', reason: 'other_failure' });
    // Only the tests the search follows: u fails at the good end already (t alone is followed), so u failing
    // another way above it is no breakage; t breaks at c7.
    expect(await history('PPPRRRREEEEE', { candidates: [2] }).run()).toMatchObject({ kind: 'found', commit: 'c7', followed: ['t'] });
    // Followed all (the good end passed both), u failing another way above it is the breakage.
    expect(await history('GGGRRRREEEEE', { candidates: [2] }).run()).toMatchObject({ kind: 'found', commit: 'c3' });
  });

  it('a long stretch that cannot run in the middle of the range is halved around, not walked through', async () => {
    // c10-c29 cannot run (an environment's dependency too old for them); the inducer c3 sits just above the good end.
    // (Walking outward from c20 one commit at a time spends these 18 probes inside c10-c29.)
    const h = history(`GGG${'B'.repeat(7)}${'X'.repeat(20)}${'B'.repeat(10)}`, { candidates: [2], maxProbes: 18, confirmRuns: 2 });
    expect(await h.run()).toMatchObject({ kind: 'found', commit: 'c3', good: 'c2' });
    // Three skips in a row at the middle (c20, then its neighbours), then the middle of the larger side
    // around every skip seen: c11 (skipped), c30 (fails), c16 (skipped), c6, c4, c3 (fail); c2's confirmations.
    expect(h.probed).toEqual(['c39', 'c1', 'c2', 'c20', 'c21', 'c22', 'c11', 'c30', 'c16', 'c6', 'c4', 'c3', 'c2', 'c2']);
    // Skips everywhere outside (5, 15) and at 10: the commits between the skips are still probed, not given up.
    const skips = new Map<number, 'skip'>([1, 2, 3, 4, 5, 10, 15, 16, 17, 18, 19].map((i) => [i, 'skip']));
    expect(nextProbe(0, 20, skips)).toBe(11);
    expect(nextProbe(0, 20, new Map([...skips, ...[6, 7, 8, 9, 11, 12, 13, 14].map((i) => [i, 'skip'] as const)]))).toBeNull();
    // One skip alone: its neighbour, as before.
    const one = history('GGGGGGGGGGBBBBBBXBBBBBBBBBBBBBBBBBBBBBBB', { candidates: [1] });
    expect(await one.run()).toMatchObject({ kind: 'found', commit: 'c10' });
  });

  it("a boundary between a transplanted pass and a failure of PR2's whole module is run again as the pass ran: a pass there moves the bisection above it", async () => {
    const h = history('TTTWWWBBBB', { candidates: [3], confirmRuns: 2 });
    const res = await h.run();
    expect(res).toMatchObject({ kind: 'found', commit: 'c6', good: 'c5' });
    // c3 again as c2 passed; from then on every probe runs so (c6, c4, c5), and c5's confirmations too.
    expect(h.rechecked).toEqual(['c3', 'c6', 'c4', 'c5', 'c5', 'c5']);
    expect(h.probed).toEqual(['c9', 'c2', 'c3']);
    // The whole module's failure is recorded as another failure, not as this bug.
    expect(res.steps.filter((s) => !s.transplanted).map((s) => `${s.commit}:${s.outcome}`)).toEqual(['c9:bad', 'c3:skip']);
    // Whole-module failures seen before (c4-c6, looking for a good end) are set aside, not stepped over one by one.
    const seen = history(`TTT${'W'.repeat(10)}BBB`, { candidates: [6], confirmRuns: 2 });
    expect(await seen.run()).toMatchObject({ kind: 'found', commit: 'c13', good: 'c12' });
    expect(seen.probed).toEqual(['c15', 'c5', 'c6', 'c4', 'c2', 'c3']);
    expect(seen.rechecked).toEqual(['c3', 'c9', 'c12', 'c13', 'c12', 'c12']);
    // Without the recheck the whole module's first failure is taken for the inducer.
    expect(await history('TTTWWWBBBB', { candidates: [3], confirmRuns: 2, recheck: undefined }).run()).toMatchObject({ kind: 'found', commit: 'c3' });
    // A pass of the whole module is not rechecked, nor is a commit that failed transplanted.
    const plain = history('GGGWWWBBBB', { candidates: [3], confirmRuns: 2 });
    expect(await plain.run()).toMatchObject({ kind: 'found', commit: 'c3' });
    expect(plain.rechecked).toEqual([]);
  });

  it("the bad end's exception is read once when validate's reused run did not carry it", async () => {
    const h = history('AAAAAEEEEE', { candidates: [2], knownBad: ['t'] });
    const res = await h.run();
    expect(res).toMatchObject({ kind: 'introduced', commit: 'c5' });
    expect(h.probed.filter((c) => c === 'c9')).toHaveLength(1);
    expect(res.steps.filter((s) => s.role === 'bad_end').map((s) => s.reused ?? false)).toEqual([true, false]);
    // When validate's run kept them (S4's failureKinds), no probe reads them again, and the answer is the same.
    const kept = history('AAAAAEEEEE', { candidates: [2], knownBad: ['t'], knownBadKinds: { t: 'AssertionError', other: 'KeyError' } });
    const again = await kept.run();
    expect(again).toMatchObject({ kind: 'introduced', commit: 'c5' });
    expect(kept.probed).not.toContain('c9');
    expect(again.steps[0]).toMatchObject({ role: 'bad_end', reused: true, kinds: { t: 'AssertionError' } });
    expect(again.steps[0]!.outcome === 'bad' && again.steps[0]!.kinds).toEqual({ t: 'AssertionError' });
  });

  it('a good end where only some fail->pass tests pass (the others test what the fix changed) is followed on those alone', async () => {
    // u fails everywhere; t passes until c6.
    const h = history('PPPPPPBBBB', { candidates: [3] });
    const res = await h.run();
    expect(res).toMatchObject({ kind: 'found', commit: 'c6', followed: ['t'] });
    // Without the partial pass there is no good end at all.
    expect(await history('BBBBBBBBBB', { candidates: [3] }).run()).toMatchObject({ kind: 'no_good_end' });
    // The first failure there is sends the search to read the bad end's exceptions (a probe recorded
    // after it): the partial pass is still this probe's, the good end is the first commit probed.
    const q = await history('QQQQQQEEEE', { candidates: [3], knownBad: ['t', 'u'] }).run();
    expect(q).toMatchObject({ kind: 'found', commit: 'c6', followed: ['t'] });
    expect(q.steps.filter((s) => s.role === 'good_end').map((s) => s.commit)).toEqual(['c2']);
  });

  it('tests that still pass at the first failure break later: the bisection goes on above it, and the commit where more of them break is the answer', async () => {
    // u breaks at c3; t and w at c7 (Django dd68af62b2: one test broke in 2020, three at the 2022 inducer).
    const h = history('GGGYYYYZZZZZ', { candidates: [2], confirmRuns: 1 });
    const res = await h.run();
    expect(res).toMatchObject({ kind: 'found', commit: 'c7', good: 'c6', followed: ['t', 'w'] });
    expect(h.probed.length).toBeLessThanOrEqual(14);
    // Two tests at c3, one at c7: c3 stands (as it does on a tie).
    expect(await history('GGGVVVVZZZZZ', { candidates: [2] }).run()).toMatchObject({ kind: 'found', commit: 'c3' });
    // No probe left for the second bisection: the first transition stands.
    expect(await history('GGGYYYYZZZZZ', { candidates: [2], maxProbes: 7 }).run()).toMatchObject({ kind: 'found', commit: 'c3' });
    // Every test breaks at once: one bisection, as before.
    const once = history('GGGZZZZZZZZZ', { candidates: [2] });
    expect(await once.run()).toMatchObject({ kind: 'found', commit: 'c3' });
    expect(once.probed).toEqual(['c11', 'c1', 'c2', 'c6', 'c4', 'c3']);
  });

  it('an import boundary is halved only within maxImportHalving probes, a boundary of another failure with the whole budget', async () => {
    const opts = { candidates: [10], maxGoodEndProbes: 16, maxImportHalving: 8 };
    // The module imports from c200 (a test-support change, say) and the tests fail from there: not pinned.
    const imports = history(`${'S'.repeat(200)}${'E'.repeat(100)}`, opts);
    expect(await imports.run()).toMatchObject({ kind: 'no_good_end' });
    // Without the cap the same budget pins it and names c200 introduced.
    expect(await history(`${'S'.repeat(200)}${'E'.repeat(100)}`, { ...opts, maxImportHalving: 16 }).run()).toMatchObject({ kind: 'introduced', commit: 'c200' });
    // Before c200 the tests fail another way (the code under test is not there): halved down to it.
    expect(await history(`${'A'.repeat(200)}${'E'.repeat(100)}`, opts).run()).toMatchObject({ kind: 'introduced', commit: 'c200' });
  });

  it("an import boundary right below PR2's base is not named introduced unless blame names the base: the module may need a helper the base brought", async () => {
    // Blame's candidates close to the bad end: the halving reaches c18 (skip) next to the bad end c19.
    const h = history(`${'S'.repeat(19)}E`, { candidates: [15, 16, 17, 18], maxGoodEndProbes: 16 });
    expect(await h.run()).toMatchObject({ kind: 'all_skipped' });
    expect(h.probed).toContain('c18');
  });
});
