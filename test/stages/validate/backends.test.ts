/**
 * The database fallback rule (stages/validate/backends.ts): a chain moves to the recipe's next backend
 * only when its deciding tests were skipped on this one; every other outcome is the answer, and the
 * result kept is the backend it ended on. The states are folded by the real computeSets.
 */
import { describe, expect, it } from 'vitest';
import { computeSets } from '../../../stages/validate/compute-sets.ts';
import { FALLBACK_REASONS, validateOnBackends } from '../../../stages/validate/backends.ts';
import type { Outcome, StateName, StateResult } from '../../../core/foundation/model/validated.ts';

type States = Record<StateName, StateResult>;
const state = (name: StateName, tests: Record<string, Outcome>): StateResult => ({ name, checkout: 'c', overlay: null, testFiles: [], outcome: { kind: 'ran' }, runs: 3, tests, collectionErrors: [], durationMs: 1 });
const chain = (s: Record<StateName, Record<string, Outcome>>): States =>
  Object.fromEntries(Object.entries(s).map(([n, t]) => [n, state(n as StateName, t)])) as States;

/** What a PostgreSQL-only chain gives on each backend: everything skipped elsewhere, a healthy chain on postgresql. */
const ON: Record<string, States> = {
  sqlite: chain({
    S1: { 't.py::new': 'skip', 't.py::old': 'skip' }, S2: { 't.py::new': 'skip', 't.py::old': 'skip' },
    S3: { 'e.py::edge': 'skip' }, S4: { 'e.py::edge': 'skip' }, S5: { 'e.py::edge': 'skip' },
  }),
  mysql: chain({
    S1: { 't.py::new': 'fail', 't.py::old': 'pass' }, S2: { 't.py::new': 'pass', 't.py::old': 'pass' },
    S3: { 'e.py::edge': 'skip' }, S4: { 'e.py::edge': 'skip' }, S5: { 'e.py::edge': 'skip' },
  }),
  postgresql: chain({
    S1: { 't.py::new': 'fail', 't.py::old': 'pass' }, S2: { 't.py::new': 'pass', 't.py::old': 'pass' },
    S3: { 'e.py::edge': 'fail' }, S4: { 'e.py::edge': 'fail' }, S5: { 'e.py::edge': 'pass' },
  }),
  // A chain whose fix does not show: no flip, nothing skipped.
  broken: chain({
    S1: { 't.py::new': 'pass', 't.py::old': 'pass' }, S2: { 't.py::new': 'pass', 't.py::old': 'pass' },
    S3: { 'e.py::edge': 'pass' }, S4: { 'e.py::edge': 'pass' }, S5: { 'e.py::edge': 'pass' },
  }),
};

async function validate(backends: [string, ...string[]]) {
  const ran: string[] = [];
  const out = await validateOnBackends(backends, async (b) => {
    ran.push(b);
    return computeSets(ON[b]!);
  });
  return { ...out, ran };
}

describe('validateOnBackends: the fallback rule', () => {
  it('skipped_on_sqlite_falls_back_to_postgresql: the row keeps postgresql and its sets', async () => {
    const r = await validate(['sqlite', 'postgresql']);
    expect(r.ran).toEqual(['sqlite', 'postgresql']);
    expect(r.backend).toBe('postgresql');
    expect(r.left).toEqual([{ backend: 'sqlite', reason: 'pr1_tests_skipped' }]);
    expect(r.result).toMatchObject({ exclusion: null, FAIL_TO_PASS: ['t.py::new'], ANTICIPATION_FAIL_TO_PASS: ['e.py::edge'] });
  });

  it('pr2_tests_skipped moves on too, through every backend that skips', async () => {
    const r = await validate(['sqlite', 'mysql', 'postgresql']);
    expect(r.ran).toEqual(['sqlite', 'mysql', 'postgresql']);
    expect(r.left.map((l) => l.reason)).toEqual(['pr1_tests_skipped', 'pr2_tests_skipped']);
    expect(r.backend).toBe('postgresql');
  });

  it('a_result_on_the_first_backend_is_final: no service is started for a chain that ran', async () => {
    const r = await validate(['postgresql', 'sqlite']);
    expect(r.ran).toEqual(['postgresql']);
    expect(r.backend).toBe('postgresql');
  });

  it('another_exclusion_never_moves_on: only skipped tests say the backend could not show the fix', async () => {
    const r = await validate(['broken', 'postgresql']);
    expect(r.ran).toEqual(['broken']);
    expect(r.result.exclusion?.reason).toBe('no_pr1_failure');
    expect(FALLBACK_REASONS.has('no_pr1_failure')).toBe(false);
  });

  it('every_backend_skips: the last one tried stands, still excluded as skipped', async () => {
    const r = await validate(['sqlite', 'mysql']);
    expect(r.ran).toEqual(['sqlite', 'mysql']);
    expect(r.backend).toBe('mysql');
    expect(r.result.exclusion?.reason).toBe('pr2_tests_skipped');
  });

  it('sqlite_alone (the default): one run, the sqlite exclusion stands', async () => {
    const r = await validate(['sqlite']);
    expect(r.ran).toEqual(['sqlite']);
    expect(r.result.exclusion?.reason).toBe('pr1_tests_skipped');
  });
});

describe('validateOnBackends: a fallback backend the environment cannot run', () => {
  const noDriver = (reason: 'env_failed_pr1' | 'env_failed_pr2') => ({ exclusion: { reason } });

  it('env_failed on the fallback keeps the previous backend\'s evidence-based exclusion', async () => {
    const ran: string[] = [];
    const r = await validateOnBackends(['sqlite', 'postgresql', 'mysql'], async (b) => {
      ran.push(b);
      return b === 'mysql' ? noDriver('env_failed_pr1') : { exclusion: { reason: 'pr2_tests_skipped' as const } };
    });
    expect(ran).toEqual(['sqlite', 'postgresql', 'mysql']);
    expect(r.backend).toBe('postgresql');
    expect(r.result.exclusion?.reason).toBe('pr2_tests_skipped');
    expect(r.left).toEqual([{ backend: 'sqlite', reason: 'pr2_tests_skipped' }]);
    expect(r.failedAfter).toEqual({ backend: 'mysql', reason: 'env_failed_pr1' });
  });

  it('env_failed on the first backend is the answer: there is no evidence to keep', async () => {
    const r = await validateOnBackends(['sqlite', 'postgresql'], async () => noDriver('env_failed_pr2'));
    expect(r.backend).toBe('sqlite');
    expect(r.result.exclusion?.reason).toBe('env_failed_pr2');
    expect(r.failedAfter).toBeUndefined();
  });
});
