/**
 * The search itself, over first-parent indices and a probe function (no Docker here): find a good end
 * bounded by blame's candidates (else a time window), then bisect to the first bad commit, skipping
 * commits where the tests cannot run as `git bisect skip` does.
 */
import { positions } from '../history/mainline.ts';
import { candidatesBelow, goodEndOrder, nextProbe, windowStart } from './probe-order.ts';
import type { SearchResult, Step, StepRole } from './types.ts';

export interface SearchOptions {
  /** First-parent commits, oldest first. */
  mainline: ReadonlyArray<{ sha: string; date: string }>;
  /** Index in `mainline` of PR2's base, where the tests must fail. */
  bad: number;
  /** Indices in `mainline` of the commits holding blame's candidates (any order, duplicates allowed). */
  candidates: readonly number[];
  /** The fallback window: commits at most this many days older than the bad end. */
  windowDays: number;
  /** Most commits probed in all (the bad end and the good-end search included). */
  maxProbes: number;
  /** Most commits probed while looking for a good end. */
  maxGoodEndProbes: number;
  /**
   * An import-error boundary is halved only while fewer good-end probes than this were spent (default:
   * all of maxGoodEndProbes); a boundary of another failure (`other_failure`) is halved to the end.
   */
  maxImportHalving?: number;
  probe: (commit: string, role: StepRole) => Promise<Step>;
  /** The fail->pass tests already seen failing at the bad end (validate's S4, the same run): it is not probed again. */
  knownBad?: readonly string[];
  /** The exceptions those tests ended with in that run (else the bad end is probed once more to read them). */
  knownBadKinds?: Readonly<Record<string, string>>;
  /** Extra runs of the found commit's passing parent before it is believed (0: none); not counted in maxProbes. */
  confirmRuns?: number;
  /**
   * Probe a commit the way a transplanted pass ran (PR2's test changes on the commit's own modules; the
   * step `transplanted`). Asked of the found commit when its parent passed only so and the found commit
   * failed only with PR2's whole module laid over it: two different tests then meet at the boundary.
   */
  recheck?: (commit: string, role: StepRole) => Promise<Step>;
}

type Outcome = Step['outcome'];

/**
 * The commit where the tests first fail when none passes anywhere: the oldest bad commit whose parent
 * cannot import the test module or fails it another way (the code under test is not there yet), with no
 * failure seen before it (a failure further back would make that boundary a passing breakage, not the
 * code's arrival). Null when the probes show no such boundary.
 */
function introduction(
  known: ReadonlyMap<number, Outcome>,
  stepsAt: (i: number) => Step[],
  mainline: SearchOptions['mainline'],
  end: { bad: number; blamed: ReadonlySet<number> },
): string | null {
  const bads = [...known].filter(([, o]) => o === 'bad').map(([i]) => i);
  if (!bads.length) return null;
  const first = Math.min(...bads);
  // PR2's base itself only when blame names it too: a module that imports only from there may just
  // need a test helper the base brought (Django f71b0cf769: blame named the true inducer, far older).
  if (first === end.bad && !end.blamed.has(first)) return null;
  const before = stepsAt(first - 1);
  const arrival = (s: Step): boolean => s.outcome === 'skip' && (s.reason === 'import_error' || s.reason === 'other_failure');
  return before.length && before.every(arrival) ? mainline[first]!.sha : null;
}

export async function searchFirstBad(opts: SearchOptions): Promise<SearchResult> {
  const steps: Step[] = [];
  const index = positions(opts.mainline);
  const sha = (i: number): string => opts.mainline[i]!.sha;
  const stepsAt = (i: number): Step[] => steps.filter((s) => index.get(s.commit) === i);
  // The exceptions the tests end with at the bad end, read when a failure elsewhere needs comparing.
  let reference: Record<string, string> | null = null;
  // Once a good end passes only some of the fail->pass tests, those alone are followed.
  let followed: Set<string> | null = null;
  const sameWay = (s: Step & { outcome: 'bad' }, t: string): boolean => {
    const here = s.kinds?.[t];
    const there = reference?.[t];
    return here === undefined || there === undefined || here === there;
  };
  /** A step as the search counts it: under the followed tests, a failure only another way is no evidence. */
  const outcomeOf = (s: Step): Outcome => {
    if (s.outcome === 'good') return 'good';
    const tests = followed;
    if (tests === null) return s.outcome === 'bad' && s.failing.some((t) => sameWay(s, t)) ? 'bad' : 'skip';
    if (s.outcome === 'bad' && s.failing.some((t) => tests.has(t) && sameWay(s, t))) return 'bad';
    return [...tests].every((t) => s.passing?.includes(t)) ? 'good' : 'skip';
  };
  // Once PR2's whole module failed where its transplanted tests pass (the bisection's boundary check
  // below), the rest of the bisection runs the tests transplanted, and what the whole module showed is
  // set aside (not the same test): stepping over its failures one boundary at a time had spent
  // f88fc72da4's whole budget.
  let asRecheck = false;
  /**
   * Per commit: bad when any run there is (a confirmation that fails outweighs the pass before it), else
   * good when one is, else skip (a confirmation that cannot run is no evidence). The bad end stays bad.
   */
  const known = (): Map<number, Outcome> => {
    const out = new Map<number, Outcome>();
    for (const s of steps) {
      const i = index.get(s.commit)!;
      if (asRecheck && !s.transplanted && i !== opts.bad) continue;
      const o = countOf(s);
      const prev = out.get(i);
      if (prev === undefined || o === 'bad' || (o === 'good' && prev === 'skip')) out.set(i, o);
    }
    out.set(opts.bad, 'bad');
    return out;
  };
  // Above a commit where the tests pass, a failure of theirs in any other way is a breakage too, not the
  // code under test arriving (Django 198a19b692: TypeError from the inducer 8d67e16493 on, the base's
  // AssertionError only after a later commit). Set once a good end is found; the tests each step failed
  // another way, kept from before the step became a skip.
  let passedAt: number | null = null;
  const failedOtherWay = new Map<Step, string[]>();
  const brokeAbovePass = (s: Step, i: number): boolean => {
    if (passedAt === null || i <= passedAt) return false;
    const failing = s.outcome === 'bad' ? s.failing : failedOtherWay.get(s);
    const tests = followed;
    return failing !== undefined && failing.some((t) => tests === null || tests.has(t));
  };
  const countOf = (s: Step): Outcome => (brokeAbovePass(s, index.get(s.commit)!) ? 'bad' : outcomeOf(s));
  const record = (step: Step): Step => {
    steps.push(step);
    return step;
  };
  // The bad end's exceptions, probed again when validate's reused S4 run did not carry them.
  const readReference = async (): Promise<void> => {
    if (reference !== null) return;
    const end = steps.find((s) => s.role === 'bad_end' && !s.reused);
    const run = end ?? (steps.length < opts.maxProbes ? record(await opts.probe(sha(opts.bad), 'bad_end')) : null);
    reference = run?.outcome === 'bad' ? (run.kinds ?? {}) : {};
  };
  /** Probe a commit: the step as recorded (a failure only another way becomes a skip) and how it counts. */
  const probeStep = async (i: number, role: StepRole): Promise<{ step: Step; outcome: Outcome }> => {
    const step = record(await opts.probe(sha(i), role));
    if (step.outcome !== 'bad' || !step.kinds) return { step, outcome: countOf(step) };
    // (Reading the reference may record a probe of the bad end after this step.)
    await readReference();
    if (step.failing.some((t) => sameWay(step, t))) return { step, outcome: countOf(step) };
    // Every failing test fails another way than at the bad end: recorded as what it is, no evidence.
    const ways = [...new Set(step.failing.map((t) => `${step.kinds![t]} where PR2's base has ${reference![t]}`))].join('; ');
    const { failing: _f, kinds: _k, outcome: _o, ...rest } = step;
    const other: Step = { ...rest, outcome: 'skip', reason: 'other_failure', detail: `the tests fail another way: ${ways}` };
    steps[steps.indexOf(step)] = other;
    failedOtherWay.set(other, step.failing);
    return { step: other, outcome: countOf(other) };
  };
  const probe = async (i: number, role: StepRole): Promise<Outcome> => (await probeStep(i, role)).outcome;

  let end: Outcome;
  if (opts.knownBad?.length) {
    const kinds = Object.fromEntries(Object.entries(opts.knownBadKinds ?? {}).filter(([t]) => opts.knownBad!.includes(t)));
    const known = Object.keys(kinds).length ? { kinds } : {};
    record({ commit: sha(opts.bad), role: 'bad_end', seconds: 0, reused: true, outcome: 'bad', failing: [...opts.knownBad], ...known });
    if (opts.knownBadKinds) reference = kinds;
    end = 'bad';
  } else {
    const first = record(await opts.probe(sha(opts.bad), 'bad_end'));
    end = first.outcome;
    if (first.outcome === 'bad') reference = first.kinds ?? {};
  }
  if (end !== 'bad') {
    const { commit: _c, role: _r, seconds: _s, ...verdict } = steps[0]!;
    return { kind: 'no_bad_end', verdict, steps };
  }

  let good: number | null = null;
  let tried = 0;
  const queue = goodEndOrder(opts.mainline, opts.bad, opts.candidates, opts.windowDays);
  const blamed = new Set(opts.candidates);
  // After a skip at s with no good end yet, probe inside (s, oldest failure): the commit after s when
  // blame names it (the code may arrive there), else the middle; a skip looks newer, a failure older.
  // Halving, not stepping one commit per skip (Django: six skips below the commit where the fix's test
  // module starts to import) nor the window's gallop (it ignores s). Counted in maxGoodEndProbes. An
  // import-error boundary stops being halved after maxImportHalving probes: on Django the module may
  // start to import long after the true inducer (a test-support change: bc174e6ea0, 250 commits), and
  // pinned, that boundary would be a wrong `introduced`; unpinned it ends `no_good_end` and blame stands.
  // A boundary where the tests start failing as at the bad end (before it they fail another way) marks
  // the code under test arriving: it is halved with the whole budget.
  // The oldest failure seen (the bad end when it is the only one).
  const oldestBad = (): number => Math.min(...[...known()].filter(([, o]) => o === 'bad').map(([i]) => i));
  const afterSkip = (): number | null => {
    const hi = oldestBad();
    const skips = [...known()].filter(([i, o]) => o === 'skip' && i < hi).map(([i]) => i);
    if (!skips.length) return null;
    const s = Math.max(...skips);
    if (hi - s <= 1) return null;
    const other = stepsAt(s).some((st) => st.outcome === 'skip' && st.reason === 'other_failure');
    if (!other && tried >= (opts.maxImportHalving ?? opts.maxGoodEndProbes)) return null;
    return blamed.has(s + 1) ? s + 1 : (s + hi) >> 1;
  };
  // The tests fail before blame's oldest candidate and at it: the breakage may be older than blame saw.
  // Gallop back from the oldest failure, 1, 2, 4 ... commits, as far as the window reaches from the
  // oldest candidate, before the window's own points (counted from the bad end, they lie above that
  // failure and are skipped): Django fd93db97c7's inducer is the commit just before the oldest
  // candidate. It takes turns with the newer candidates: as often a newer candidate passes (the tested
  // behaviour arrived there: Django f4b06a3cc1, its sixth candidate), and eight candidates in a row
  // spent the budget before fd93db97c7's first step back.
  const cands = candidatesBelow(opts.candidates, opts.bad);
  // As far back as the window reaches from the commit before the oldest candidate (blame may name
  // commits older than the window counted from the bad end).
  const start = cands.length ? windowStart(opts.mainline, Math.max(cands[0]! - 1, 0), opts.windowDays) : 0;
  let stride = 1;
  const goBack = (): number | null => {
    const k = known();
    // Only after a failure there: skips (the module cannot import yet) say nothing of an older breakage,
    // and stepping back from the failure next to them would pin an import boundary (see afterSkip).
    if (!cands.length || !k.has(cands[0]!) || (k.get(cands[0]!) !== 'bad' && k.get(cands[0]! - 1) !== 'bad')) return null;
    const f = oldestBad();
    if (f === opts.bad || f <= start) return null;
    let i = Math.max(f - stride, start);
    while (i > start && k.has(i)) i--;
    if (k.has(i)) return null;
    stride *= 2;
    return i;
  };
  // The queue's next commit worth probing, or null when it is spent.
  const fromQueue = (only?: 'candidates'): number | null => {
    const k = known();
    while (queue.length) {
      if (only && queue[0]!.from !== only) return null;
      const { index: i, from } = queue.shift()!;
      if (k.has(i)) continue;
      // The window looks further back than the oldest failure seen so far, never between it and the bad end.
      if (from === 'window' && [...k].some(([j, o]) => o === 'bad' && j < i && j !== opts.bad)) continue;
      return i;
    }
    return null;
  };
  let backFirst = false;
  const next = (): number | null => {
    const skip = afterSkip();
    if (skip !== null) return skip;
    if (!cands.length || !known().has(cands[0]!)) return fromQueue('candidates') ?? goBack() ?? fromQueue();
    backFirst = !backFirst;
    return (backFirst ? goBack() ?? fromQueue('candidates') : fromQueue('candidates') ?? goBack()) ?? fromQueue();
  };
  while (tried < opts.maxGoodEndProbes && steps.length < opts.maxProbes) {
    const i = next();
    if (i === null) break;
    tried++;
    const { step, outcome } = await probeStep(i, 'good_end');
    if (outcome === 'good') {
      good = i;
      break;
    }
    // Some of the tests pass here, the others fail as at the bad end (they test what PR2 itself
    // changed, Django 1e2e1be02b): the passing ones are followed from here on.
    if (step.outcome !== 'good' && step.passing?.length) {
      followed = new Set(step.passing);
      good = i;
      break;
    }
  }
  if (good === null) {
    const born = introduction(known(), stepsAt, opts.mainline, { bad: opts.bad, blamed });
    if (born !== null) return { kind: 'introduced', commit: born, steps };
    const ran = steps.some((s) => s.role === 'good_end' && (s.outcome !== 'skip' || s.reason === 'other_failure'));
    return ran ? { kind: 'no_good_end', steps } : { kind: 'all_skipped', steps };
  }

  // The nearest known bad above the good end bounds the range; skips already seen stay skipped.
  passedAt = good;
  let lo = good;
  let hi = Math.min(...[...known()].filter(([i, o]) => i > good && o === 'bad').map(([i]) => i));
  const range = (): string[] => Array.from({ length: hi - lo }, (_, k) => sha(lo + 1 + k));
  // The good end is just before a blamed commit: test blame's answer first (bad there: found in one probe).
  const after = good + 1;
  if (after < hi && blamed.has(after) && !known().has(after) && steps.length < opts.maxProbes) {
    const o = await probe(after, 'bisect');
    if (o === 'good') lo = after;
    else if (o === 'bad') hi = after;
  }
  // The parent passed only with PR2's test changes on its own modules, the commit failed only with PR2's
  // whole module: that module's other code (a fixture, a helper, another test's setup) may be what
  // fails (Django f88fc72da4: found 1,050 commits below the inducer). The commit runs as its parent did;
  // a pass there makes its whole-module failures another failure, no evidence, and the bisection goes on
  // above it. Not at PR2's base: its whole module is the tests' own definition of the bug.
  const rechecked = new Set<number>();
  const wholeModuleOnly = async (): Promise<boolean> => {
    if (!opts.recheck || hi === opts.bad || steps.length >= opts.maxProbes) return false;
    const at = stepsAt(hi);
    if (!stepsAt(lo).some((s) => s.transplanted && outcomeOf(s) === 'good') || at.some((s) => s.transplanted)) return false;
    const again = record(await opts.recheck(sha(hi), 'bisect'));
    if (outcomeOf(again) !== 'good') return false;
    rechecked.add(hi);
    asRecheck = true;
    for (const s of at) {
      if (s.outcome !== 'bad') continue;
      const { failing, kinds: _k, outcome: _o, passing: _p, ...rest } = s;
      steps[steps.indexOf(s)] = { ...rest, outcome: 'skip', reason: 'other_failure', detail: `fails only with PR2's whole test module laid over it (${failing.join(', ')}); with PR2's test changes on its own modules the tests pass` };
    }
    return true;
  };
  const followNow = (): { followed?: string[] } => (followed ? { followed: [...followed].sort() } : {});
  /** Bisect (lo, hi], confirm the pass below the first failure: the search's ending from this range. */
  const bisectRange = async (): Promise<SearchResult> => {
    for (;;) {
      while (hi - lo > 1) {
        const i = nextProbe(lo, hi, known());
        if (i === null) return { kind: 'ambiguous', commits: range(), good: sha(lo), ...followNow(), steps };
        if (steps.length >= opts.maxProbes) return { kind: 'budget', commits: range(), good: sha(lo), ...followNow(), steps };
        let o: Outcome;
        if (asRecheck && opts.recheck) {
          o = countOf(record(await opts.recheck(sha(i), 'bisect')));
          if (o === 'good') rechecked.add(i);
        } else o = await probe(i, 'bisect');
        if (o === 'good') lo = i;
        else if (o === 'bad') hi = i;
      }
      if (await wholeModuleOnly()) {
        lo = hi;
        hi = Math.min(...[...known()].filter(([i, o]) => i > lo && o === 'bad').map(([i]) => i));
        continue;
      }
      // A test that fails only sometimes can pass once where it is already broken, and one pass would then
      // name a commit that changed nothing (Django e972620ada: a docs-only commit). The found commit's parent
      // must pass `confirmRuns` more times, as validate's repeats ask of a state; a failure there moves the
      // boundary below it and the bisection goes on from the nearest pass further back.
      // A parent that passed only as rechecked is confirmed the same way.
      for (let k = 0; k < (opts.confirmRuns ?? 0) && known().get(lo) === 'good'; k++) {
        if (rechecked.has(lo) && opts.recheck) record(await opts.recheck(sha(lo), 'confirm'));
        else await probe(lo, 'confirm');
      }
      if (known().get(lo) === 'good') break;
      hi = lo;
      const passes = [...known()].filter(([i, o]) => o === 'good' && i < hi).map(([i]) => i);
      if (!passes.length) return { kind: 'flaky', commit: sha(hi), steps };
      lo = Math.max(...passes);
    }
    return { kind: 'found', commit: sha(hi), good: sha(lo), ...followNow(), steps };
  };
  const first = await bisectRange();
  if (first.kind !== 'found') return first;
  // Some of the tests the search follows still pass at the found commit: they break later, at a commit of
  // their own (Django dd68af62b2: one test broke in 2020, three more in 2022 at the inducer the fix
  // names, and the first transition had been taken). The bisection goes on above it following those;
  // the commit where more of the tests break is the answer (a tie keeps the first).
  const passingAt = (i: number): Set<string> => new Set(stepsAt(i).flatMap((st) => (st.outcome === 'bad' ? (st.passing ?? []) : [])));
  const before = [...(followed ?? stepsAt(opts.bad).flatMap((st) => (st.outcome === 'bad' ? st.failing : [])))];
  const passingThere = passingAt(hi);
  const still = before.filter((t) => passingThere.has(t));
  if (!still.length || still.length === before.length || steps.length >= opts.maxProbes) return first;
  const firstFollowed = followed;
  followed = new Set(still);
  // Under those tests alone the commits probed above the first failure read again: the tightest pass and failure.
  const from = hi;
  hi = Math.min(...[...known()].filter(([i, o]) => i > from && o === 'bad').map(([i]) => i));
  lo = Math.max(from, ...[...known()].filter(([i, o]) => i > from && i < hi && o === 'good').map(([i]) => i));
  const later = await bisectRange();
  const passingLater = passingAt(hi);
  if (later.kind === 'found' && still.filter((t) => !passingLater.has(t)).length > before.length - still.length) return later;
  followed = firstFollowed;
  return first;
}
