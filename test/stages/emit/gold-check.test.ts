import { describe, expect, it } from 'vitest';
import type { GradeResult } from '../../../core/env/index.ts';
import { goldProblem } from '../../../stages/emit/gold-check.ts';

const graded = (over: Partial<Extract<GradeResult, { kind: 'graded' }>>): GradeResult =>
  ({
    kind: 'graded',
    x: { kind: 'scored', value: 1, passed: 1, total: 1 },
    y: { kind: 'scored', value: 0, passed: 0, total: 1 },
    gap: 1,
    reset: [],
    f2p: { 't::new': 'pass' },
    p2p: { 't::old': 'pass' },
    anti: { 't::edge': 'fail' },
    p2pRegressions: [],
    ...over,
  }) as GradeResult;

describe('the gold self-check gate', () => {
  it('passes a row whose gold patch scores X = 100%, Y = 0%, no regression', () => {
    expect(goldProblem(graded({}))).toBeNull();
  });

  it('a FAIL_TO_PASS test the gold patch does not pass keeps the row out of test, naming it', () => {
    const p = goldProblem(graded({ x: { kind: 'scored', value: 0.5, passed: 1, total: 2 }, f2p: { 't::new': 'pass', 't::other': 'fail' } }));
    expect(p).toEqual({ reason: 'gold_check_failed', detail: 'FAIL_TO_PASS not passing: t::other' });
  });

  it('an anticipation test PR1 alone already passes is not held out', () => {
    expect(goldProblem(graded({ y: { kind: 'scored', value: 1, passed: 1, total: 1 }, anti: { 't::edge': 'pass' } }))?.detail).toContain('t::edge');
  });

  it('a PASS_TO_PASS regression fails the check', () => {
    expect(goldProblem(graded({ p2pRegressions: ['t::old'] }))?.detail).toBe('PASS_TO_PASS regressed: t::old');
  });

  it('a run that is no evidence fails the check: a row nobody can grade is not a test row', () => {
    expect(goldProblem(graded({ x: { kind: 'infra', reason: 'timeout', detail: 'timed out after 600s' } }))?.detail).toContain('X run no evidence: timed out');
  });

  it('a gold patch that does not apply fails the check with git\'s message', () => {
    const g = { kind: 'patch_failed', detail: 'error: patch failed: a.py:3\nmore', x: { kind: 'scored', value: 0, passed: 0, total: 1 }, y: { kind: 'scored', value: 0, passed: 0, total: 1 }, gap: 0 } as unknown as GradeResult;
    expect(goldProblem(g)?.detail).toBe("PR1's patch does not apply in the eval image: error: patch failed: a.py:3");
  });
});
