/**
 * What to repeat: each state once, then only the tests that can still be in a set,
 * with a sample of the others. Pinned against the old strategy (every state `runs` times) on the same
 * observations: the sets must come out identical, and flakiness outside them is still sampled.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { ChainEnv, StateRequest, StateRun } from '../../../core/env/index.ts';
import { djangoRunner } from '../../../core/env/runners/django/index.ts';
import { pytestRunner } from '../../../core/env/runners/pytest/index.ts';
import type { TestStatus } from '../../../core/env/runners/types.ts';
import { STATE_NAMES, type Outcome, type StateName, type StateResult } from '../../../core/foundation/model/validated.ts';
import { computeSets } from '../../../stages/validate/compute-sets.ts';
import { MIN_SAMPLE, planRepeats, sampleOf } from '../../../stages/validate/plan-repeats.ts';
import { runChainStates, type ChainStates, selection, type RepeatStrategy } from '../../../stages/validate/run-states.ts';
import { validatedChain } from '../../helpers/chain-fixture.ts';

/** The states of a run that did not stop on an outgrown environment (these tests give no install candidate). */
async function statesOf(p: Promise<ChainStates>): Promise<Extract<ChainStates, { kind: 'ran' }>> {
  const r = await p;
  if (r.kind !== 'ran') throw new Error(`unexpected outgrown environment at ${r.state}`);
  return r;
}

const fileOf = (id: string): string | null => id.split('::')[0] ?? null;

function state(name: StateName, tests: Record<string, Outcome>, extra: Partial<StateResult> = {}): StateResult {
  return { name, checkout: 'c', overlay: null, testFiles: ['a.py', 'b.py'], outcome: { kind: 'ran' }, runs: 1, tests, collectionErrors: [], durationMs: 1, ...extra };
}

/** One run of each state: t_new flips at PR1, t_old stays green, t_dead fails everywhere, t_edge is PR2's. */
function firstRuns(): Record<StateName, StateResult> {
  return {
    S1: state('S1', { 'a.py::t_new': 'fail', 'a.py::t_old': 'pass', 'a.py::t_dead': 'fail' }),
    S2: state('S2', { 'a.py::t_new': 'pass', 'a.py::t_old': 'pass', 'a.py::t_dead': 'fail' }),
    S3: state('S3', { 'b.py::t_edge': 'fail', 'b.py::t_dead2': 'fail' }),
    S4: state('S4', { 'b.py::t_edge': 'fail', 'b.py::t_dead2': 'fail' }),
    S5: state('S5', { 'b.py::t_edge': 'pass', 'b.py::t_dead2': 'fail' }),
  };
}

describe('planRepeats: what is run again', () => {
  it('repeats the candidates of every set in each state they ran in, and a test in no set only as a sample', () => {
    const plan = planRepeats(firstRuns(), 'x__1-2', fileOf);
    expect([...plan.keys()]).toEqual(['S1', 'S2', 'S3', 'S4', 'S5']);
    expect(plan.get('S1')).toEqual({ ids: ['a.py::t_new', 'a.py::t_old', 'a.py::t_dead'], files: [], sampled: 1 });
    // t_edge decides ANTICIPATION_FAIL_TO_PASS at S3 and the PR2 sets at S4/S5.
    expect(plan.get('S3')!.ids.slice(0, 1)).toEqual(['b.py::t_edge']);
  });

  it('does not run a state again when none of its tests can be in a set', () => {
    const s = firstRuns();
    // No PR2 test passes at pr2_head: no PR2 set can have a member, S3-S5 are settled after one run.
    s.S5 = state('S5', { 'b.py::t_edge': 'fail', 'b.py::t_dead2': 'fail' });
    expect([...planRepeats(s, 'x__1-2', fileOf).keys()]).toEqual(['S1', 'S2']);
  });

  it('never repeats a state that is no evidence, nor a test already flaky', () => {
    const s = firstRuns();
    s.S2 = state('S2', {}, { outcome: { kind: 'infra', reason: 'timeout', detail: 'timed out' } });
    s.S5 = state('S5', { 'b.py::t_edge': 'flaky', 'b.py::t_dead2': 'fail' });
    expect([...planRepeats(s, 'x__1-2', fileOf).keys()]).toEqual([]);
  });

  it('a fail->pass test whose file does not import at the base repeats that whole file there', () => {
    const s = firstRuns();
    s.S1 = state('S1', { 'a.py::t_old': 'pass' }, { collectionErrors: ['c.py'], testFiles: ['a.py', 'c.py'] });
    s.S2 = state('S2', { 'a.py::t_old': 'pass', 'c.py::t_imp': 'pass' }, { testFiles: ['a.py', 'c.py'] });
    expect(computeSets(s, fileOf).FAIL_TO_PASS).toEqual(['c.py::t_imp']);
    expect(planRepeats(s, 'x__1-2', fileOf).get('S1')).toMatchObject({ ids: ['a.py::t_old'], files: ['c.py'] });
  });

  it('samples a tenth of the other tests (at least 2), the same ones in every state, seeded by the chain id', () => {
    const others = Array.from({ length: 50 }, (_, i) => `a.py::t_other${i}`);
    const s = firstRuns();
    for (const n of ['S1', 'S2'] as const) for (const id of others) s[n].tests[id] = 'fail';
    const plan = planRepeats(s, 'x__1-2', fileOf);
    const sampled = (n: StateName) => plan.get(n)!.ids.filter((id) => id.includes('t_other'));
    // 51 non-candidates (t_dead too): a tenth, rounded up.
    expect(plan.get('S1')!.sampled).toBe(6);
    expect(sampled('S1').length).toBeGreaterThanOrEqual(5);
    expect(sampled('S2')).toEqual(sampled('S1'));
    expect(planRepeats(s, 'x__1-2', fileOf).get('S1')).toEqual(plan.get('S1'));
    expect(sampleOf(others, 'y__3-4', 5)).not.toEqual(sampleOf(others, 'x__1-2', 5));
    expect(sampleOf(['a', 'b', 'c'], 'z', MIN_SAMPLE)).toHaveLength(2);
  });
});

describe('selection: how a repeat asks the runner for single tests', () => {
  const sel = { ids: ['a.py::C::t[1-2]', 'a.py::t_b'], files: ['c.py'], sampled: 0 };
  it('pytest: node ids, and the whole file for a file that did not import', () => {
    expect(selection(pytestRunner, ['a.py', 'c.py'], sel)).toEqual([
      { file: 'c.py', arg: null },
      { file: 'a.py', arg: 'a.py::C::t[1-2]' },
      { file: 'a.py', arg: 'a.py::t_b' },
    ]);
  });
  it('django: dotted method labels', () => {
    const files = ['tests/app/tests.py'];
    expect(selection(djangoRunner, files, { ids: ['test_x (app.tests.C)'], files: [], sampled: 0 })).toEqual([{ file: 'tests/app/tests.py', arg: 'app.tests.C.test_x' }]);
    // A class defined outside the requested module cannot be selected by label: the whole files run.
    expect(selection(djangoRunner, files, { ids: ['test_x (other.tests.C)'], files: [], sampled: 0 })).toBeNull();
  });
  it('a runner without selectArg, or a selection too long for one run, repeats the whole files', () => {
    expect(selection({ ...pytestRunner, selectArg: undefined }, ['a.py'], sel)).toBeNull();
    const many = Array.from({ length: 5000 }, (_, i) => `a.py::test_with_a_rather_long_name_${i}`);
    expect(selection(pytestRunner, ['a.py'], { ids: many, files: [], sampled: 0 })).toBeNull();
  });
});

// ---------------------------------------------------------------- the strategy against the old one

const SHAS = { pr1_base: '1'.repeat(40), pr1_head: '2'.repeat(40), pr2_base: '3'.repeat(40), pr2_head: '4'.repeat(40) };
const stateOf = (r: StateRequest): StateName => {
  const key = `${r.checkout[0]}${r.overlay?.[0] ?? '-'}`;
  return ({ '12': 'S1', '2-': 'S2', '24': 'S3', '34': 'S4', '4-': 'S5' } as const)[key as '12'];
};

/**
 * A fake chain env whose k-th run of a test in a state always gives the same status, whichever
 * strategy asked for it: both strategies then see the same observations of every test they run.
 */
function scriptedEnv(seed: string, tests: Record<StateName, string[]>, log: Array<{ state: StateName; ran: string[] }>, passes = false): ChainEnv {
  const seen = new Map<string, number>();
  const status = (s: StateName, id: string, k: number): TestStatus => {
    const h = createHash('sha256').update(`${seed}/${s}/${id}`).digest();
    const base: TestStatus = (['pass', 'fail', 'pass', 'skip'] as const)[h[0]! % 4]!;
    // About one test in six is flaky: its later runs differ from the first at random.
    if (h[1]! % 6 === 0 && k > 0) return createHash('sha256').update(`${seed}/${s}/${id}/${k}`).digest()[0]! % 2 ? 'pass' : 'fail';
    return base;
  };
  const env: ChainEnv = {
    containerId: 'fake',
    close: async () => undefined,
    async runState(req) {
      const s = stateOf(req);
      const wanted = req.select
        ? tests[s].filter((id) => req.select!.some((x) => (x.arg === null ? id.startsWith(`${x.file}::`) : x.arg === id)))
        : tests[s];
      const out: Record<string, TestStatus> = {};
      for (const id of wanted) {
        const k = seen.get(`${s}/${id}`) ?? 0;
        seen.set(`${s}/${id}`, k + 1);
        out[id] = status(s, id, k);
      }
      log.push({ state: s, ran: wanted });
      const failed = Object.values(out).some((x) => x === 'fail');
      return { kind: 'report', exitCode: failed ? 1 : 0, durationMs: 1, parsed: { tests: out, collectionErrors: [] }, outputTail: '' } satisfies StateRun;
    },
  };
  // A runner with passes (Django's): the k-th observation of a test is the same in a pass as in a run of its own.
  if (passes) env.runPasses = async (req, n) => Promise.all(Array.from({ length: n }, () => env.runState(req)));
  return env;
}

async function strategy(seed: string, repeat: RepeatStrategy, passes = false) {
  const ids = (file: string, n: number) => Array.from({ length: n }, (_, i) => `${file}::t${i}`);
  // PR1's file is among PR2's test files too: tests run in up to five states.
  const pr1 = ids('tests/test_a.py', 12);
  const tests = { S1: pr1, S2: pr1, S3: [...pr1, ...ids('tests/test_b.py', 8)], S4: [...pr1, ...ids('tests/test_b.py', 8)], S5: [...pr1, ...ids('tests/test_b.py', 8)] };
  const chain = validatedChain({ instance_id: `x__${seed}`, ...SHAS, pr1_test_files: ['tests/test_a.py'], anticipation_test_files: ['tests/test_a.py', 'tests/test_b.py'] });
  const log: Array<{ state: StateName; ran: string[] }> = [];
  const env = scriptedEnv(seed, tests, log, passes);
  const { states, cost } = await statesOf(runChainStates({ chain, runs: 3, repeat, signal: new AbortController().signal, envFor: async () => ({ kind: 'ready', env, runner: pytestRunner }) }));
  return { sets: computeSets(states), states, cost, log };
}

describe('runChainStates: candidates against every state repeated, on the same observations', () => {
  it('gives the same sets on 200 scripted chains, with fewer test executions, and still flags flaky tests it samples; gated excludes the same chains', async () => {
    let execAll = 0;
    let execNew = 0;
    let flakyCaught = 0;
    let gatedExcluded = 0;
    let gatedKept = 0;
    let flakyInPasses = 0;
    let startsNew = 0;
    let startsPasses = 0;
    for (let i = 0; i < 200; i++) {
      const old = await strategy(String(i), 'all');
      const now = await strategy(String(i), 'candidates');
      const { exclusion: _a, flaky_tests: flakyOld, ...setsOld } = old.sets;
      const { exclusion: _b, flaky_tests: flakyNew, ...setsNew } = now.sets;
      expect(setsNew, `chain ${i}`).toEqual(setsOld);
      // What the new strategy calls flaky, the old one does too (it looks at fewer tests, never others).
      expect(flakyOld).toEqual(expect.arrayContaining(flakyNew));
      flakyCaught += flakyNew.length;
      // gated: a chain excluded after a round is not run again, and no exclusion is ever lifted by more runs.
      const gated = await strategy(String(i), 'gated');
      expect(gated.sets.exclusion === null, `chain ${i}`).toBe(old.sets.exclusion === null);
      if (old.sets.exclusion === null) {
        expect(gated.sets).toEqual(now.sets);
        gatedKept++;
      } else gatedExcluded++;
      expect(gated.cost.stateRuns).toBeLessThanOrEqual(now.cost.stateRuns);
      expect(now.cost.stateRuns).toBeLessThanOrEqual(old.cost.stateRuns);
      // Repeats as passes of one runner start (rounds 2 and 3 together): the same sets, on as many runs.
      const inPasses = await strategy(String(i), 'candidates', true);
      const { exclusion: _c, flaky_tests: flakyPasses, ...setsPasses } = inPasses.sets;
      expect(setsPasses, `chain ${i}`).toEqual(setsOld);
      expect(inPasses.sets.exclusion === null, `chain ${i}`).toBe(old.sets.exclusion === null);
      expect(flakyOld).toEqual(expect.arrayContaining(flakyPasses));
      for (const name of STATE_NAMES) expect(inPasses.states[name].runs, `chain ${i} ${name}`).toBe(now.states[name].runs);
      expect(inPasses.cost.runnerStarts).toBeLessThanOrEqual(now.cost.runnerStarts);
      flakyInPasses += flakyPasses.length;
      startsNew += now.cost.runnerStarts;
      startsPasses += inPasses.cost.runnerStarts;
      execAll += old.log.reduce((a, r) => a + r.ran.length, 0);
      execNew += now.log.reduce((a, r) => a + r.ran.length, 0);
      // The rule is kept: a test in a set ran the same way in every run of every state.
      for (const id of [...now.sets.FAIL_TO_PASS, ...now.sets.PASS_TO_PASS, ...now.sets.PR2_FAIL_TO_PASS]) {
        for (const s of Object.values(now.states)) if (id in s.tests) expect(s.tests[id]).not.toBe('flaky');
      }
    }
    expect(execNew).toBeLessThan(execAll);
    expect(flakyCaught).toBeGreaterThan(0);
    expect(flakyInPasses).toBeGreaterThan(0);
    // Each repeated state: 1 start for its first run + 1 for its passes, instead of 1 + 2.
    expect(startsPasses).toBeLessThan(startsNew);
    expect([gatedExcluded, gatedKept].every((n) => n > 0)).toBe(true);
  });

  it('runs a state with no candidate once; gated runs an excluded chain once', async () => {
    // PR1's test flips; PR2's fails at both pr2_base and pr2_head: S3-S5 decide no set.
    const chain = validatedChain({ instance_id: 'x__once', ...SHAS, pr1_test_files: ['a.py'], anticipation_test_files: ['b.py'] });
    const outcomes: Record<StateName, TestStatus> = { S1: 'fail', S2: 'pass', S3: 'fail', S4: 'fail', S5: 'fail' };
    const ran: StateName[] = [];
    const env: ChainEnv = {
      containerId: 'fake',
      close: async () => undefined,
      async runState(req) {
        const s = stateOf(req);
        ran.push(s);
        const st = outcomes[s];
        const id = s === 'S1' || s === 'S2' ? 'a.py::t' : 'b.py::u';
        return { kind: 'report', exitCode: st === 'fail' ? 1 : 0, durationMs: 1, parsed: { tests: { [id]: st }, collectionErrors: [] }, outputTail: '' };
      },
    };
    await statesOf(runChainStates({ chain, runs: 3, repeat: 'candidates', signal: new AbortController().signal, envFor: async () => ({ kind: 'ready', env, runner: pytestRunner }) }));
    expect(ran).toEqual(['S1', 'S2', 'S3', 'S4', 'S5', 'S1', 'S2', 'S1', 'S2']);
    // gated: no PR1 test passes before and after PR1, so the chain is excluded after one run of each state.
    ran.length = 0;
    const { states } = await statesOf(runChainStates({ chain, runs: 3, repeat: 'gated', signal: new AbortController().signal, envFor: async () => ({ kind: 'ready', env, runner: pytestRunner }) }));
    expect(ran).toEqual(['S1', 'S2', 'S3', 'S4', 'S5']);
    expect(computeSets(states).exclusion?.reason).toBe('pr1_p2p_empty');
  });

  it('a selection the runner rejects is replaced by a run of the whole files, never counted as an outcome', async () => {
    const chain = validatedChain({ instance_id: 'x__reject', ...SHAS, pr1_test_files: ['a.py'], anticipation_test_files: ['a.py'] });
    const calls: Array<{ s: StateName; selected: boolean }> = [];
    const env: ChainEnv = {
      containerId: 'fake',
      close: async () => undefined,
      async runState(req) {
        const s = stateOf(req);
        calls.push({ s, selected: !!req.select });
        // pytest exits 4 ("not found") on a node id it does not accept.
        const none: Record<string, TestStatus> = {};
        if (req.select) return { kind: 'report', exitCode: 4, durationMs: 1, parsed: { tests: none, collectionErrors: [] }, outputTail: 'ERROR: not found' };
        const st = s === 'S1' || s === 'S4' ? 'fail' : 'pass';
        return { kind: 'report', exitCode: st === 'fail' ? 1 : 0, durationMs: 1, parsed: { tests: { 'a.py::t': st }, collectionErrors: [] }, outputTail: '' };
      },
    };
    const { states } = await statesOf(runChainStates({ chain, runs: 2, repeat: 'candidates', signal: new AbortController().signal, envFor: async () => ({ kind: 'ready', env, runner: pytestRunner }) }));
    expect(calls.slice(5, 7)).toEqual([{ s: 'S1', selected: true }, { s: 'S1', selected: false }]);
    expect(Object.values(states).map((s) => s.outcome.kind)).toEqual(['ran', 'ran', 'ran', 'ran', 'ran']);
    expect(computeSets(states).FAIL_TO_PASS).toEqual(['a.py::t']);
  });
  it('passes: the first run of each state is its own start, the repeats one more; a test that changes between passes is in no set; a pass that is no evidence falls back to runs of their own', async () => {
    const chain = validatedChain({ instance_id: 'x__passes', ...SHAS, pr1_test_files: ['a.py'], anticipation_test_files: ['a.py'] });
    const calls: Array<{ s: StateName; passes: number }> = [];
    const report = (id: string, st: TestStatus): StateRun => ({ kind: 'report', exitCode: st === 'fail' ? 1 : 0, durationMs: 1, parsed: { tests: { [id]: st }, collectionErrors: [] }, outputTail: '' });
    // a.py::t fails at the bases, passes at the heads; a.py::leak passes except in S2's second pass
    // (an earlier pass left data behind); S4's passes crash.
    const outcome = (s: StateName, id: string, pass: number): TestStatus => (id === 'a.py::leak' ? (s === 'S2' && pass === 2 ? 'fail' : 'pass') : s === 'S1' || s === 'S4' ? 'fail' : 'pass');
    const both = (s: StateName, pass: number): StateRun => {
      const r = report('a.py::t', outcome(s, 'a.py::t', pass));
      const tests = { ...r.parsed.tests, 'a.py::leak': outcome(s, 'a.py::leak', pass) };
      return { ...r, exitCode: Object.values(tests).includes('fail') ? 1 : 0, parsed: { tests, collectionErrors: [] } };
    };
    const env: ChainEnv = {
      containerId: 'fake',
      close: async () => undefined,
      async runState(req) {
        calls.push({ s: stateOf(req), passes: 1 });
        return both(stateOf(req), 0);
      },
      async runPasses(req, n) {
        const s = stateOf(req);
        calls.push({ s, passes: n });
        if (s === 'S4') return Array.from({ length: n }, (): StateRun => ({ kind: 'report', exitCode: 1, durationMs: 1, parsed: { tests: {}, collectionErrors: [], problem: 'crashed' }, outputTail: 'Traceback' }));
        return Array.from({ length: n }, (_, k) => both(s, k + 1));
      },
    };
    const { states, cost } = await statesOf(runChainStates({ chain, runs: 3, repeat: 'candidates', signal: new AbortController().signal, envFor: async () => ({ kind: 'ready', env, runner: djangoRunner }) }));
    expect(calls).toEqual([
      ...STATE_NAMES.map((s) => ({ s, passes: 1 })),
      ...(['S1', 'S2', 'S3'] as const).map((s) => ({ s, passes: 2 })),
      { s: 'S4', passes: 2 },
      { s: 'S4', passes: 1 },
      { s: 'S4', passes: 1 },
      { s: 'S5', passes: 2 },
    ]);
    expect(STATE_NAMES.map((s) => states[s].runs)).toEqual([3, 3, 3, 3, 3]);
    // 5 first runs, 4 × 2 passes, the 2 dropped passes of S4 and its 2 runs of their own.
    expect(cost).toMatchObject({ stateRuns: 17, runnerStarts: 12 });
    expect(states.S2.tests['a.py::leak']).toBe('flaky');
    const sets = computeSets(states);
    expect(sets.flaky_tests).toEqual(['a.py::leak']);
    expect(sets.PASS_TO_PASS).toEqual([]);
    expect(sets.FAIL_TO_PASS).toEqual(['a.py::t']);
    expect(Object.values(states).map((s) => s.outcome.kind)).toEqual(['ran', 'ran', 'ran', 'ran', 'ran']);
  });
});
