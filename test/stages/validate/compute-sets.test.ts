import { describe, expect, it } from 'vitest';
import { aggregateRuns, brokenState, runProblem, withoutIgnoredTests } from '../../../stages/validate/aggregate-runs.ts';
import { computeSets, skippedAtHead } from '../../../stages/validate/compute-sets.ts';
import type { StateRun } from '../../../core/env/index.ts';
import { djangoRunner } from '../../../core/env/runners/django/index.ts';
import { pytestRunner } from '../../../core/env/runners/pytest/index.ts';
import type { TestStatus } from '../../../core/env/runners/types.ts';
import type { Outcome, StateName, StateResult } from '../../../core/foundation/model/validated.ts';

function state(name: StateName, tests: Record<string, Outcome>, extra: Partial<StateResult> = {}): StateResult {
  return { name, checkout: 'c', overlay: null, testFiles: [], outcome: { kind: 'ran' }, runs: 3, tests, collectionErrors: [], durationMs: 1, ...extra };
}

/** A healthy chain: t_new is PR1's fail->pass, t_old stays green, t_edge is the anticipation test. */
function healthy(): Record<StateName, StateResult> {
  return {
    S1: state('S1', { 'a.py::t_new': 'fail', 'a.py::t_old': 'pass' }),
    S2: state('S2', { 'a.py::t_new': 'pass', 'a.py::t_old': 'pass' }),
    S3: state('S3', { 'a.py::t_edge': 'fail', 'a.py::t_new': 'pass' }),
    S4: state('S4', { 'a.py::t_edge': 'fail', 'a.py::t_new': 'pass' }),
    S5: state('S5', { 'a.py::t_edge': 'pass', 'a.py::t_new': 'pass' }),
  };
}

function run(tests: Record<string, TestStatus>, extra: Partial<StateRun> = {}): StateRun {
  return { kind: 'report', exitCode: Object.values(tests).some((s) => s !== 'pass' && s !== 'skip') ? 1 : 0, durationMs: 10, parsed: { tests, collectionErrors: [] }, outputTail: '', ...extra } as StateRun;
}

const PYTEST = pytestRunner.exitCodes;
const req = { name: 'S2' as const, checkout: 'c', overlay: null, testFiles: ['a.py'], overlayFiles: [] };
const agg = (runs: StateRun[]): StateResult => aggregateRuns(req, runs, PYTEST);

describe('computeSets', () => {
  it('computes every set of a healthy chain and excludes nothing', () => {
    const s = computeSets(healthy());
    expect(s).toMatchObject({
      FAIL_TO_PASS: ['a.py::t_new'],
      PASS_TO_PASS: ['a.py::t_old'],
      PR2_FAIL_TO_PASS: ['a.py::t_edge'],
      PR2_PASS_TO_PASS: ['a.py::t_new'],
      ANTICIPATION_FAIL_TO_PASS: ['a.py::t_edge'],
      exclusion: null,
    });
  });

  it('skipped_test_is_never_fail_to_pass', () => {
    const st = healthy();
    st.S1.tests['a.py::t_new'] = 'skip';
    const s = computeSets(st);
    expect(s.FAIL_TO_PASS).toEqual([]);
    expect(s.exclusion?.reason).toBe('no_pr1_failure');
  });

  it('flaky_test_enters_no_set', () => {
    const st = healthy();
    st.S1.tests['a.py::t_flaky'] = 'pass';
    st.S2.tests['a.py::t_flaky'] = 'flaky';
    st.S4.tests['a.py::t_flaky'] = 'fail';
    st.S5.tests['a.py::t_flaky'] = 'pass';
    const s = computeSets(st);
    for (const set of [s.FAIL_TO_PASS, s.PASS_TO_PASS, s.p2p_excluded_gold_fail, s.PR2_FAIL_TO_PASS, s.PR2_PASS_TO_PASS, s.ANTICIPATION_FAIL_TO_PASS]) {
      expect(set).not.toContain('a.py::t_flaky');
    }
    expect(s.flaky_tests).toEqual(['a.py::t_flaky']);
  });

  it('import_crash_at_base_counts_as_failing_when_the_head_imports_the_file', () => {
    const st = healthy();
    st.S1 = state('S1', { 'a.py::t_old': 'pass' }, { collectionErrors: ['b.py'] });
    st.S2.tests['b.py::t_added'] = 'pass';
    // t_new did not run at S1 (a.py ran without it) and is no crash: only b.py's test flips.
    expect(computeSets(st).FAIL_TO_PASS).toEqual(['b.py::t_added']);
  });

  it('import_crash_at_base_is_not_a_failure_when_the_head_cannot_import_it_either', () => {
    const st = healthy();
    st.S1.collectionErrors = ['b.py'];
    st.S2.collectionErrors = ['b.py'];
    const s = computeSets(st);
    expect(s.FAIL_TO_PASS).toEqual(['a.py::t_new']);
    expect(s.exclusion?.reason).toBe('env_failed_pr1');
  });

  it('import_crash_at_head_is_an_environment_failure_not_a_chain_failure', () => {
    const st = healthy();
    st.S2 = state('S2', { 'a.py::t_old': 'pass' }, { collectionErrors: ['a.py'] });
    expect(computeSets(st).exclusion?.reason).toBe('env_failed_pr1');
  });

  it('pr2_test_that_cannot_import_at_pr1_head_is_not_gradeable', () => {
    const st = healthy();
    st.S3 = state('S3', {}, { collectionErrors: ['a.py'] });
    const s = computeSets(st);
    expect(s.ANTICIPATION_FAIL_TO_PASS).toEqual([]);
    expect(s.anticipation_not_gradeable).toEqual(['a.py::t_edge']);
    expect(s.exclusion?.reason).toBe('anticipation_not_gradeable');
  });

  it('pr2_test_passing_at_pr1_head_is_no_anticipation', () => {
    const st = healthy();
    st.S3.tests['a.py::t_edge'] = 'pass';
    expect(computeSets(st).exclusion?.reason).toBe('anticipation_empty');
  });

  it('test_the_gold_pr1_breaks_leaves_pass_to_pass_and_is_listed', () => {
    const st = healthy();
    st.S1.tests['a.py::t_broken'] = 'pass';
    st.S2.tests['a.py::t_broken'] = 'fail';
    const s = computeSets(st);
    expect(s.PASS_TO_PASS).toEqual(['a.py::t_old']);
    expect(s.p2p_excluded_gold_fail).toEqual(['a.py::t_broken']);
  });

  it('state_that_did_not_run_is_an_environment_failure_never_a_fail', () => {
    const st = healthy();
    st.S4 = state('S4', {}, { outcome: { kind: 'infra', reason: 'timeout', detail: 'timed out after 600s' } });
    const s = computeSets(st);
    expect(s.exclusion).toMatchObject({ reason: 'env_failed_pr2', detail: 'S4: timed out after 600s' });
  });

  it('runner_crash_at_the_base_from_the_overlaid_tests_is_the_chain_not_the_environment', () => {
    const st = healthy();
    st.S1 = state('S1', {}, { outcome: { kind: 'chain', reason: 'runner_crash', detail: "TypeError: __init__() got an unexpected keyword argument 'nulls_distinct'" } });
    expect(computeSets(st).exclusion).toMatchObject({ reason: 'pr1_base_crash' });
    // The same crash at the head too is the environment.
    st.S2 = state('S2', {}, { outcome: { kind: 'chain', reason: 'runner_crash', detail: 'settings failed' } });
    expect(computeSets(st).exclusion?.reason).toBe('env_failed_pr1');
  });

  it('fix_only_another_backend_can_show_gets_a_reason_not_a_false_row', () => {
    const st = healthy();
    // PR2's new test is skipped where it could run only on another database: no flip, and it says why.
    st.S4.tests['a.py::t_edge'] = 'skip';
    st.S5.tests['a.py::t_edge'] = 'skip';
    expect(computeSets(st).exclusion).toMatchObject({ reason: 'pr2_tests_skipped', detail: 'skipped at pr2_head: a.py::t_edge' });
  });

  it('names the empty set when PR2 tests do not flip', () => {
    const st = healthy();
    st.S4.tests['a.py::t_edge'] = 'pass';
    expect(computeSets(st).exclusion?.reason).toBe('pr2_not_fail_to_pass');
    const st2 = healthy();
    st2.S1.tests['a.py::t_old'] = 'fail';
    st2.S2.tests['a.py::t_old'] = 'fail';
    st2.S2.tests['a.py::t_new'] = 'fail';
    expect(computeSets(st2).exclusion?.reason).toBe('pr1_f2p_zero');
  });
});

describe('aggregateRuns', () => {

  it('outcome_that_changes_between_runs_is_flaky', () => {
    const s = agg([run({ 'a.py::t': 'pass' }), run({ 'a.py::t': 'fail' }), run({ 'a.py::t': 'pass' })]);
    expect(s.tests['a.py::t']).toBe('flaky');
  });

  it('test_missing_from_one_run_is_flaky_not_passing', () => {
    const s = agg([run({ 'a.py::t': 'pass' }), run({ 'a.py::u': 'pass' }), run({ 'a.py::t': 'pass' })]);
    expect(s.tests['a.py::t']).toBe('flaky');
  });

  it('failure_kind_is_kept_only_when_every_run_named_the_same_exception', () => {
    const kinds = (k: Record<string, string>) => ({ parsed: { tests: { 'a.py::t': 'fail' as const, 'a.py::u': 'fail' as const }, collectionErrors: [], failureKinds: k } });
    const s = agg([run({}, kinds({ 'a.py::t': 'AssertionError', 'a.py::u': 'KeyError' })), run({}, kinds({ 'a.py::t': 'AssertionError', 'a.py::u': 'TypeError' }))]);
    expect(s.failureKinds).toEqual({ 'a.py::t': 'AssertionError' });
    // A run that named none: no kind for the state, and no field at all.
    expect(agg([run({}, kinds({ 'a.py::t': 'AssertionError' })), run({ 'a.py::t': 'fail' })]).failureKinds).toBeUndefined();
  });

  it('error_counts_as_fail_only_when_every_run_failed', () => {
    const s = agg([run({ 'a.py::t': 'error' }), run({ 'a.py::t': 'fail' })]);
    expect(s.tests['a.py::t']).toBe('fail');
  });

  it('nonzero_exit_without_a_failing_test_is_an_infrastructure_error_not_a_pass', () => {
    const r = run({ 'a.py::t': 'pass' }, { exitCode: 3, outputTail: 'INTERNALERROR> boom' });
    expect(runProblem(r, PYTEST)?.detail).toMatch(/exited 3: INTERNALERROR> boom/);
    expect(agg([r])).toMatchObject({ outcome: { kind: 'infra', reason: 'runner_exit' }, tests: {} });
    const failedWithoutFailure = run({ 'a.py::t': 'pass' }, { exitCode: 1, outputTail: 'exit 1' });
    expect(runProblem(failedWithoutFailure, PYTEST)?.detail).toMatch(/exited 1 without a failing test/);
  });

  it('run_without_a_report_is_not_evidence_the_suite_ran', () => {
    expect(agg([run({}, { kind: 'no_report', why: 'missing', exitCode: 4, outputTail: 'ERROR: usage' } as Partial<StateRun>)]).outcome.kind).toBe('infra');
  });

  it('a_run_ended_by_the_code_under_tests_process_exit_is_the_chains_crash_with_the_line_that_says_so', () => {
    const tail = '  console.error\n    process.exit called with "1"\n\n      at process.exit (node_modules/jest-runtime/build/index.js:1)\n\nNode.js v20.20.2';
    const r = run({}, { kind: 'no_report', why: 'missing', exitCode: 1, outputTail: tail } as Partial<StateRun>);
    expect(runProblem(r, PYTEST)).toEqual({ kind: 'chain', reason: 'runner_crash', detail: 'the code under test ended the runner: process.exit called with "1"' });
    const crash = run({}, { kind: 'no_report', why: 'missing', exitCode: 1, outputTail: 'TypeError: x is not a function\n    at y (a.js:1)\n\nNode.js v20.20.2' } as Partial<StateRun>);
    expect(runProblem(crash, PYTEST)).toMatchObject({ kind: 'infra', reason: 'no_report', detail: expect.stringMatching(/: TypeError: x is not a function$/) });
  });

  it('timeout_is_its_own_status', () => {
    const s = agg([run({}, { kind: 'timeout', durationMs: 600_000 } as Partial<StateRun>)]);
    expect(s.outcome).toEqual({ kind: 'infra', reason: 'timeout', detail: 'timed out after 600s' });
  });

  it('state_that_collected_zero_tests_is_never_evidence_so_never_anticipation_empty', () => {
    // pytest's own "no tests collected" exit code, and any runner's zero tests without a collection error.
    const none = agg([run({}, { exitCode: 5, outputTail: 'no tests ran' })]);
    expect(none.outcome).toMatchObject({ kind: 'infra', reason: 'no_tests_collected' });
    const silent = aggregateRuns(req, [run({}, { exitCode: 0 })], djangoRunner.exitCodes);
    expect(silent.outcome).toMatchObject({ kind: 'infra', reason: 'no_tests_collected' });
    // At S3 that used to read as "PR2's tests already pass at pr1_head": now the environment is blamed.
    const st = healthy();
    st.S3 = silent;
    const s = computeSets(st);
    expect(s.exclusion?.reason).toBe('env_failed_pr2');
    expect(s.exclusion?.reason).not.toBe('anticipation_empty');
  });

  it('collection_errors_alone_are_evidence_a_file_cannot_be_imported', () => {
    const r = run({}, { exitCode: 1 });
    r.parsed.collectionErrors.push('tests/test_new.py');
    expect(agg([r]).outcome).toEqual({ kind: 'ran' });
  });
});

describe('a state before its sets', () => {
  it('a state whose environment never built did not run: infra, never a failing test', () => {
    const broken = brokenState(req, 'environment install failed at abc');
    expect(broken).toMatchObject({ name: 'S2', outcome: { kind: 'infra', reason: 'env_build', detail: 'environment install failed at abc' }, runs: 0, tests: {} });
    const states = { ...healthy(), S2: broken };
    expect(computeSets(states)).toMatchObject({ FAIL_TO_PASS: [], exclusion: { reason: 'env_failed_pr1' } });
  });

  it("a recipe's ignored test leaves the state, so its flip is in no set", () => {
    const recipe = { ignoreTests: ['a.py::t_new'] };
    const states = Object.fromEntries(Object.entries(healthy()).map(([n, st]) => [n, withoutIgnoredTests(st, recipe)])) as Record<StateName, StateResult>;
    expect(Object.keys(states.S1.tests)).toEqual(['a.py::t_old']);
    expect(computeSets(states).exclusion).toMatchObject({ reason: 'no_pr1_failure' });
    const s1 = healthy().S1;
    expect(withoutIgnoredTests(s1, { ignoreTests: [] })).toBe(s1);
    expect(withoutIgnoredTests(s1, null)).toBe(s1);
  });

  it('a test skipped at the head that did not pass before might have flipped: named, sorted; one that passed before is not', () => {
    const base = state('S4', { 'a.py::t_b': 'fail', 'a.py::t_a': 'fail', 'a.py::t_was_green': 'pass' });
    const head = state('S5', { 'a.py::t_b': 'skip', 'a.py::t_a': 'skip', 'a.py::t_was_green': 'skip', 'a.py::t_new': 'skip' });
    expect(skippedAtHead(base, head)).toEqual(['a.py::t_a', 'a.py::t_b', 'a.py::t_new']);
  });
});
