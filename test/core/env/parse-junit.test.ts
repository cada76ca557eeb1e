import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ForesightError } from '../../../core/foundation/errors.ts';
import { collectionErrorsFromOutput, parseJunit } from '../../../core/env/runners/pytest/parse-junit.ts';
import { pytestRunner } from '../../../core/env/runners/pytest/index.ts';
import { getRunner, runners } from '../../../core/env/runners/registry.ts';

// Fixtures: REAL pytest output for fixtures/pytest-sample (regenerate with fixtures/regen.sh).
const fixture = (name: string): string => readFileSync(new URL(`./fixtures/${name}`, import.meta.url), 'utf8');

const FILES = [
  'tests/test_basic.py',
  'tests/test_broken.py',
  'tests/pkg/test_y.py',
  'tests/pkg/test_pkg_broken.py',
  'tests/test_inherit.py',
  'tests/v1.2/test_dot.py',
];
const B = 'tests/test_basic.py';

const EXPECTED = {
  [`${B}::test_pass`]: 'pass',
  [`${B}::test_fail`]: 'fail',
  [`${B}::test_skip`]: 'skip',
  [`${B}::test_xfail`]: 'skip', // xfail is reported as skipped
  [`${B}::test_xpass`]: 'pass', // non-strict xpass is a plain pass
  [`${B}::test_setup_error`]: 'error',
  [`${B}::test_teardown_error`]: 'error',
  [`${B}::test_fail_and_teardown_error`]: 'fail', // two testcases (failure + teardown error) merge to fail
  [`${B}::test_param[1-x y]`]: 'pass',
  [`${B}::test_param[2-[br]]`]: 'fail',
  [`${B}::test_param[3-a-b]`]: 'pass',
  [`${B}::test_param[4-dots.and::colons]`]: 'pass',
  [`${B}::test_ids[space id-dash]`]: 'pass',
  [`${B}::test_ids[br[ack]et]`]: 'pass',
  [`${B}::TestOuter::test_m`]: 'pass',
  [`${B}::TestOuter::TestInner::test_n`]: 'fail',
  [`${B}::TestOuter::TestInner::test_p[1]`]: 'pass',
  [`${B}::TestOuter::TestInner::test_p[2]`]: 'pass',
  'tests/pkg/test_y.py::TestY::test_y': 'pass',
  'tests/pkg/test_y.py::test_func': 'pass',
  'tests/test_inherit.py::TestChild::test_inherited': 'pass', // file="tests/base.py" in the XML
  'tests/test_inherit.py::TestChild::test_own': 'pass',
  'tests/v1.2/test_dot.py::test_in_dotted_dir': 'pass',
};
const BROKEN = ['tests/pkg/test_pkg_broken.py', 'tests/test_broken.py'];

describe.each(['pytest7', 'pytest9'])('pytest JUnit (%s, xunit1)', (v) => {
  const xml = fixture(`junit-${v}.xml`);

  it('rebuilds node ids and statuses', () => {
    const parsed = parseJunit(xml, FILES);
    expect(parsed.tests).toEqual(EXPECTED);
    expect(parsed.collectionErrors).toEqual(BROKEN);
  });

  it('names the exception each failing test ended with (attribution compares them)', () => {
    expect(parseJunit(xml, FILES).failureKinds).toEqual({
      'tests/test_basic.py::test_fail': 'AssertionError',
      'tests/test_basic.py::test_setup_error': 'RuntimeError',
      'tests/test_basic.py::test_teardown_error': 'RuntimeError',
      'tests/test_basic.py::test_fail_and_teardown_error': 'AssertionError',
      'tests/test_basic.py::test_param[2-[br]]': 'AssertionError',
      'tests/test_basic.py::TestOuter::TestInner::test_n': 'AssertionError',
    });
  });

  it("ids are exactly pytest's own node ids (--collect-only)", () => {
    const ids = fixture(`nodeids-${v}.txt`).trim().split('\n');
    expect(Object.keys(parseJunit(xml, FILES).tests).sort()).toEqual(ids.sort());
  });

  it('a collection abort (no --continue-on-collection-errors) has only the collection errors', () => {
    const parsed = parseJunit(fixture(`junit-${v}-abort.xml`), FILES);
    expect(parsed.tests).toEqual({});
    expect(parsed.collectionErrors).toEqual(BROKEN);
  });

  it('finds collection errors in the output as a fallback', () => {
    expect(collectionErrorsFromOutput(fixture(`output-${v}.txt`), FILES)).toEqual(BROKEN);
    const viaRunner = pytestRunner.parse({ junitXml: null, output: fixture(`output-${v}.txt`), testFiles: FILES });
    expect(viaRunner).toEqual({ tests: {}, collectionErrors: BROKEN });
  });

  it('the runner merges junit and output', () => {
    const parsed = pytestRunner.parse({ junitXml: xml, output: fixture(`output-${v}.txt`), testFiles: FILES });
    expect(parsed.tests).toEqual(EXPECTED);
    expect(parsed.collectionErrors).toEqual(BROKEN);
  });

  it('without the requested files, falls back to the file attribute and a Test* heuristic', () => {
    const parsed = parseJunit(xml, []);
    expect(Object.keys(parsed.tests).sort()).toEqual(Object.keys(EXPECTED).sort());
    expect(parsed.collectionErrors).toEqual(BROKEN);
  });

  it('maps rootdir-relative ids onto the requested repo-relative files', () => {
    // pytest's rootdir was `sub/` (an ini file there): ids lack the `sub/` prefix.
    const files = FILES.map((f) => `sub/${f}`);
    const parsed = parseJunit(xml, files);
    expect(parsed.tests['sub/tests/test_basic.py::TestOuter::TestInner::test_p[1]']).toBe('pass');
    expect(parsed.tests['sub/tests/v1.2/test_dot.py::test_in_dotted_dir']).toBe('pass');
    expect(parsed.collectionErrors).toEqual(BROKEN.map((f) => `sub/${f}`));
  });
});

describe('pytest JUnit edge cases', () => {
  it('the empty report run_state.sh writes for zero test files', () => {
    const xml =
      '<?xml version="1.0" encoding="utf-8"?>\n<testsuites><testsuite name="pytest" errors="0" failures="0" skipped="0" tests="0" time="0"></testsuite></testsuites>\n';
    expect(parseJunit(xml, ['tests/test_a.py'])).toEqual({ tests: {}, collectionErrors: [] });
  });

  it('malformed (truncated) XML is a ForesightError', () => {
    const xml = fixture('junit-pytest9.xml');
    expect(() => parseJunit(xml.slice(0, xml.length / 2), FILES)).toThrow(ForesightError);
  });

  it('a module-level skip is neither a test nor a collection error', () => {
    const xml =
      '<testsuites><testsuite><testcase classname="" name="tests.test_a" file="tests/test_a.py"><skipped message="collection skipped" /></testcase></testsuite></testsuites>';
    expect(parseJunit(xml, ['tests/test_a.py'])).toEqual({ tests: {}, collectionErrors: [] });
  });

  it('a broken package __init__ marks every requested file below it', () => {
    const out = '____ ERROR collecting tests/pkg/__init__.py ____\nE   ImportError\n';
    expect(collectionErrorsFromOutput(out, ['tests/pkg/test_a.py', 'tests/pkg/sub/test_b.py', 'tests/test_c.py'])).toEqual(
      ['tests/pkg/sub/test_b.py', 'tests/pkg/test_a.py'],
    );
  });

  it('decodes entities in names', () => {
    const xml =
      '<testsuites><testsuite><testcase classname="tests.test_a" name="test_x[a&lt;b &amp; &quot;c&quot;]" file="tests/test_a.py" /></testsuite></testsuites>';
    expect(parseJunit(xml, ['tests/test_a.py']).tests).toEqual({ 'tests/test_a.py::test_x[a<b & "c"]': 'pass' });
  });
});

describe('runner registry', () => {
  it('has pytest', () => {
    expect(runners.get('pytest')).toBe(pytestRunner);
    expect(getRunner('pytest').script).toBe('pytest/run_state.sh');
  });

  it('names the known runners for an unknown one', () => {
    expect(() => getRunner('nose')).toThrow(ForesightError);
    expect(() => getRunner('nose')).toThrow(/Unknown test runner "nose"/);
    try {
      getRunner('nose');
    } catch (err) {
      expect((err as ForesightError).remedy).toContain('pytest');
    }
  });
});
