/**
 * Golden-file suites (a lexer's samples and their expected output, collected by a conftest.py hook) have
 * test files that are data, not modules: without this every such PR was excluded as `pr1_no_tests`.
 * On a real history: the data files under a hooked folder are the PR's test files, a changed expected
 * output stands for its input beside it, and a top-level hook (doctests of docs) or a folder without a
 * hook adds nothing. pytest reports such an item with an empty name: its id is the file, selectable as is.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collectedDataFiles, splitPatch } from '../../../core/extract/split-patch.ts';
import { parseJunit } from '../../../core/env/runners/pytest/parse-junit.ts';
import { pytestRunner } from '../../../core/env/runners/pytest/index.ts';
import { gitRepo, type GitRepo } from '../../helpers/git-repo.ts';

const HOOK = 'import pytest\n\n\ndef pytest_collect_file(parent, file_path):\n    if file_path.suffix != ".output":\n        return SampleFile.from_parent(parent, path=file_path)\n';

describe('test files that are data collected by a conftest hook', () => {
  let repo: GitRepo;
  let base: string;
  let head: string;

  beforeAll(async () => {
    repo = await gitRepo();
    base = await repo.commit({
      files: {
        'conftest.py': 'def pytest_collect_file(parent, file_path):\n    return None\n',
        'tests/samples/conftest.py': HOOK,
        'tests/samples/abnf/one.abnf': 'rule = "a"\n',
        'tests/samples/abnf/one.abnf.output': "'rule' Name\n",
        'tests/samples/doscon/session': '> dir\n',
        'tests/samples/doscon/session.output': "'>' Generic\n",
        'tests/data/table.csv': 'a,b\n',
        'lexers/abnf.py': 'X = 1\n',
      },
      message: 'init',
      date: '2024-01-01T00:00:00Z',
    });
    head = await repo.commit({
      files: {
        'lexers/abnf.py': 'X = 2\n',
        'tests/samples/abnf/one.abnf.output': "'rule' Name.Class\n",
        'tests/samples/abnf/two.abnf': 'b = "b"\n',
        'tests/samples/abnf/two.abnf.output': "'b' Name\n",
        'tests/samples/doscon/session.output': "'>' Prompt\n",
        'tests/data/table.csv': 'a,b,c\n',
        'tests/test_lexer.py': 'def test_x():\n    pass\n',
        'tests/samples/helpers.py': 'Y = 1\n',
      },
      message: 'Fix the abnf lexer (#2)',
      date: '2024-01-02T00:00:00Z',
    });
  });
  afterAll(async () => {
    await repo?.remove();
  });

  it('data files under a hooked folder are test files; an expected output stands for its input (with or without an extension)', async () => {
    const split = await splitPatch(repo.dir, base, head);
    expect(split.testFiles).toEqual(['tests/test_lexer.py', 'tests/samples/abnf/one.abnf', 'tests/samples/abnf/two.abnf', 'tests/samples/doscon/session']);
    // Every changed test file is still laid over the base (the expected outputs included).
    expect(split.overlayFiles).toContain('tests/samples/abnf/one.abnf.output');
  });

  it('a folder without a hook (the top-level conftest.py does not count) and Python helpers add nothing', async () => {
    expect(await collectedDataFiles(repo.dir, head, ['tests/data/table.csv', 'tests/samples/helpers.py'])).toEqual([]);
  });

  it('pytest reports a collected file with an empty name: the id is the file, and the runner selects it', () => {
    // As pytest 9 wrote it for such items (junit_family=xunit1).
    const xml = [
      '<?xml version="1.0" encoding="utf-8"?><testsuites name="pytest tests"><testsuite name="pytest" errors="0" failures="1" skipped="0" tests="2" time="0.1">',
      '<testcase classname="tests.samples.abnf.one.abnf" name="" file="tests/samples/abnf/one.abnf" time="0.001" />',
      '<testcase classname="tests.samples.abnf.two.abnf" name="" file="tests/samples/abnf/two.abnf" time="0.018"><failure message="AssertionError">diff</failure></testcase>',
      '</testsuite></testsuites>',
    ].join('');
    const files = ['tests/samples/abnf/one.abnf', 'tests/samples/abnf/two.abnf'];
    expect(parseJunit(xml, files).tests).toEqual({ 'tests/samples/abnf/one.abnf': 'pass', 'tests/samples/abnf/two.abnf': 'fail' });
    expect(pytestRunner.selectArg!('tests/samples/abnf/two.abnf', files)).toBe('tests/samples/abnf/two.abnf');
    expect(pytestRunner.selectArg!('tests/samples/abnf/other.abnf', files)).toBeNull();
  });
});
