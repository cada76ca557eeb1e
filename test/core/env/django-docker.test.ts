/**
 * Real Docker: the django runner's run_state.sh in a chain container, over a GENERATED repository laid
 * out like Django's (a `django/` package, `tests/runtests.py`, `tests/test_sqlite.py`, test apps under
 * `tests/`). The base image has no Django: `tests/runtests.py` here is a small stand-in with Django's
 * command line whose `DiscoverRunner` loads labels with unittest's loader and runs them with unittest's
 * TextTestRunner, as Django's does, so the `-v 2` output is the same format (Python 3.11 in the image).
 * Skipped only when the daemon is unreachable AND CI is unset; in CI a missing daemon fails loudly.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
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

const docker = connectDocker();
const reachable = await isDockerReachable(docker);
const skip = !reachable && !process.env['CI'];
if (skip) {
  console.warn('[django-docker.test] SKIPPED: Docker is not reachable and CI is unset (start dockerd to run these tests)');
}

const IMAGE = DEFAULT_BASE_ALIAS;

function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', '-c', 'commit.gpgsign=false', ...args], {
    cwd,
    encoding: 'utf8',
  }).trim();
}

function write(dir: string, file: string, lines: string[]): void {
  mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
  writeFileSync(path.join(dir, file), `${lines.join('\n')}\n`);
}

/** A stand-in for django/test/runner.py: Django's DiscoverRunner reduced to what labels need. */
const RUNNER_PY = [
  'import unittest',
  '',
  '',
  'def iter_test_cases(suite):',
  '    for test in suite:',
  '        if isinstance(test, unittest.TestSuite):',
  '            yield from iter_test_cases(test)',
  '        else:',
  '            yield test',
  '',
  '',
  'class DiscoverRunner:',
  '    test_loader = unittest.defaultTestLoader',
  '',
  '    def __init__(self, verbosity=1, interactive=True, parallel=0, **kwargs):',
  '        self.verbosity = verbosity',
  '        self.parallel = parallel',
  '',
  '    def build_suite(self, test_labels):',
  '        tests = []',
  '        for label in test_labels:',
  '            tests.extend(iter_test_cases(self.test_loader.loadTestsFromName(label)))',
  '        # Like Django: the failures detected at load time first.',
  '        tests.sort(key=lambda t: not isinstance(t, unittest.loader._FailedTest))',
  '        print("Found %d test(s)." % len(tests))',
  '        return unittest.TestSuite(tests)',
  '',
  '    def run_suite(self, suite):',
  '        return unittest.TextTestRunner(verbosity=self.verbosity).run(suite)',
  '',
  '    def run_tests(self, test_labels):',
  '        suite = self.build_suite(test_labels)',
  '        print("Creating test database for alias \'default\'...")',
  '        print("System check identified no issues (0 silenced).")',
  '        result = self.run_suite(suite)',
  '        return len(result.failures) + len(result.errors) + len(result.unexpectedSuccesses)',
];

/** A stand-in for tests/runtests.py: Django's command line and its first lines of output. */
const RUNTESTS_PY = [
  '#!/usr/bin/env python',
  'import argparse',
  'import importlib',
  'import os',
  'import sys',
  '',
  'import django',
  'from django.test.runner import DiscoverRunner',
  '',
  'parser = argparse.ArgumentParser()',
  'parser.add_argument("modules", nargs="*")',
  'parser.add_argument("-v", "--verbosity", type=int, default=1, choices=[0, 1, 2, 3])',
  'parser.add_argument("--noinput", action="store_false", dest="interactive")',
  'parser.add_argument("--parallel", default=0)',
  'parser.add_argument("--settings")',
  'options = parser.parse_args()',
  'if options.settings:',
  '    os.environ["DJANGO_SETTINGS_MODULE"] = options.settings',
  'else:',
  '    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "test_sqlite")',
  'print("Testing against Django installed in \'%s\'" % os.path.dirname(django.__file__))',
  '# django.setup(): broken settings crash the runner here, before any test.',
  'importlib.import_module(os.environ["DJANGO_SETTINGS_MODULE"])',
  'for app in sorted({label.split(".")[0] for label in options.modules}):',
  '    if options.verbosity >= 2:',
  '        print("Importing application %s" % app)',
  'runner = DiscoverRunner(verbosity=options.verbosity, interactive=options.interactive, parallel=int(options.parallel))',
  'failures = runner.run_tests(options.modules)',
  'sys.exit(bool(failures))',
];

const CALC = 'tests/calc/tests.py';
const NEW = 'tests/calc/test_new.py';

/**
 * A: buggy add(); B: the fix, a new test in tests.py and a new module test_new.py that needs B's code;
 * C: probes (environment, a module raising ImportError, one raising AttributeError at import, nested
 * test packages); D: a settings module that raises (the runner crashes before any test).
 */
function makeRepo(dir: string): { A: string; B: string; C: string; D: string } {
  git(dir, 'init', '-q', '-b', 'main');
  write(dir, 'django/__init__.py', ['VERSION = (5, 1, 0, "final", 0)']);
  write(dir, 'django/test/__init__.py', ['from unittest import TestCase as SimpleTestCase  # noqa: F401']);
  write(dir, 'django/test/runner.py', RUNNER_PY);
  // Django's app registry, reduced to the models dicts a model class registers itself in.
  write(dir, 'django/apps/__init__.py', ['import collections', '', '', 'class Apps:', '    def __init__(self):', '        self.all_models = collections.defaultdict(dict)', '', '    def clear_cache(self):', '        pass', '', '', 'apps = Apps()']);
  write(dir, 'django/utils/__init__.py', []);
  write(dir, 'django/utils/calc.py', ['def add(a, b):', '    return a - b']);
  write(dir, 'tests/runtests.py', RUNTESTS_PY);
  write(dir, 'tests/test_sqlite.py', ['DATABASES = {"default": {"ENGINE": "django.db.backends.sqlite3"}}']);
  write(dir, 'tests/calc/__init__.py', []);
  const calcTests = [
    'import unittest',
    '',
    'from django.test import SimpleTestCase',
    'from django.utils.calc import add',
    '',
    '',
    'class AddTests(SimpleTestCase):',
    '    def test_add_zero(self):',
    '        """Adding zeros."""',
    '        self.assertEqual(add(0, 0), 0)',
    '',
    '    @unittest.skip("not on this backend")',
    '    def test_skipped(self):',
    '        pass',
    '',
    '    @unittest.expectedFailure',
    '    def test_known_bug(self):',
    '        self.assertEqual(1, 2)',
  ];
  write(dir, CALC, calcTests);
  git(dir, 'add', '-A');
  git(dir, 'commit', '-qm', 'A');
  const A = git(dir, 'rev-parse', 'HEAD');

  write(dir, 'django/utils/calc.py', ['def add(a, b):', '    return a + b', '', '', 'def sub(a, b):', '    return a - b']);
  write(dir, CALC, [
    ...calcTests,
    '',
    '    def test_add(self):',
    '        print("adding", end="")',
    '        self.assertEqual(add(2, 3), 5)',
    '',
    '    def test_add_many(self):',
    '        for a, b, total in [(1, 1, 2), (2, 2, 4)]:',
    '            with self.subTest(a=a, b=b):',
    '                self.assertEqual(add(a, b), total)',
  ]);
  write(dir, NEW, [
    'from django.test import SimpleTestCase',
    'from django.utils.calc import sub',
    '',
    '',
    'class SubTests(SimpleTestCase):',
    '    def test_sub(self):',
    '        self.assertEqual(sub(3, 2), 1)',
  ]);
  git(dir, 'add', '-A');
  git(dir, 'commit', '-qm', 'B');
  const B = git(dir, 'rev-parse', 'HEAD');

  write(dir, 'tests/probe/__init__.py', []);
  write(dir, 'tests/probe/test_env.py', [
    'import os',
    'import sys',
    '',
    'from django.test import SimpleTestCase',
    '',
    '',
    'class EnvTests(SimpleTestCase):',
    '    def test_uid(self):',
    '        self.assertEqual((os.getuid(), os.getgid()), (65534, 65534))',
    '',
    '    def test_checkout_is_imported(self):',
    '        import django',
    '        self.assertEqual(django.__file__, "/tmp/testbed/django/__init__.py")',
    '        self.assertEqual(os.getcwd(), "/tmp/testbed/tests")',
    '        self.assertEqual(sys.path[0], "/tmp/testbed/tests")',
    '',
    '    def test_clean_tree(self):',
    '        # git clean -fdx between runs: a file left by a previous run is gone',
    '        self.assertFalse(os.path.exists("leftover.txt"))',
    '        open("leftover.txt", "w").close()',
  ]);
  write(dir, 'tests/probe/test_models.py', [
    'from django.apps import apps',
    'from django.test import SimpleTestCase',
    '',
    '',
    'class ModelTests(SimpleTestCase):',
    '    def test_declares_model(self):',
    '        # Like a model class declared in a test body: registered process-wide; Django refuses a second one.',
    '        self.assertNotIn("inline", apps.all_models["probe"])',
    '        apps.all_models["probe"]["inline"] = object',
  ]);
  write(dir, 'tests/probe/test_broken.py', ['import module_that_does_not_exist  # noqa: F401']);
  write(dir, 'tests/probe/test_attr.py', [
    'import django.utils.calc',
    'from django.test import SimpleTestCase',
    '',
    '',
    'class AttrTests(SimpleTestCase):',
    '    helper = django.utils.calc.mul  # AttributeError while importing the module',
    '',
    '    def test_never(self):',
    '        pass',
  ]);
  write(dir, 'tests/probe/deep/__init__.py', []);
  write(dir, 'tests/probe/deep/tests.py', [
    'from django.test import SimpleTestCase',
    '',
    '',
    'class DeepTests(SimpleTestCase):',
    '    def test_deep(self):',
    '        pass',
  ]);
  write(dir, 'tests/gis_tests/__init__.py', []);
  write(dir, 'tests/gis_tests/tests.py', [
    'from django.test import SimpleTestCase',
    '',
    '',
    'class GisTests(SimpleTestCase):',
    '    def test_geometry(self):',
    '        pass',
  ]);
  git(dir, 'add', '-A');
  git(dir, 'commit', '-qm', 'C');
  const C = git(dir, 'rev-parse', 'HEAD');

  write(dir, 'tests/test_sqlite.py', ['raise RuntimeError("settings are broken")']);
  git(dir, 'commit', '-qam', 'D');
  const D = git(dir, 'rev-parse', 'HEAD');
  // The container reads the git dir as uid 65534.
  execFileSync('chmod', ['-R', 'a+rX', path.join(dir, '.git')]);
  return { A, B, C, D };
}

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
    revs = makeRepo(path.join(tmp, 'repo'));
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
    expect(run.parsed).toEqual({ tests: { 'test_add (calc.tests.AddTests)': 'fail' }, collectionErrors: [NEW] });
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
      { tests: { ...ok, [clean]: 'fail' }, collectionErrors: [] },
      { tests: { ...ok, [clean]: 'fail' }, collectionErrors: [] },
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
