import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { djangoRunner } from '../../../core/env/runners/django/index.ts';
import {
  djangoLabel,
  djangoTestFile,
  isDjangoLog,
  parseDesc,
  parseDjangoLog,
  splitPasses,
} from '../../../core/env/runners/django/parse-django.ts';
import { getRunner, runners } from '../../../core/env/runners/registry.ts';

// Fixtures: REAL Django (main, July 2024) run through the REAL run_state.sh on the host, with the probe
// apps in fixtures/django/probe (regenerate with fixtures/django/regen.sh).
const fixture = (name: string): string => readFileSync(new URL(`./fixtures/django/${name}`, import.meta.url), 'utf8');

const FILES = [
  'tests/fs_probe/tests.py',
  'tests/fs_probe/test_broken.py',
  'tests/fs_probe/test_attr.py',
  'tests/fs_probe/test_syntax.py',
  'tests/fs_probe/test_module_fixture.py',
  'tests/fs_probe/subpkg/test_deep.py',
  'tests/fs_probe/subpkg/tests.py',
  'tests/fs_probe/not_there.py',
  'tests/model_inheritance_regress/tests.py',
  'tests/utils_tests/test_hashable.py',
  'tests/backends/mysql/test_operations.py',
  'tests/test_runner_apps/failures/tests_failures.py',
  'tests/test_runner_apps/buffer/tests_buffer.py',
  'docs/index.txt',
];

const P = 'fs_probe.tests';
const BASICS = (cls: string): Record<string, string> => ({
  [`test_pass (${P}.${cls})`]: 'pass',
  [`test_fail (${P}.${cls})`]: 'fail',
  [`test_error (${P}.${cls})`]: 'error',
  [`test_skip (${P}.${cls})`]: 'skip',
  [`test_expected_failure (${P}.${cls})`]: 'skip',
  [`test_unexpected_success (${P}.${cls})`]: 'fail',
  [`test_naïve_unicode_name (${P}.${cls})`]: 'pass',
});
const PROBE: Record<string, string> = {
  ...BASICS('Basics'),
  ...BASICS('Inherited'), // a subclass reruns every inherited test under its own name
  [`test_added (${P}.AddedLater)`]: 'pass', // overlaid from P2
  [`test_subtests_fail (${P}.SubTests)`]: 'fail',
  [`test_subtests_pass (${P}.SubTests)`]: 'pass',
  [`test_subtest_error (${P}.SubTests)`]: 'error',
  [`test_subtest_skip (${P}.SubTests)`]: 'skip',
  [`test_subtests_fail_and_error (${P}.SubTests)`]: 'fail',
  [`test_multiline_doc (${P}.Docs)`]: 'pass',
  [`test_doc_fail (${P}.Docs)`]: 'fail', // its docstring ends in "ok"
  [`test_doc_subtests (${P}.Docs)`]: 'fail',
  [`test_prints_lines (${P}.Output)`]: 'pass',
  [`test_prints_ok_lookalike_then_fails (${P}.Output)`]: 'fail', // printed "something ... ok", then FAIL
  [`test_prints_no_newline (${P}.Output)`]: 'pass', // "no newlineok"
  [`test_prints_header_lookalike (${P}.Output)`]: 'pass', // printed a fake "test_other (...) ... ok" line
  [`test_warns (${P}.Output)`]: 'pass', // a warning printed between the header and the status
  [`test_stderr_fail (${P}.Output)`]: 'fail', // "to stderrFAIL"
  [`test_a (${P}.SkippedClass)`]: 'skip',
  [`test_db (${P}.DatabaseTests)`]: 'pass',
  [`test_skip_inside (${P}.DatabaseTests)`]: 'skip',
  [`test_never_runs (${P}.SetUpClassError)`]: 'error', // never printed: setUpClass failed
  [`test_never_runs_2 (${P}.SetUpClassError)`]: 'error',
  [`test_never_runs_either (${P}.SetUpTestDataError)`]: 'error', // setUpTestData failed
  [`test_runs (${P}.TearDownClassError)`]: 'error', // passed, but its class's tearDownClass failed
  'test_in_module (fs_probe.test_module_fixture.InModule)': 'error', // setUpModule failed
  'test_deep (fs_probe.subpkg.test_deep.Deep)': 'pass',
  'test_count_equal (utils_tests.test_hashable.TestHashable)': 'pass',
  'test_equal (utils_tests.test_hashable.TestHashable)': 'pass',
  'test_unhashable (utils_tests.test_hashable.TestHashable)': 'pass',
  'test_sql_flush (backends.mysql.test_operations.MySQLOperationsTests)': 'skip', // MySQL only
  'test_sql_flush_sequences (backends.mysql.test_operations.MySQLOperationsTests)': 'skip',
  'test_sample (test_runner_apps.failures.tests_failures.ErrorTestCase)': 'error',
  'test_sample (test_runner_apps.failures.tests_failures.ExpectedFailureTestCase)': 'skip',
  'test_sample (test_runner_apps.failures.tests_failures.FailureTestCase)': 'fail',
  'test_sample (test_runner_apps.failures.tests_failures.UnexpectedSuccessTestCase)': 'fail',
  'test_fail (test_runner_apps.buffer.tests_buffer.WriteToStdoutStderrTestCase)': 'fail',
  'test_pass (test_runner_apps.buffer.tests_buffer.WriteToStdoutStderrTestCase)': 'pass',
};
const MIR = 'model_inheritance_regress.tests.ModelInheritanceTest';
const BROKEN = [
  'tests/fs_probe/subpkg/tests.py', // unittest calls it just "tests"
  'tests/fs_probe/test_attr.py', // AttributeError at import: the wrapper makes it a failed import
  'tests/fs_probe/test_broken.py', // ImportError
  'tests/fs_probe/test_syntax.py', // SyntaxError: would crash plain runtests.py
];

/** `[foresight-django] collected <test>`: Django's own str() of every test of the suite. */
function collectedIds(log: string): string[] {
  return log
    .split('\n')
    .filter((l) => l.startsWith('[foresight-django] collected '))
    .map((l) => parseDesc(l.slice('[foresight-django] collected '.length))!)
    .filter((d) => !d.cls.startsWith('unittest.loader.'))
    .map((d) => d.id);
}

describe.each([
  ['py310', 80], // test_x (module.Class); no subtest lines; a failed class fixture prints a bare "ERROR"
  ['py312', 75], // test_x (module.Class.test_x); 3.12 leaves decorator-skipped tests out of "Ran N"
  ['py313', 80],
])('real Django output (Python %s)', (v, ran) => {
  const log = fixture(`real-${v}.log`);

  it('rebuilds ids and statuses', () => {
    const parsed = parseDjangoLog(log, FILES);
    const probe = Object.fromEntries(Object.entries(parsed.tests).filter(([id]) => !id.includes(MIR)));
    expect(probe).toEqual(PROBE);
    const mir = Object.entries(parsed.tests).filter(([id]) => id.includes(MIR));
    expect(mir).toHaveLength(31);
    expect(mir.filter(([, s]) => s !== 'pass')).toEqual([[`test_inheritance_values_joins (${MIR})`, 'skip']]);
    expect(parsed.collectionErrors).toEqual(BROKEN);
    expect(parsed.ran).toBe(ran);
    expect(parsed.exitCode).toBe(1);
    expect(parsed.problem).toBeUndefined();
  });

  it('names the exception each failing test ended with, the module left off (attribution compares them)', () => {
    const kinds = parseDjangoLog(log, FILES).failureKinds!;
    expect(kinds['test_error (fs_probe.tests.Basics)']).toBe('ValueError');
    expect(kinds['test_fail (fs_probe.tests.Basics)']).toBe('AssertionError');
    expect(kinds['test_doc_fail (fs_probe.tests.Docs)']).toBe('AssertionError');
    // subtests: the first block that failed
    expect(kinds['test_subtests_fail_and_error (fs_probe.tests.SubTests)']).toBe('KeyError');
    // tests that never ran (or were failed afterwards) by their class's fixture: the fixture's exception
    expect(kinds['test_never_runs (fs_probe.tests.SetUpClassError)']).toBe('RuntimeError');
    expect(kinds['test_never_runs_either (fs_probe.tests.SetUpTestDataError)']).toBe('RuntimeError');
    expect(kinds['test_runs (fs_probe.tests.TearDownClassError)']).toBe('RuntimeError');
    // only failing tests, never the passing or skipped ones
    const failing = Object.entries(parseDjangoLog(log, FILES).tests).filter(([, s]) => s === 'fail' || s === 'error').map(([id]) => id);
    expect(Object.keys(kinds).every((id) => failing.includes(id))).toBe(true);
  });

  it('the ids are exactly the tests Django collected', () => {
    expect(Object.keys(parseDjangoLog(log, FILES).tests).sort()).toEqual(collectedIds(log).sort());
  });

  it('every id maps back to its requested file', () => {
    for (const id of Object.keys(parseDjangoLog(log, FILES).tests)) {
      expect(djangoTestFile(id, FILES), id).not.toBeNull();
    }
    expect(djangoTestFile(`test_x (${P}.Basics)`, FILES)).toBe('tests/fs_probe/tests.py');
    expect(djangoTestFile('test_deep (fs_probe.subpkg.test_deep.Deep)', FILES)).toBe('tests/fs_probe/subpkg/test_deep.py');
  });

  it('the runner reads the log from the report file, or from the output when the file is missing', () => {
    const expected = parseDjangoLog(log, FILES);
    const viaFile = djangoRunner.parse({ junitXml: log, output: 'whatever', testFiles: FILES });
    expect(viaFile).toEqual({ tests: expected.tests, collectionErrors: BROKEN, failureKinds: expected.failureKinds });
    const viaOutput = djangoRunner.parse({ junitXml: null, output: log, testFiles: FILES });
    expect(viaOutput).toEqual(viaFile);
  });

  it('without the header and markers (a plain output), statuses stay the same', () => {
    const plain = log
      .split('\n')
      .filter((l) => !l.startsWith('[foresight-django]'))
      .join('\n');
    const parsed = parseDjangoLog(plain, FILES);
    // (Outer.Inner, a TestCase nested in a plain class, is not collected by unittest: not a test.)
  // Tests that never ran (fixture failures) are unknown without the list of collected tests.
    const ran = Object.fromEntries(Object.entries(PROBE).filter(([id]) => !/never_runs|test_in_module/.test(id)));
    const probe = Object.fromEntries(Object.entries(parsed.tests).filter(([id]) => !id.includes(MIR)));
    // ... except one: a test printed "test_other (fs_probe.tests.Output.test_other) ... ok", a header
    // for all the parser can tell.
    expect(probe).toEqual({ ...ran, [`test_other (${P}.Output)`]: 'pass', [`test_prints_header_lookalike (${P}.Output)`]: undefined });
    // unittest names the failed imports "test_broken", "tests", "fs_probe.test_attr" ...: mapped back.
    expect(parsed.collectionErrors).toEqual(BROKEN);
  });
});

describe('real Django output without the wrapper, and crashes', () => {
  it('plain runtests.py: failed imports are found from unittest\'s _FailedTest entries', () => {
    // "tests (unittest.loader._FailedTest.tests)" could be fs_probe.tests or fs_probe.subpkg.tests:
    // its traceback goes through tests/fs_probe/subpkg/tests.py.
    const files = ['tests/fs_probe/tests.py', 'tests/fs_probe/test_broken.py', 'tests/fs_probe/subpkg/tests.py', 'tests/fs_probe/subpkg/test_deep.py'];
    const parsed = parseDjangoLog(fixture('plain-py312.txt'), files);
    expect(parsed.tests).toEqual({ 'test_deep (fs_probe.subpkg.test_deep.Deep)': 'pass' });
    expect(parsed.collectionErrors).toEqual(['tests/fs_probe/subpkg/tests.py', 'tests/fs_probe/test_broken.py']);
    expect(parsed.ran).toBe(3);
    expect(parsed.problem).toBeUndefined();
  });

  it('an app that cannot be loaded crashes the runner before any test: no tests, a problem', () => {
    const files = ['tests/fs_crash/tests.py', 'tests/fs_probe/subpkg/test_deep.py'];
    const parsed = djangoRunner.parse({ junitXml: fixture('crash-setup.log'), output: '', testFiles: files });
    expect(parsed).toEqual({
      tests: {},
      collectionErrors: [],
      problem: "Django's test runner crashed before running any test: RuntimeError: fs_crash models cannot be imported",
    });
  });

  it('a missing dependency crashes it too', () => {
    const parsed = parseDjangoLog(fixture('crash-deps.log'), ['tests/fs_probe/subpkg/test_deep.py']);
    expect(parsed.tests).toEqual({});
    expect(parsed.exitCode).toBe(1);
    expect(parsed.problem).toBe("Django's test runner crashed before running any test: ModuleNotFoundError: No module named 'asgiref'");
  });
});

const header = (...labels: string[]): string =>
  ['[foresight-django] v1', ...labels.map((l) => `[foresight-django] label ${l} tests/${l.replace(/\./g, '/')}.py`)].join('\n');

describe('django log edge cases', () => {
  it('no test module at this state: zero tests, no problem', () => {
    const log = `${header()}\n[foresight-django] none of the test modules exists at this state: 0 tests\n[foresight-django] exit 0\n`;
    expect(isDjangoLog(log)).toBe(true);
    expect(djangoRunner.parse({ junitXml: log, output: log, testFiles: ['tests/a/tests.py'] })).toEqual({ tests: {}, collectionErrors: [] });
  });

  it('a log cut off mid-run (killed): the streamed statuses, FAIL included, and a problem', () => {
    const log = [
      header('a.tests'),
      'test_one (a.tests.T.test_one) ... ok',
      'test_two (a.tests.T.test_two) ... FAIL',
      'test_three (a.tests.T.test_three) ... ',
    ].join('\n');
    const parsed = parseDjangoLog(log, ['tests/a/tests.py']);
    expect(parsed.tests).toEqual({ 'test_one (a.tests.T)': 'pass', 'test_two (a.tests.T)': 'fail' });
    expect(parsed.problem).toBe(
      'the log ends before the test runner exited (killed?) after 2 result(s): test_three (a.tests.T.test_three) ...',
    );
  });

  it('the runner stopping after some tests without a summary is a problem', () => {
    const log = [header('a.tests'), 'test_one (a.tests.T) ... ok', 'Segmentation fault', '[foresight-django] exit 139'].join('\n');
    const parsed = parseDjangoLog(log, ['tests/a/tests.py']);
    expect(parsed.tests).toEqual({ 'test_one (a.tests.T)': 'pass' });
    expect(parsed.problem).toBe("Django's test runner stopped after 1 result(s) without its summary: Segmentation fault");
  });

  it('passes (FORESIGHT_PASSES): one report per pass, each with the shared start and its own verdict; an unfinished pass is a problem', () => {
    const pass = (k: number, two: string, code: number): string[] => [
      `[foresight-django] pass ${k}`,
      'test_one (a.tests.T.test_one) ... ok',
      `test_two (a.tests.T.test_two) ... ${two}`,
      '',
      '-'.repeat(70),
      'Ran 2 tests in 0.001s',
      '',
      code ? 'FAILED (failures=1)' : 'OK',
      `[foresight-django] pass-end ${k} ${code}`,
    ];
    const start = [header('a.tests'), '[foresight-django] collected test_one (a.tests.T.test_one)', '[foresight-django] collected test_two (a.tests.T.test_two)', "Creating test database for alias 'default'..."];
    const log = [...start, ...pass(1, 'ok', 0), ...pass(2, 'FAIL', 1), '[foresight-django] pass 3', 'test_one (a.tests.T.test_one) ... ok', 'Segmentation fault', '[foresight-django] exit 139', ''].join('\n');
    const parts = splitPasses(log);
    expect(parts.map((p) => p.exitCode)).toEqual([0, 1, null]);
    const parsed = parts.map((p) => djangoRunner.parse({ junitXml: p.report, output: '', testFiles: ['tests/a/tests.py'] }));
    expect(parsed[0]).toEqual({ tests: { 'test_one (a.tests.T)': 'pass', 'test_two (a.tests.T)': 'pass' }, collectionErrors: [] });
    expect(parsed[1]).toEqual({ tests: { 'test_one (a.tests.T)': 'pass', 'test_two (a.tests.T)': 'fail' }, collectionErrors: [] });
    expect(parsed[2]!.problem).toBe("Django's test runner stopped after 1 result(s) without its summary: Segmentation fault");
    expect(parts[1]!.report).toContain("Creating test database for alias 'default'...");
    expect(parts[1]!.report).not.toContain('test_two (a.tests.T.test_two) ... ok');
    // No pass line (the runner stopped before its first pass): the log is one report as it is.
    const plain = [header('a.tests'), 'Traceback (most recent call last):', 'RuntimeError: broken', '[foresight-django] exit 1'].join('\n');
    expect(splitPasses(plain)).toEqual([{ report: plain, exitCode: null }]);
  });

  it('a count that disagrees with "Ran N tests" is a problem', () => {
    const run = (n: number): string =>
      [header('a.tests'), 'test_one (a.tests.T) ... ok', 'test_two (a.tests.T) ... skipped \'no\'', '', '-'.repeat(70), `Ran ${n} tests in 0.001s`, '', 'OK (skipped=1)', '[foresight-django] exit 0'].join('\n');
    expect(parseDjangoLog(run(2), []).problem).toBeUndefined();
    expect(parseDjangoLog(run(1), []).problem).toBeUndefined(); // Python 3.12 leaves the skip out
    expect(parseDjangoLog(run(3), []).problem).toBe('parsed 2 test result(s) but Django reports "Ran 3 tests"');
    expect(parseDjangoLog(run(0), []).problem).toBe('parsed 2 test result(s) but Django reports "Ran 0 tests"');
  });

  it('a class fixture that raises SkipTest skips the tests that never ran', () => {
    const log = [
      header('a.tests'),
      '[foresight-django] collected test_one (a.tests.T.test_one)',
      '[foresight-django] collected test_two (a.tests.T.test_two)',
      '[foresight-django] collected test_three (a.tests.U.test_three)',
      "setUpClass (a.tests.T) ... skipped 'no database'",
      'test_three (a.tests.U.test_three) ... ok',
      '',
      '-'.repeat(70),
      'Ran 1 test in 0.001s',
      '',
      'OK (skipped=1)',
      '[foresight-django] exit 0',
    ].join('\n');
    expect(parseDjangoLog(log, ['tests/a/tests.py']).tests).toEqual({
      'test_one (a.tests.T)': 'skip',
      'test_two (a.tests.T)': 'skip',
      'test_three (a.tests.U)': 'pass',
    });
  });

  it('an async test that the runner never awaited did not run: skip, with why (Python 3.9 and 3.11 output)', () => {
    const tail = ['', '-'.repeat(70), 'Ran 3 tests in 0.002s', '', 'OK', '[foresight-django] exit 0'];
    // Django < 3.1's runtests.py makes RuntimeWarning an error: Python reports it as ignored, on lines of its own.
    const asError = [
      header('a.tests'),
      'test_a (a.tests.T) ... Exception ignored in: <coroutine object T.test_a at 0x7f69b97a6240>',
      'Traceback (most recent call last):',
      '  File "/usr/lib/python3.9/warnings.py", line 506, in _warn_unawaited_coroutine',
      '    warn(msg, category=RuntimeWarning, stacklevel=2, source=coro)',
      "RuntimeWarning: coroutine 'T.test_a' was never awaited",
      'ok',
      'test_b (a.tests.T) ... ok',
      "test_c (a.tests.U) ... Exception ignored in: <coroutine object T.test_c at 0x7f69b97a6240>",
      "RuntimeWarning: coroutine 'T.test_c' was never awaited", // another class's coroutine: not this test's
      'ok',
      ...tail,
    ];
    // Without a filter (3.11): the warning on the header's line, then 3.11's DeprecationWarning.
    const asWarning = [
      header('a.tests'),
      "test_a (a.tests.T.test_a) ... /usr/lib/python3.11/unittest/case.py:579: RuntimeWarning: coroutine 'T.test_a' was never awaited",
      '  if method() is not None:',
      'RuntimeWarning: Enable tracemalloc to get the object allocation traceback',
      '/usr/lib/python3.11/unittest/case.py:678: DeprecationWarning: It is deprecated to return a value that is not None from a test case (<bound method T.test_a of <a.tests.T testMethod=test_a>>)',
      '  return self.run(*args, **kwds)',
      'ok',
      'test_b (a.tests.T.test_b) ... ok',
      'test_c (a.tests.U.test_c) ... ok',
      ...tail,
    ];
    for (const lines of [asError, asWarning]) {
      const parsed = parseDjangoLog(lines.join('\n'), ['tests/a/tests.py']);
      expect(parsed.tests).toEqual({ 'test_a (a.tests.T)': 'skip', 'test_b (a.tests.T)': 'pass', 'test_c (a.tests.U)': 'pass' });
      expect(parsed.notRun).toEqual({ 'test_a (a.tests.T)': "its coroutine was never awaited (this commit's test runner does not run async tests)" });
      expect(parsed.problem).toBeUndefined();
    }
  });

  it('the exception a failure ended with is named whatever its class is called, the last one of a chain', () => {
    const block = (name: string, kind: 'FAIL' | 'ERROR', body: string[]): string[] => [
      '='.repeat(70),
      `${kind}: ${name} (t.tests.T.${name})`,
      '-'.repeat(70),
      'Traceback (most recent call last):',
      ...body,
      '',
    ];
    const frame = ['  File "/tmp/testbed/django/db/models/query.py", line 654, in get', '    raise self.model.DoesNotExist('];
    const log = [
      header('t.tests'),
      ...['a', 'b', 'c', 'd'].map((x) => `test_${x} (t.tests.T.test_${x}) ... ${x === 'c' ? 'FAIL' : 'ERROR'}`),
      '',
      ...block('test_a', 'ERROR', [...frame, 'async.models.SimpleModel.DoesNotExist: SimpleModel matching query does not exist.']),
      ...block('test_b', 'ERROR', [...frame, 'Exception: boom']),
      // Django 5f637a8a8d's base: a class name without a usual suffix.
      ...block('test_c', 'FAIL', [
        '  File "/tmp/testbed/django/test/testcases.py", line 185, in __call__',
        '    raise DatabaseOperationForbidden(self.message)',
        "django.test.testcases.DatabaseOperationForbidden: Database threaded connections to 'dynamic_connection' are not allowed in SimpleTestCase subclasses.",
      ]),
      ...block('test_d', 'ERROR', [
        ...frame,
        'ValueError: first',
        '',
        'During handling of the above exception, another exception occurred:',
        '',
        'Traceback (most recent call last):',
        '  File "/tmp/testbed/tests/t/tests.py", line 9, in test_d',
        '    raise KeyError("x")',
        '    ^^^^^^^^^^^^^^^^^^^',
        "KeyError: 'x'",
      ]),
      '-'.repeat(70),
      'Ran 4 tests in 0.009s',
      '',
      'FAILED (failures=1, errors=3)',
      '[foresight-django] exit 1',
    ].join('\n');
    expect(parseDjangoLog(log, ['tests/t/tests.py']).failureKinds).toEqual({
      'test_a (t.tests.T)': 'DoesNotExist',
      'test_b (t.tests.T)': 'Exception',
      'test_c (t.tests.T)': 'DatabaseOperationForbidden',
      'test_d (t.tests.T)': 'KeyError',
    });
  });

  it('a failed import of the package itself is named by its first part', () => {
    const out = [
      'fs (unittest.loader._FailedTest.fs) ... ERROR',
      '',
      '='.repeat(70),
      'ERROR: fs (unittest.loader._FailedTest.fs)',
      '-'.repeat(70),
      'ImportError: Failed to import test module: fs',
      '',
      '-'.repeat(70),
      'Ran 1 test in 0.000s',
      '',
      'FAILED (errors=1)',
    ].join('\n');
    const parsed = parseDjangoLog(out, ['tests/fs/tests.py', 'tests/other/tests.py']);
    expect(parsed.tests).toEqual({});
    expect(parsed.collectionErrors).toEqual(['tests/fs/tests.py']);
    expect(parsed.problem).toBeUndefined();
  });
});

describe('labels and ids', () => {
  it('derives runtests.py labels like run_state.sh', () => {
    expect(djangoLabel('tests/foo/tests.py')).toBe('foo.tests');
    expect(djangoLabel('tests/foo/test_bar.py')).toBe('foo.test_bar');
    expect(djangoLabel('tests/foo/tests/test_x.py')).toBe('foo.tests.test_x');
    expect(djangoLabel('tests/test_sqlite.py')).toBeNull(); // not inside a test app
    expect(djangoLabel('django/test/testcases.py')).toBeNull();
    expect(djangoLabel('tests/foo/data.json')).toBeNull();
    expect(djangoLabel('tests/v1.2/tests.py')).toBeNull(); // not importable
  });

  it('normalises Python ≥ 3.11 descriptions', () => {
    expect(parseDesc('test_x (a.tests.T.test_x)')?.id).toBe('test_x (a.tests.T)');
    expect(parseDesc('test_x (a.tests.T)')?.id).toBe('test_x (a.tests.T)');
    expect(parseDesc('test_ünï (a.tests.T.test_ünï) ... ok')?.id).toBe('test_ünï (a.tests.T)');
  });

  it('maps an id to the longest matching label', () => {
    const files = ['tests/foo/tests.py', 'tests/foo/tests/test_x.py'];
    expect(djangoTestFile('test_a (foo.tests.test_x.C)', files)).toBe('tests/foo/tests/test_x.py');
    expect(djangoTestFile('test_a (foo.tests.C)', files)).toBe('tests/foo/tests.py');
    expect(djangoTestFile('test_a (bar.tests.C)', files)).toBeNull();
    expect(djangoRunner.testFileOf?.('test_a (foo.tests.C)', files)).toBe('tests/foo/tests.py');
  });
});

describe('runner registry', () => {
  it('has django', () => {
    expect(runners.get('django')).toBe(djangoRunner);
    expect(getRunner('django').script).toBe('django/run_state.sh');
    expect(djangoRunner.testCmd).toContain('runtests.py --settings=test_sqlite --parallel 1 -v 2 --noinput');
  });
});
