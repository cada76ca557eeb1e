/**
 * Real Docker: the django runner's run_state.sh in a chain container, over a GENERATED repository laid
 * out like Django's (test/helpers/django-like-repo.ts; Python 3.11 in the image).
 * Skipped only when the daemon is unreachable AND CI is unset; in CI a missing daemon fails loudly.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  assertDockerReachable,
  DEFAULT_BASE_ALIAS,
  connectDocker,
  ensureImage,
  isDockerReachable,
  openChainEnv,
  runnerExecCounts,
  type ChainEnv,
} from '../../../core/env/index.ts';
import { ownerLabels } from '../../../core/env/container/cleanup.ts';
import { djangoRunner } from '../../../core/env/runners/django/index.ts';
import { aggregateRuns } from '../../../stages/validate/aggregate-runs.ts';
import { CALC, makeDjangoLikeRepo, NEW } from '../../helpers/django-like-repo.ts';

const docker = connectDocker();
const reachable = await isDockerReachable(docker);
const skip = !reachable && !process.env['CI'];
if (skip) {
  console.warn('[django-docker.test] SKIPPED: Docker is not reachable and CI is unset (start dockerd to run these tests)');
}

const IMAGE = DEFAULT_BASE_ALIAS;

describe.skipIf(skip)('django runner (Docker, Django-style repository)', () => {
  let tmp: string;
  let revs: { A: string; B: string; C: string; D: string };
  let env: ChainEnv;
  const gitDir = (): string => path.join(tmp, 'repo', '.git');

  beforeAll(async () => {
    await assertDockerReachable(docker); // in CI: fails loudly here when Docker is missing
    await ensureImage(IMAGE, { docker });
    tmp = mkdtempSync(path.join(tmpdir(), 'foresight-django-docker-'));
    mkdirSync(path.join(tmp, 'repo'));
    revs = makeDjangoLikeRepo(path.join(tmp, 'repo'));
    env = await openChainEnv({ gitDir: gitDir(), image: IMAGE, runner: djangoRunner, docker });
  });

  afterAll(async () => {
    await env?.close();
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  });

  it('at A with the tests of B overlaid: the new test fails, a module needing B cannot be imported', async () => {
    const run = await env.runState({ checkout: revs.A, overlay: revs.B, testFiles: [CALC, NEW] });
    expect(run.kind, run.outputTail).toBe('report');
    expect(run.exitCode).toBe(1);
    expect(run.parsed).toEqual({
      tests: {
        'test_add_zero (calc.tests.AddTests)': 'pass',
        'test_skipped (calc.tests.AddTests)': 'skip',
        'test_known_bug (calc.tests.AddTests)': 'skip',
        'test_add (calc.tests.AddTests)': 'fail',
        'test_add_many (calc.tests.AddTests)': 'fail', // its subtests fail
      },
      collectionErrors: [NEW],
      failureKinds: { 'test_add (calc.tests.AddTests)': 'AssertionError', 'test_add_many (calc.tests.AddTests)': 'AssertionError' },
    });
    expect(run.outputTail).toContain("Testing against Django installed in '/tmp/testbed/django'");
    expect(run.outputTail).toContain('[foresight-django] label calc.tests tests/calc/tests.py');
    expect(run.outputTail).toContain('[foresight-django] import-error calc.test_new');
    expect(run.outputTail).toMatch(/test_add \(calc\.tests\.AddTests\.test_add\) \.\.\. addingFAIL/);
    expect(djangoRunner.testFileOf?.('test_add (calc.tests.AddTests)', [CALC, NEW])).toBe(CALC);
  });

  it('a repeat runs only the selected tests: a method label, and the whole file of a module that cannot be imported', async () => {
    const select = [
      { file: CALC, arg: djangoRunner.selectArg!('test_add (calc.tests.AddTests)', [CALC, NEW]) },
      { file: NEW, arg: null },
    ];
    expect(select[0]!.arg).toBe('calc.tests.AddTests.test_add');
    const run = await env.runState({ checkout: revs.A, overlay: revs.B, testFiles: [CALC, NEW], select });
    expect(run.kind, run.outputTail).toBe('report');
    expect(run.parsed).toEqual({
      tests: { 'test_add (calc.tests.AddTests)': 'fail' },
      collectionErrors: [NEW],
      failureKinds: { 'test_add (calc.tests.AddTests)': 'AssertionError' },
    });
    expect(run.outputTail).toContain('[foresight-django] label calc.tests.AddTests.test_add tests/calc/tests.py');
  });

  it('at B everything passes', async () => {
    const run = await env.runState({ checkout: revs.B, overlay: null, testFiles: [CALC, NEW] });
    expect(run.kind, run.outputTail).toBe('report');
    expect(run.exitCode).toBe(0);
    expect(run.parsed).toEqual({
      tests: {
        'test_add_zero (calc.tests.AddTests)': 'pass',
        'test_skipped (calc.tests.AddTests)': 'skip',
        'test_known_bug (calc.tests.AddTests)': 'skip',
        'test_add (calc.tests.AddTests)': 'pass',
        'test_add_many (calc.tests.AddTests)': 'pass',
        'test_sub (calc.test_new.SubTests)': 'pass',
      },
      collectionErrors: [],
    });
  });

  it('a test module that does not exist at the checkout is simply absent', async () => {
    const run = await env.runState({ checkout: revs.A, overlay: null, testFiles: [CALC, NEW] });
    expect(run.kind, run.outputTail).toBe('report');
    expect(run.parsed.collectionErrors).toEqual([]);
    expect(Object.keys(run.parsed.tests).sort()).toEqual([
      'test_add_zero (calc.tests.AddTests)',
      'test_known_bug (calc.tests.AddTests)',
      'test_skipped (calc.tests.AddTests)',
    ]);
    // ... and with none left, nothing runs: zero tests, exit 0.
    const none = await env.runState({ checkout: revs.A, overlay: revs.A, testFiles: [NEW, 'docs/index.txt'] });
    expect(none.kind, none.outputTail).toBe('report');
    expect(none.exitCode).toBe(0);
    expect(none.parsed).toEqual({ tests: {}, collectionErrors: [] });
  });

  it('modules raising ImportError or AttributeError at import are collection errors; the others still run', async () => {
    const files = ['tests/probe/test_broken.py', 'tests/probe/test_attr.py', 'tests/probe/deep/tests.py', CALC, 'tests/test_sqlite.py'];
    const run = await env.runState({ checkout: revs.C, overlay: null, testFiles: files });
    expect(run.kind, run.outputTail).toBe('report');
    expect(run.exitCode).toBe(1);
    expect(run.parsed).toEqual({
      tests: {
        'test_deep (probe.deep.tests.DeepTests)': 'pass',
        'test_add_zero (calc.tests.AddTests)': 'pass',
        'test_skipped (calc.tests.AddTests)': 'skip',
        'test_known_bug (calc.tests.AddTests)': 'skip',
        'test_add (calc.tests.AddTests)': 'pass',
        'test_add_many (calc.tests.AddTests)': 'pass',
      },
      collectionErrors: ['tests/probe/test_attr.py', 'tests/probe/test_broken.py'],
    });
    expect(run.outputTail).toContain('[foresight-django] ignored tests/test_sqlite.py: not a module of a test app under tests/');
  });

  it('an async test the runner never awaits printed ok but did not run: skip, not pass', async () => {
    const run = await env.runState({ checkout: revs.C, overlay: null, testFiles: ['tests/probe/test_async.py'] });
    expect(run.kind, run.outputTail).toBe('report');
    expect(run.exitCode, run.outputTail).toBe(0); // the runner itself calls it a success
    expect(run.parsed).toEqual({
      tests: { 'test_never_awaited (probe.test_async.AsyncTests)': 'skip', 'test_sync (probe.test_async.AsyncTests)': 'pass' },
      collectionErrors: [],
      notRun: { 'test_never_awaited (probe.test_async.AsyncTests)': "its coroutine was never awaited (this commit's test runner does not run async tests)" },
    });
  });

  it('gis_tests labels are left out unless the database is PostGIS (runtests.py would abort the whole run)', async () => {
    const files = ['tests/gis_tests/tests.py', 'tests/probe/deep/tests.py'];
    const run = await env.runState({ checkout: revs.C, overlay: null, testFiles: files });
    expect(run.kind, run.outputTail).toBe('report');
    expect(run.parsed).toEqual({ tests: { 'test_deep (probe.deep.tests.DeepTests)': 'pass' }, collectionErrors: [] });
    expect(run.outputTail).toContain('ignored tests/gis_tests/tests.py: gis_tests need a GIS database backend');
    const gis = await openChainEnv({ gitDir: gitDir(), image: IMAGE, runner: djangoRunner, docker, env: { FORESIGHT_DB: 'postgis' } });
    try {
      const withGis = await gis.runState({ checkout: revs.C, overlay: null, testFiles: files });
      expect(withGis.kind, withGis.outputTail).toBe('report');
      expect(withGis.parsed.tests).toEqual({ 'test_geometry (gis_tests.tests.GisTests)': 'pass', 'test_deep (probe.deep.tests.DeepTests)': 'pass' });
    } finally {
      await gis.close();
    }
  });

  it('runs as uid 65534, imports the checkout, in a cleaned tree', async () => {
    for (let i = 0; i < 2; i++) {
      const run = await env.runState({ checkout: revs.C, overlay: null, testFiles: ['tests/probe/test_env.py'] });
      expect(run.kind, run.outputTail).toBe('report');
      expect(run.parsed.tests, run.outputTail).toEqual({
        'test_uid (probe.test_env.EnvTests)': 'pass',
        'test_checkout_is_imported (probe.test_env.EnvTests)': 'pass',
        'test_clean_tree (probe.test_env.EnvTests)': 'pass',
      });
    }
  });

  it('passes: one runner start runs a selection several times on one database setup, a run per pass; a test changed by an earlier pass reads as flaky', async () => {
    const testFiles = ['tests/probe/test_env.py', 'tests/probe/test_models.py', CALC];
    const select = [{ file: CALC, arg: 'calc.tests.AddTests.test_add' }, { file: 'tests/probe/test_env.py', arg: null }, { file: 'tests/probe/test_models.py', arg: null }];
    const before = { ...runnerExecCounts };
    const runs = await env.runPasses!({ checkout: revs.C, overlay: null, testFiles, select }, 3);
    expect({ starts: runnerExecCounts.starts - before.starts, runs: runnerExecCounts.runs - before.runs }).toEqual({ starts: 1, runs: 3 });
    expect(runs.map((r) => [r.kind, r.exitCode]), runs[2]?.outputTail).toEqual([['report', 0], ['report', 1], ['report', 1]]);
    // Each pass starts from the app registry the suite found: a model a test registered is gone again.
    const ok = { 'test_add (calc.tests.AddTests)': 'pass', 'test_uid (probe.test_env.EnvTests)': 'pass', 'test_checkout_is_imported (probe.test_env.EnvTests)': 'pass', 'test_declares_model (probe.test_models.ModelTests)': 'pass' };
    // No git clean between passes: pass 1's leftover.txt is still there in passes 2 and 3.
    const clean = 'test_clean_tree (probe.test_env.EnvTests)';
    expect(runs.map((r) => r.parsed)).toEqual([
      { tests: { ...ok, [clean]: 'pass' }, collectionErrors: [] },
      { tests: { ...ok, [clean]: 'fail' }, collectionErrors: [], failureKinds: { [clean]: 'AssertionError' } },
      { tests: { ...ok, [clean]: 'fail' }, collectionErrors: [], failureKinds: { [clean]: 'AssertionError' } },
    ]);
    // The databases are set up once, before the first pass; each report has its own summary.
    for (const r of runs) {
      expect(r.outputTail.match(/Creating test database/g)).toHaveLength(1);
      expect(r.outputTail.match(/^Ran \d+ tests? in /gm)).toHaveLength(1);
    }
    const first = await env.runState({ checkout: revs.C, overlay: null, testFiles, select });
    const folded = aggregateRuns({ name: 'S2', checkout: revs.C, overlay: null, testFiles, overlayFiles: [] }, [first, ...runs.slice(0, 2)], djangoRunner.exitCodes);
    expect(folded.outcome.kind).toBe('ran');
    expect(folded.tests).toEqual({ ...ok, [clean]: 'flaky' });
    // A runner that stops before its first pass (broken settings): one report, and the pass never started is no evidence either.
    const cut = await env.runPasses!({ checkout: revs.D, overlay: null, testFiles: [CALC] }, 2);
    expect(cut.map((r) => r.kind)).toEqual(['report', 'no_report']);
    expect(cut[0]!.parsed.problem).toMatch(/crashed before running any test/);
  });

  it('a runner crash before any test (broken settings) has no tests and a problem', async () => {
    const run = await env.runState({ checkout: revs.D, overlay: null, testFiles: [CALC] });
    expect(run.kind, run.outputTail).toBe('report'); // a log exists: the problem says it is no evidence
    expect(run.exitCode).toBe(1);
    expect(run.parsed).toEqual({
      tests: {},
      collectionErrors: [],
      problem: "Django's test runner crashed before running any test: RuntimeError: settings are broken",
    });
  });

  it('an unknown commit is a failed run with no report', async () => {
    const run = await env.runState({ checkout: 'f'.repeat(40), overlay: null, testFiles: [CALC] });
    expect(run.kind).not.toBe('report');
    expect(run.exitCode).toBe(91);
    expect(run.outputTail).toMatch(/is not in \/src/);
  });

  it('runs the interpreter named by FORESIGHT_PYTHON', async () => {
    // openChainEnv sets no such variable (an env image does): run the script by hand with one.
    const c = await docker.createContainer({
      Image: IMAGE,
      Cmd: ['sh', '/foresight/django/run_state.sh', revs.B, '-', '/tmp/log', CALC],
      User: '65534:65534',
      Env: ['HOME=/tmp', 'FORESIGHT_PYTHON=/nonexistent/python'],
      WorkingDir: '/tmp',
      Labels: ownerLabels(),
      HostConfig: { NetworkMode: 'none', Binds: [`${gitDir()}:/src:ro`, `${djangoRunner.dir}:/foresight:ro`] },
    });
    try {
      await c.start();
      const { StatusCode } = (await c.wait()) as { StatusCode: number };
      const logs = (await c.logs({ stdout: true, stderr: true })).toString('utf8');
      expect(StatusCode, logs).toBe(127);
      expect(logs).toMatch(/\/nonexistent\/python: not found/);
      expect(logs).toContain('[foresight-django] exit 127');
    } finally {
      await c.remove({ force: true });
    }
  });
});
