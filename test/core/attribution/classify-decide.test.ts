/**
 * One run of the fail->pass tests as a bisection verdict (the real pytest parser reads real JUnit
 * XML), and the change a bisection names as PR1. Each guard is named after the mistake it prevents.
 */
import { describe, expect, it } from 'vitest';
import { chainBisectInput, classifyRun, decideAttribution, executionOutweighs, type BisectResult } from '../../../core/attribution/index.ts';
import { getRunner, type StateRun } from '../../../core/env/index.ts';
import type { PullRequest } from '../../../core/foundation/model/change.ts';
import { validatedChain } from '../../helpers/chain-fixture.ts';

const pytest = getRunner('pytest');
const FILES = ['tests/test_m.py'];

function junit(cases: string): string {
  return `<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest" errors="0" failures="0" skipped="0" tests="1" time="0.1">${cases}</testsuite></testsuites>`;
}
const PASS = (name: string) => `<testcase classname="tests.test_m" name="${name}" file="tests/test_m.py" time="0.01"/>`;
const FAIL = (name: string, kind = 'AssertionError') =>
  `<testcase classname="tests.test_m" name="${name}" file="tests/test_m.py" time="0.01"><failure message="assert 1 == 2">boom
tests/test_m.py:3: ${kind}</failure></testcase>`;
const SKIP = (name: string) => `<testcase classname="tests.test_m" name="${name}" file="tests/test_m.py" time="0.01"><skipped message="no backend">x</skipped></testcase>`;
const COLLECT = '<testcase classname="" name="tests.test_m" file="tests/test_m.py" time="0"><error message="collection failure">ImportError: cannot import name f</error></testcase>';

function run(xml: string | null, exitCode: number, kind: StateRun['kind'] = 'report', output = ''): StateRun {
  const parsed = pytest.parse({ junitXml: xml, output, testFiles: FILES });
  const common = { durationMs: 10, parsed, outputTail: output };
  if (kind === 'timeout') return { kind, exitCode: null, ...common };
  if (kind === 'no_report') return { kind, why: 'missing', exitCode, ...common };
  return { kind: 'report', exitCode, ...common };
}

const F2P = ['tests/test_m.py::test_a', 'tests/test_m.py::test_b'];

describe('classifyRun', () => {
  it('all fail->pass tests pass: good; one fails: bad, naming it', () => {
    expect(classifyRun(run(junit(PASS('test_a') + PASS('test_b')), 0), pytest, F2P, FILES)).toEqual({ outcome: 'good' });
    expect(classifyRun(run(junit(PASS('test_a') + FAIL('test_b')), 1), pytest, F2P, FILES)).toEqual({
      outcome: 'bad',
      failing: ['tests/test_m.py::test_b'],
      // what the search may follow alone, and how the failing one failed
      passing: ['tests/test_m.py::test_a'],
      kinds: { 'tests/test_m.py::test_b': 'AssertionError' },
    });
    expect(classifyRun(run(junit(FAIL('test_a', 'AttributeError') + FAIL('test_b')), 1), pytest, F2P, FILES)).toMatchObject({
      kinds: { 'tests/test_m.py::test_a': 'AttributeError', 'tests/test_m.py::test_b': 'AssertionError' },
    });
  });

  it('a test module that cannot be imported is a skip, never bad (pytest exits 1 as for a failure)', () => {
    expect(classifyRun(run(junit(COLLECT), 1), pytest, F2P, FILES)).toMatchObject({ outcome: 'skip', reason: 'import_error' });
  });

  it('a timeout, a missing report or an undeclared exit code is infrastructure: skip, never bad', () => {
    expect(classifyRun(run(null, 1, 'timeout'), pytest, F2P, FILES)).toMatchObject({ outcome: 'skip', reason: 'infra' });
    expect(classifyRun(run(null, 1, 'no_report'), pytest, F2P, FILES)).toMatchObject({ outcome: 'skip', reason: 'infra' });
    expect(classifyRun(run(junit(FAIL('test_a')), 3), pytest, F2P, FILES)).toMatchObject({ outcome: 'skip', reason: 'infra' });
  });

  it('a fail->pass test missing from the report, or skipped by the runner, is a skip, never a pass', () => {
    expect(classifyRun(run(junit(PASS('test_a')), 0), pytest, F2P, FILES)).toMatchObject({ outcome: 'skip', reason: 'not_collected' });
    expect(classifyRun(run(junit(PASS('test_a') + SKIP('test_b')), 0), pytest, F2P, FILES)).toMatchObject({ outcome: 'skip', reason: 'test_skipped' });
  });

  it('a test the parser saw printed ok without running (a never-awaited coroutine) is a skip that says so, never good', () => {
    const r = run(junit(PASS('test_a') + PASS('test_b')), 0);
    const notRun = { ...r, parsed: { ...r.parsed, tests: { ...r.parsed.tests, [F2P[1]!]: 'skip' as const }, notRun: { [F2P[1]!]: 'its coroutine was never awaited' } } };
    expect(classifyRun(notRun, pytest, F2P, FILES)).toEqual({
      outcome: 'skip',
      reason: 'test_skipped',
      detail: 'tests/test_m.py::test_b did not run: its coroutine was never awaited',
      passing: ['tests/test_m.py::test_a'],
    });
  });

  it('a real failure outweighs another test\'s skip: the behaviour is broken at this commit', () => {
    expect(classifyRun(run(junit(FAIL('test_a') + SKIP('test_b')), 1), pytest, F2P, FILES)).toMatchObject({ outcome: 'bad', failing: ['tests/test_m.py::test_a'] });
  });
});

const pr = (id: string, mergeSha: string, commits: string[] = [mergeSha]): PullRequest => ({
  id, number: Number(id), title: `PR ${id}`, body: '', author: 'a', mergedAt: '2024-01-01T00:00:00Z', mergeSha, baseSha: `${mergeSha}^`, style: commits.length > 1 ? 'merge' : 'squash', commits,
});
const CHANGES = [pr('1', 'm1'), pr('2', 'm2', ['b2a', 'b2b']), pr('3', 'm3')];
// The first-parent line: m1, then m2 (PR 2's merge), then m3.
const order = new Map([['m1', 0], ['m2', 1], ['m3', 2], ['direct', 3]]);
const found = (commit: string): BisectResult => ({ kind: 'found', commit, good: 'x', steps: [], cost: { containers: 1, runs: 3, seconds: 1 } });

describe('decideAttribution', () => {
  it('execution wins over blame, and the disagreement is kept', () => {
    expect(decideAttribution({ bisect: found('m2'), changes: CHANGES, blame: '1', reference: null, order })).toEqual({
      kind: 'attributed', change: '2', commit: 'm2', method: 'execution', execution: 'found', disagreements: [{ source: 'blame', change: '1' }],
    });
  });

  it('agreement is reported as such (execution+blame+reference)', () => {
    expect(decideAttribution({ bisect: found('m3'), changes: CHANGES, blame: '3', reference: '3', order })).toMatchObject({ change: '3', method: 'execution+blame+reference', disagreements: [] });
    expect(decideAttribution({ bisect: found('m3'), changes: CHANGES, blame: '1', reference: '3', order })).toMatchObject({ method: 'execution+reference', disagreements: [{ source: 'blame', change: '1' }] });
  });

  it('a bug born with the code (introduced) names the change that brought the code in, as execution', () => {
    const born: BisectResult = { kind: 'introduced', commit: 'm1', steps: [], cost: { containers: 1, runs: 3, seconds: 1 } };
    expect(decideAttribution({ bisect: born, changes: CHANGES, blame: '1', reference: null, order })).toMatchObject({ kind: 'attributed', change: '1', commit: 'm1', method: 'execution+blame', execution: 'introduced' });
  });

  it('an introduced commit does not overturn an older pick: below it the tests said nothing of that change (Django f80669d2f5)', () => {
    const born = (commit: string): BisectResult => ({ kind: 'introduced', commit, steps: [], cost: { containers: 1, runs: 3, seconds: 1 } });
    // Blame names #1 (m1); the tests fail another way below m3 and as at PR2's base from it: #1 stands, execution's #3 is kept as a disagreement.
    expect(decideAttribution({ bisect: born('m3'), changes: CHANGES, blame: '1', reference: null, order })).toEqual({
      kind: 'attributed', change: '1', commit: null, method: 'blame', execution: 'introduced', disagreements: [{ source: 'execution', change: '3' }],
    });
    // A reference below it stands the same way; a pick above it is contradicted (the tests already fail below it).
    expect(decideAttribution({ bisect: born('m2'), changes: CHANGES, blame: '3', reference: '1', order })).toMatchObject({ change: '1', commit: null, method: 'reference' });
    expect(decideAttribution({ bisect: born('m1'), changes: CHANGES, blame: '3', reference: null, order })).toMatchObject({ change: '1', commit: 'm1', method: 'execution', disagreements: [{ source: 'blame', change: '3' }] });
    // A found commit outweighs any pick, older or newer; so does an introduced one when nothing else names a change.
    expect(decideAttribution({ bisect: found('m3'), changes: CHANGES, blame: '1', reference: null, order })).toMatchObject({ change: '3', method: 'execution' });
    expect(decideAttribution({ bisect: born('m3'), changes: CHANGES, blame: null, reference: null, order })).toMatchObject({ change: '3', method: 'execution' });
  });

  it('executionOutweighs: a pick whose place on the first-parent line is unknown is outweighed', () => {
    expect(executionOutweighs({ kind: 'introduced', commit: 'm3' }, 'elsewhere', order)).toBe(true);
    expect(executionOutweighs({ kind: 'introduced', commit: 'm3' }, 'm2', order)).toBe(false);
    expect(executionOutweighs({ kind: 'found', commit: 'm3' }, 'm2', order)).toBe(true);
  });

  it('a first bad commit that belongs to no change (a direct commit) is unattributed, not pinned on a neighbour', () => {
    expect(decideAttribution({ bisect: found('direct'), changes: CHANGES, blame: '1', reference: null, order })).toMatchObject({ kind: 'unattributed', commit: 'direct' });
  });

  it('without a commit from execution the reference, then blame, stands, and says so', () => {
    const amb: BisectResult = { kind: 'ambiguous', commits: ['m2', 'm3'], good: 'm1', steps: [], cost: { containers: 1, runs: 4, seconds: 2 } };
    expect(decideAttribution({ bisect: amb, changes: CHANGES, blame: '1', reference: null, order })).toMatchObject({ kind: 'attributed', change: '1', commit: null, method: 'blame', execution: 'ambiguous' });
    expect(decideAttribution({ bisect: null, changes: CHANGES, blame: '1', reference: '1', order })).toMatchObject({ change: '1', method: 'blame+reference' });
    expect(decideAttribution({ bisect: null, changes: CHANGES, blame: null, reference: null, order })).toEqual({ kind: 'unknown', execution: null });
  });
});

describe('chainBisectInput', () => {
  it("bisects PR2's fail->pass set (not PR1's) from pr2_base, with PR2's files overlaid from pr2_head and blame's changes as merge commits", () => {
    const chain = validatedChain({ PR2_FAIL_TO_PASS: ['tests/test_timeparse.py::test_parse_uppercase_units'], FAIL_TO_PASS: ['tests/test_timeparse.py::test_parse_seconds'] });
    const changes = [pr('3', 'merge3'), pr('5', 'merge5')];
    const chainWithTwo = { ...chain, szz: { ...chain.szz, candidates: [{ change: '5', score: 3, lines: [] }, { change: '3', score: 1, lines: [] }, { change: '99', score: 1, lines: [] }] } };
    expect(chainBisectInput(chainWithTwo, changes)).toEqual({
      fix: { baseSha: chain.pr2_base, headSha: chain.pr2_head },
      failToPass: ['tests/test_timeparse.py::test_parse_uppercase_units'],
      testFiles: chain.anticipation_test_files,
      overlayFiles: chain.anticipation_overlay_files,
      candidates: ['merge5', 'merge3'],
      blame: '5',
      reference: null,
    });
    expect(chainBisectInput({ ...chain, szz: { ...chain.szz, pickedBy: 'reference' } }, changes).reference).toBe('3');
  });
});
