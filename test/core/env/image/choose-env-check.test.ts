/**
 * Whether a candidate's run at the PR's head shows a usable environment (detected recipes that verify
 * themselves): each guard is pinned by a test named after what it prevents. The outputs are
 * pytest's own lines as it prints them.
 */
import { describe, expect, it } from 'vitest';
import { absentPackage, checkReport, envErrorLine, namesPackage } from '../../../../core/env/image/env-check.ts';
import { pytestRunner } from '../../../../core/env/runners/pytest/index.ts';
import type { StateRun } from '../../../../core/env/index.ts';

const codes = pytestRunner.exitCodes;
const report = (exitCode: number, tests: StateRun['parsed']['tests'], outputTail: string, collectionErrors: string[] = []): StateRun => ({
  kind: 'report', exitCode, durationMs: 1000, parsed: { tests, collectionErrors }, outputTail,
});

describe('checkReport', () => {
  it('a missing module at collection rejects the candidate, naming the module', () => {
    const out = "_____ ERROR collecting tests/dialects/test_bigquery.py _____\ntests/dialects/test_bigquery.py:3: in <module>\n    import pytz\nE   ModuleNotFoundError: No module named 'pytz'\n1 error in 0.23s\n";
    expect(checkReport(report(1, {}, out, ['tests/dialects/test_bigquery.py']), codes)).toEqual({
      kind: 'unusable',
      detail: "tests/dialects/test_bigquery.py cannot be collected: ModuleNotFoundError: No module named 'pytz'",
    });
  });

  it('a failing test never rejects the candidate', () => {
    const v = checkReport(report(1, { 'tests/test_a.py::test_x': 'pass', 'tests/test_a.py::test_y': 'fail' }, 'FAILED tests/test_a.py::test_y\n1 failed, 1 passed'), codes);
    expect(v).toEqual({ kind: 'trustworthy', detail: '2 tests ran (1 passed, 1 failed, 0 errors, 0 skipped)' });
  });

  it('an option of a plugin that is not installed (usage error, exit 4) rejects it', () => {
    const out = 'ERROR: usage: python3 -m pytest [options] [file_or_dir] [file_or_dir] [...]\npython3 -m pytest: error: unrecognized arguments: --cov=pkg\n  inifile: /tmp/testbed/setup.cfg\n';
    const v = checkReport(report(4, {}, out), codes);
    expect(v.kind).toBe('unusable');
    expect(v.detail).toBe('the test runner exited 4: python3 -m pytest: error: unrecognized arguments: --cov=pkg');
  });

  it('a fixture no installed plugin provides rejects it, though the run is a report', () => {
    const out = "  def test_m(mocker):\nE       fixture 'mocker' not found\n>       available fixtures: cache, capfd\n1 error in 0.1s\n";
    expect(checkReport(report(1, { 'tests/test_m.py::test_m': 'error' }, out), codes)).toEqual({ kind: 'unusable', detail: "1 test(s) errored: fixture 'mocker' not found" });
  });

  it('a conftest that cannot be imported (no report) rejects it', () => {
    const run: StateRun = { kind: 'no_report', why: 'missing', exitCode: 4, durationMs: 500, parsed: { tests: {}, collectionErrors: [] }, outputTail: "ImportError while loading conftest '/tmp/testbed/tests/conftest.py'.\ntests/conftest.py:1: in <module>\n    import hypothesis\nE   ModuleNotFoundError: No module named 'hypothesis'\n" };
    expect(checkReport(run, codes)).toEqual({ kind: 'unusable', detail: "no report (exit 4): ModuleNotFoundError: No module named 'hypothesis'" });
  });

  it('a timeout or no test collected tells nothing about the install: the candidate is kept', () => {
    const timeout: StateRun = { kind: 'timeout', exitCode: null, durationMs: 120_000, parsed: { tests: {}, collectionErrors: [] }, outputTail: '' };
    expect(checkReport(timeout, codes)).toEqual({ kind: 'inconclusive', detail: 'timed out after 120s' });
    expect(checkReport(report(5, {}, 'no tests ran in 0.01s\n'), codes).kind).toBe('inconclusive');
  });

  it('envErrorLine prefers the missing module over later generic lines', () => {
    expect(envErrorLine("E   ImportError: cannot import name 'Iterator' from 'collections'\nSomeError: later\n")).toBe("ImportError: cannot import name 'Iterator' from 'collections'");
    expect(envErrorLine('nothing telling here')).toBeNull();
  });
});

describe('a package the offline wheels lack, learned in another era', () => {
  it('is named only when pip found no version at all, not when a pin is unsatisfied', () => {
    expect(absentPackage('ERROR: No matching distribution found for pympler; extra == "dev"')).toBe('pympler');
    expect(absentPackage('ERROR: No matching distribution found for mock')).toBe('mock');
    expect(absentPackage('ERROR: No matching distribution found for flit_core<4,>=3.2')).toBeNull();
    expect(absentPackage('ERROR: Could not build wheels for cffi')).toBeNull();
  });

  it("still counts while the commit's metadata names it as a whole name (case, - _ . alike)", () => {
    const pyproject = '[project.optional-dependencies]\ntests = ["Pympler", "pytest-mock", "zope.interface"]\n';
    expect(namesPackage(pyproject, 'pympler')).toBe(true);
    expect(namesPackage(pyproject, 'zope_interface')).toBe(true);
    // Part of another name is not the package: the extra no longer needs it, so the candidate is built again.
    expect(namesPackage(pyproject, 'mock')).toBe(false);
    expect(namesPackage(pyproject, 'pytest')).toBe(false);
  });
});
