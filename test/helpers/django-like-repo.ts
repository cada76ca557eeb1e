/**
 * A generated repository laid out like Django's (a `django/` package, `tests/runtests.py`,
 * `tests/test_sqlite.py`, test apps under `tests/`) for the django runner's Docker tests. The base image
 * has no Django: `tests/runtests.py` is a small stand-in with Django's command line whose `DiscoverRunner`
 * loads labels with unittest's loader and runs them with unittest's TextTestRunner, as Django's does, so
 * the `-v 2` output is the same format.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';

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
  '    # django.setup() imports every installed app\'s models: a model that does not fit crashes the runner here.',
  '    try:',
  '        importlib.import_module(app + ".models")',
  '    except ModuleNotFoundError as e:',
  '        if e.name != app + ".models":',
  '            raise',
  'runner = DiscoverRunner(verbosity=options.verbosity, interactive=options.interactive, parallel=int(options.parallel))',
  'failures = runner.run_tests(options.modules)',
  'sys.exit(bool(failures))',
];

export const CALC = 'tests/calc/tests.py';
export const NEW = 'tests/calc/test_new.py';

/**
 * The files every Django-like checkout needs (path -> text): the `django` package's stand-ins (test case,
 * runner, app registry, `django.utils`), `tests/runtests.py` and the settings `tests/test_sqlite.py`.
 */
export function djangoScaffold(): Record<string, string> {
  const text = (lines: string[]): string => `${lines.join('\n')}\n`;
  return {
    'django/__init__.py': text(['VERSION = (5, 1, 0, "final", 0)']),
    'django/test/__init__.py': text(['from unittest import TestCase as SimpleTestCase  # noqa: F401']),
    'django/test/runner.py': text(RUNNER_PY),
    // Django's app registry, reduced to the models dicts a model class registers itself in.
    'django/apps/__init__.py': text(['import collections', '', '', 'class Apps:', '    def __init__(self):', '        self.all_models = collections.defaultdict(dict)', '', '    def clear_cache(self):', '        pass', '', '', 'apps = Apps()']),
    'django/utils/__init__.py': text([]),
    'tests/runtests.py': text(RUNTESTS_PY),
    'tests/test_sqlite.py': text(['DATABASES = {"default": {"ENGINE": "django.db.backends.sqlite3"}}']),
  };
}

function mkdirFor(dir: string, file: string): string {
  const at = path.dirname(path.join(dir, file));
  mkdirSync(at, { recursive: true });
  return at;
}

/**
 * A: buggy add(); B: the fix, a new test in tests.py and a new module test_new.py that needs B's code;
 * C: probes (environment, a module raising ImportError, one raising AttributeError at import, nested
 * test packages, an async test the runner never awaits); D: a settings module that raises (the runner crashes before any test).
 */
export function makeDjangoLikeRepo(dir: string): { A: string; B: string; C: string; D: string } {
  git(dir, 'init', '-q', '-b', 'main');
  for (const [file, text] of Object.entries(djangoScaffold())) writeFileSync(path.join(mkdirFor(dir, file), path.basename(file)), text);
  write(dir, 'django/utils/calc.py', ['def add(a, b):', '    return a - b']);
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
  // Django < 3.1 called async tests without awaiting them, as unittest's runner does here.
  write(dir, 'tests/probe/test_async.py', [
    'from django.test import SimpleTestCase',
    '',
    '',
    'class AsyncTests(SimpleTestCase):',
    '    async def test_never_awaited(self):',
    '        self.fail("a runner that awaits it fails here")',
    '',
    '    def test_sync(self):',
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
