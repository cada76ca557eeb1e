/**
 * S1 when PR1's overlaid test files crash the runner at pr1_base (a Django test app's models use an option PR1
 * adds): decided test by test on the base's own version of the files, excluded `pr1_base_crash` only when that
 * leaves no evidence. The sets (computeSets), the runs that decide them (runChainStates with an environment
 * that answers each request as a runner would) and recheck's comparison.
 */
import { describe, expect, it } from 'vitest';
import type { ChainEnv, StateRequest, StateRun } from '../../../core/env/index.ts';
import { djangoRunner } from '../../../core/env/runners/django/index.ts';
import type { TestStatus } from '../../../core/env/runners/types.ts';
import type { Outcome, StateName, StateResult } from '../../../core/foundation/model/validated.ts';
import { computeSets } from '../../../stages/validate/compute-sets.ts';
import { compareValidated } from '../../../stages/validate/recheck.ts';
import { overlayCrash, runChainStates } from '../../../stages/validate/run-states.ts';
import { validatedChain } from '../../helpers/chain-fixture.ts';

const CRASH = "TypeError: Field.__init__() got an unexpected keyword argument 'db_default'";
const DECIDED = { reason: 'base_version_after_overlay_crash', overlay: 'h', crash: CRASH } as const;
const OLD = 'test_old (defaults.tests.T)';
const NEW = 'test_db_default (defaults.tests.T)';
const FILES = ['tests/defaults/tests.py'];

function state(name: StateName, tests: Record<string, Outcome>, extra: Partial<StateResult> = {}): StateResult {
  return { name, checkout: 'c', overlay: null, testFiles: FILES, outcome: { kind: 'ran' }, runs: 1, tests, collectionErrors: [], durationMs: 1, ...extra };
}

/** PR1 adds NEW (and the option its models use); OLD predates it. S1 ran the base's own version of the files. */
function crashed(s1: Partial<StateResult> = {}): Record<StateName, StateResult> {
  const edge = 'test_edge (defaults.tests.T)';
  return {
    S1: state('S1', { [OLD]: 'pass' }, { decidedBy: DECIDED, ...s1 }),
    S2: state('S2', { [OLD]: 'pass', [NEW]: 'pass' }),
    S3: state('S3', { [OLD]: 'pass', [NEW]: 'pass', [edge]: 'fail' }),
    S4: state('S4', { [OLD]: 'pass', [NEW]: 'pass', [edge]: 'fail' }),
    S5: state('S5', { [OLD]: 'pass', [NEW]: 'pass', [edge]: 'pass' }),
  };
}

describe('computeSets: S1 decided on the base version after the overlaid tests crashed the runner', () => {
  it('crash and the base version ran: a row, FAIL_TO_PASS the tests PR1 adds, PASS_TO_PASS those passing in their base version', () => {
    const s = computeSets(crashed(), djangoRunner.testFileOf);
    expect(s).toMatchObject({ FAIL_TO_PASS: [NEW], PASS_TO_PASS: [OLD], ANTICIPATION_FAIL_TO_PASS: ['test_edge (defaults.tests.T)'], exclusion: null });
  });

  it('a test that does not pass in its base version counts as failing at S1, as in a module that cannot be imported', () => {
    const st = crashed();
    st.S1.tests[NEW] = 'skip';
    st.S1.tests['test_gone (defaults.tests.T)'] = 'pass';
    const s = computeSets(st, djangoRunner.testFileOf);
    expect(s.FAIL_TO_PASS).toEqual([NEW]);
    // A base-version test pr1_head no longer has is in no set.
    expect(s.PASS_TO_PASS).toEqual([OLD]);
  });

  it('the same run without decidedBy is read as ever: NEW is absent at S1, nothing flips', () => {
    const st = crashed({ decidedBy: undefined });
    expect(computeSets(st, djangoRunner.testFileOf).exclusion?.reason).toBe('no_pr1_failure');
  });

  it('a base-version test PR1 breaks, or one flaky there, stays out of PASS_TO_PASS', () => {
    const st = crashed();
    st.S1.tests['test_broken (defaults.tests.T)'] = 'pass';
    st.S2.tests['test_broken (defaults.tests.T)'] = 'fail';
    st.S1.tests['test_wobbly (defaults.tests.T)'] = 'flaky';
    st.S2.tests['test_wobbly (defaults.tests.T)'] = 'pass';
    const s = computeSets(st, djangoRunner.testFileOf);
    expect(s.p2p_excluded_gold_fail).toEqual(['test_broken (defaults.tests.T)']);
    expect(s.flaky_tests).toEqual(['test_wobbly (defaults.tests.T)']);
    expect(s.PASS_TO_PASS).toEqual([OLD]);
    expect(s.FAIL_TO_PASS).toEqual([NEW]);
  });

  it('crash and the base version crashes too: pr1_base_crash, quoting both', () => {
    const st = crashed({ tests: {}, outcome: { kind: 'chain', reason: 'runner_crash', detail: "Django's test runner crashed before running any test: ImportError: x" } });
    expect(computeSets(st, djangoRunner.testFileOf).exclusion).toEqual({
      reason: 'pr1_base_crash', stage: 'validate',
      detail: `S1: ${CRASH}; the base's own version of PR1's test files: Django's test runner crashed before running any test: ImportError: x`,
    });
  });

  it('crash and none of the files exists at the base: pr1_base_crash; an infrastructure failure of that run: env_failed_pr1, never a row', () => {
    const none = crashed({ tests: {}, outcome: { kind: 'infra', reason: 'no_tests_collected', detail: 'the test runner collected none of the requested tests (exit 0)' } });
    expect(computeSets(none, djangoRunner.testFileOf).exclusion?.reason).toBe('pr1_base_crash');
    const timeout = crashed({ tests: {}, outcome: { kind: 'infra', reason: 'timeout', detail: 'timed out after 600s' } });
    expect(computeSets(timeout, djangoRunner.testFileOf).exclusion).toMatchObject({ reason: 'env_failed_pr1', detail: "S1 (the base's own version of PR1's test files): timed out after 600s" });
  });

  it('crash and no evidence left in the base version: pr1_base_crash for an empty FAIL_TO_PASS or PASS_TO_PASS', () => {
    const allOld = crashed({ tests: { [OLD]: 'pass', [NEW]: 'pass' } });
    expect(computeSets(allOld, djangoRunner.testFileOf).exclusion).toMatchObject({ reason: 'pr1_base_crash', detail: expect.stringContaining('no test of PR1\'s test files fails there and passes at pr1_head') });
    const noneGreen = crashed({ tests: { [OLD]: 'fail' } });
    const s = computeSets(noneGreen, djangoRunner.testFileOf);
    expect(s.FAIL_TO_PASS).toEqual([NEW, OLD]);
    expect(s.exclusion).toMatchObject({ reason: 'pr1_base_crash', detail: expect.stringContaining("passes there and at pr1_head") });
  });

  it('the head broken too is the environment', () => {
    const st = crashed();
    st.S2 = state('S2', {}, { outcome: { kind: 'chain', reason: 'runner_crash', detail: 'settings failed' } });
    expect(computeSets(st, djangoRunner.testFileOf).exclusion?.reason).toBe('env_failed_pr1');
  });
});

const MODELS = 'tests/defaults/models.py';

/**
 * A Django runner's answers: with PR1's models laid over pr1_base the runner crashes before any test; pr1_base on
 * its own runs OLD; pr1_head runs both. Every request is recorded.
 */
function fakeEnv(shas: { pr1_base: string; pr1_head: string }, baseVersion: 'runs' | 'crashes', overlaid: 'before any test' | 'midway' = 'before any test'): { env: ChainEnv; seen: StateRequest[] } {
  const seen: StateRequest[] = [];
  const report = (tests: Record<string, TestStatus>, problem?: string): StateRun => ({
    kind: 'report', exitCode: problem ? 1 : 0, durationMs: 5, outputTail: '', parsed: { tests, collectionErrors: [], ...(problem ? { problem } : {}) },
  });
  const answer = (req: StateRequest): StateRun => {
    seen.push(req);
    if (req.checkout === shas.pr1_base) {
      if (req.overlay !== null) {
        return overlaid === 'midway' ? report({ [OLD]: 'pass' }, 'Django\'s test runner stopped after 1 result(s) without its summary: Segmentation fault') : report({}, `Django's test runner crashed before running any test: ${CRASH}`);
      }
      return baseVersion === 'runs' ? report({ [OLD]: 'pass' }) : report({}, "Django's test runner crashed before running any test: ImportError");
    }
    return report({ [OLD]: 'pass', [NEW]: 'pass' });
  };
  const env: ChainEnv = {
    containerId: 'fake',
    runState: async (req) => answer(req),
    runPasses: async (req, passes) => Array.from({ length: passes }, () => answer(req)),
    close: async () => undefined,
  };
  return { env, seen };
}

describe('runChainStates: the base version runs when the overlaid tests crash at pr1_base', () => {
  const sha = (c: string): string => c.repeat(40);
  const chain = validatedChain({
    pr1_base: sha('1'), pr1_head: sha('2'), pr2_base: sha('3'), pr2_head: sha('4'),
    pr1_test_files: FILES, pr1_overlay_files: [...FILES, MODELS], anticipation_test_files: FILES, anticipation_overlay_files: FILES,
  });

  it('S1 is the base version (no overlay), marked decidedBy with the crash, and its repeats run that version', async () => {
    const { env, seen } = fakeEnv({ pr1_base: chain.pr1_base, pr1_head: chain.pr1_head }, 'runs');
    const out = await runChainStates({ chain, runs: 3, repeat: 'candidates', signal: new AbortController().signal, envFor: async () => ({ kind: 'ready', env, runner: djangoRunner }) });
    if (out.kind !== 'ran') throw new Error('unexpected outgrown environment');
    const s1 = out.states.S1;
    expect(s1).toMatchObject({ checkout: chain.pr1_base, overlay: null, outcome: { kind: 'ran' }, tests: { [OLD]: 'pass' }, runs: 3 });
    expect(s1.decidedBy).toEqual({ reason: 'base_version_after_overlay_crash', overlay: chain.pr1_head, crash: `Django's test runner crashed before running any test: ${CRASH}` });
    const atBase = seen.filter((r) => r.checkout === chain.pr1_base);
    // One overlaid run (the crash), then the base version: its first run and its repeated passes.
    expect(atBase.map((r) => r.overlay)).toEqual([chain.pr1_head, null, null, null]);
    expect(atBase[1]).toMatchObject({ testFiles: FILES, overlayFiles: [] });
    expect(computeSets(out.states, djangoRunner.testFileOf)).toMatchObject({ FAIL_TO_PASS: [NEW], PASS_TO_PASS: [OLD] });
  });

  it('the base version crashing too keeps that crash as S1\'s outcome: pr1_base_crash', async () => {
    const { env } = fakeEnv({ pr1_base: chain.pr1_base, pr1_head: chain.pr1_head }, 'crashes');
    const out = await runChainStates({ chain, runs: 1, signal: new AbortController().signal, envFor: async () => ({ kind: 'ready', env, runner: djangoRunner }) });
    if (out.kind !== 'ran') throw new Error('unexpected outgrown environment');
    expect(out.states.S1).toMatchObject({ overlay: null, outcome: { kind: 'chain', reason: 'runner_crash' }, decidedBy: { reason: 'base_version_after_overlay_crash' } });
    expect(computeSets(out.states, djangoRunner.testFileOf).exclusion?.reason).toBe('pr1_base_crash');
  });

  it('a run cut short after some results is no crash of the overlaid files: nothing runs again, pr1_base_crash as before', async () => {
    const { env, seen } = fakeEnv({ pr1_base: chain.pr1_base, pr1_head: chain.pr1_head }, 'runs', 'midway');
    const out = await runChainStates({ chain, runs: 1, signal: new AbortController().signal, envFor: async () => ({ kind: 'ready', env, runner: djangoRunner }) });
    if (out.kind !== 'ran') throw new Error('unexpected outgrown environment');
    expect(seen.filter((r) => r.checkout === chain.pr1_base && r.overlay === null)).toEqual([]);
    expect(out.states.S1.decidedBy).toBeUndefined();
    expect(computeSets(out.states, djangoRunner.testFileOf).exclusion?.reason).toBe('pr1_base_crash');
  });
});

describe('recheck: how S1 was decided must hold too', () => {
  it('a rerun that decides S1 another way differs, even with the same sets', () => {
    const st = crashed();
    const stored = validatedChain({ states: Object.values(st) });
    const rerun = validatedChain({ states: Object.values({ ...st, S1: { ...st.S1, decidedBy: undefined } }) });
    expect(compareValidated(stored, rerun)).toEqual({ sets: [], exclusion: null, backend: null, s1: { stored: 'base_version', rerun: 'overlay' } });
    expect(compareValidated(stored, stored)).toBeNull();
  });

  it('a rerun that is excluded where the stored row was not says why (its detail)', () => {
    const stored = validatedChain({});
    const rerun = validatedChain({ excluded: { reason: 'env_failed_pr1', detail: 'environment install failed at abc: no go1.22', stage: 'validate' } });
    expect(compareValidated(stored, rerun)?.exclusion).toEqual({ stored: stored.excluded?.reason ?? null, rerun: 'env_failed_pr1', rerunDetail: 'environment install failed at abc: no go1.22' });
  });
});

describe('overlayCrash: when S1 is decided on the base version', () => {
  const report = (tests: Record<string, TestStatus>, collectionErrors: string[] = []): StateRun =>
    ({ kind: 'report', exitCode: 1, durationMs: 1, outputTail: '', parsed: { tests, collectionErrors } }) as unknown as StateRun;
  const s2 = state('S2', { [OLD]: 'pass', [NEW]: 'pass' });

  it('the overlaid files do not load at pr1_base (a Go package that does not compile): no test ran, the files are named', () => {
    const s1 = state('S1', {}, { overlay: 'h', collectionErrors: FILES });
    expect(overlayCrash(s1, [report({}, FILES)], s2)).toBe(`PR1's test files do not load at pr1_base: ${FILES[0]}`);
  });

  it('but not when some test ran, when S1 had no overlay, or when pr1_head could not load them either', () => {
    expect(overlayCrash(state('S1', { [OLD]: 'pass' }, { overlay: 'h', collectionErrors: FILES }), [report({ [OLD]: 'pass' }, FILES)], s2)).toBeNull();
    expect(overlayCrash(state('S1', {}, { collectionErrors: FILES }), [report({}, FILES)], s2)).toBeNull();
    expect(overlayCrash(state('S1', {}, { overlay: 'h', collectionErrors: FILES }), [report({}, FILES)], state('S2', {}, { collectionErrors: FILES }))).toBeNull();
  });
});
