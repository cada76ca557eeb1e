/**
 * Which cases of a module run (runners/pytest/foresight_keep.py), in a real chain container: a module read
 * for its data files runs the cases naming them and a fixed sample of the rest; a probe runs a sample of each
 * file. The fixture is sqlfluff's shape: one parametrised case per `data/<dialect>/<name>.sql`.
 */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectDocker, DEFAULT_BASE_ALIAS, ensureImage, isDockerReachable, KEEP_SAMPLE, openChainEnv, type ChainEnv } from '../../../core/env/index.ts';
import { pytestRunner } from '../../../core/env/runners/pytest/index.ts';
import { gitRepo, type GitRepo } from '../../helpers/git-repo.ts';

const docker = connectDocker();
const skip = !(await isDockerReachable(docker)) && !process.env['CI'];
if (skip) console.warn('[keep-cases.test] SKIPPED: Docker is not reachable and CI is unset');

const DIALECTS = ['ansi', 'mysql', 'snowflake'];
const NAMES = ['alter_table', 'alter_table_rename', 'create_view', 'select_a', 'select_b', 'update', 'delete', 'insert', 'merge', 'drop'];
const PARSE_TEST = `import os

import pytest

ROOT = os.path.join("tests", "data")
CASES = sorted((d, f) for d in os.listdir(ROOT) for f in os.listdir(os.path.join(ROOT, d)))


@pytest.mark.parametrize("dialect,name", CASES)
def test_parse(dialect, name):
    assert open(os.path.join(ROOT, dialect, name)).read().startswith("SELECT")
`;
// Reads the data through a fixture: its ids name none of the files.
const LINT_TEST = `import os


def test_lint_all():
    assert os.listdir(os.path.join("tests", "data"))


def test_lint_nothing():
    assert True
`;
// sqlfluff's autofix layout: one folder per case, its files named alike in every folder.
const AUTOFIX_TEST = `import os

import pytest

ROOT = os.path.join("tests", "autofix")
CASES = sorted((d, c) for d in os.listdir(ROOT) for c in os.listdir(os.path.join(ROOT, d)))


@pytest.mark.parametrize("dialect,case", CASES)
def test_fix(dialect, case):
    assert open(os.path.join(ROOT, dialect, case, "before.sql")).read()
`;
// sqlfluff's rule cases: one YAML file per rule, each case's id the rule and its name joined by "_".
const RULES_TEST = `import pytest

CASES = ["AL01_test_fail", "AL01_test_pass", "AL02_test_fail", "AL02_LT01_test_pass"] + ["CV%02d_test" % i for i in range(30)]


@pytest.mark.parametrize("case", CASES, ids=CASES)
def test_rule(case):
    pass
`;
const MANY_TEST = Array.from({ length: 60 }, (_, i) => `def test_n${i}():\n    pass\n`).join('\n');

const ids = (run: Awaited<ReturnType<ChainEnv['runState']>>): string[] => Object.keys(run.parsed.tests).sort();
const sample = (nodeIds: readonly string[], n: number): string[] =>
  [...nodeIds].sort((a, b) => (hash(a) < hash(b) ? -1 : 1)).slice(0, n).sort();
const hash = (s: string): string => createHash('sha1').update(s).digest('hex');

describe.skipIf(skip)('keep rules and probe samples (pytest in a chain container)', () => {
  let repo: GitRepo;
  let head: string;
  let env: ChainEnv;
  const parseIds = DIALECTS.flatMap((d) => NAMES.map((n) => `tests/test_parse.py::test_parse[${d}-${n}.sql]`)).sort();

  beforeAll(async () => {
    await ensureImage(DEFAULT_BASE_ALIAS, { docker });
    repo = await gitRepo();
    const data = Object.fromEntries(DIALECTS.flatMap((d) => NAMES.map((n) => [`tests/data/${d}/${n}.sql`, 'SELECT 1\n'] as const)));
    const autofix = Object.fromEntries(DIALECTS.flatMap((d) => NAMES.map((n, i) => [`tests/autofix/${d}/00${i}_${n}/before.sql`, 'SELECT 1\n'] as const)));
    head = await repo.commit({
      files: { 'conftest.py': '', 'tests/test_parse.py': PARSE_TEST, 'tests/test_lint.py': LINT_TEST, 'tests/test_many.py': MANY_TEST, 'tests/test_autofix.py': AUTOFIX_TEST, 'tests/test_rules.py': RULES_TEST, ...data, ...autofix },
      message: 'Initial commit',
      date: '2025-01-01T00:00:00Z',
    });
    env = await openChainEnv({ gitDir: `${repo.dir}/.git`, image: DEFAULT_BASE_ALIAS, runner: pytestRunner, docker });
  }, 600_000);
  afterAll(async () => {
    await env?.close();
    await repo?.remove();
  });

  it('the module read for snowflake/alter_table.sql runs that case, not alter_table_rename or another dialect\'s, and the same sample of the rest', async () => {
    const run = await env.runState({
      checkout: head,
      overlay: null,
      testFiles: ['tests/test_parse.py', 'tests/test_lint.py'],
      keep: [{ module: 'tests/test_parse.py', data: ['tests/data/snowflake/alter_table.sql'] }],
    });
    expect(run.kind, run.outputTail).toBe('report');
    const target = 'tests/test_parse.py::test_parse[snowflake-alter_table.sql]';
    const rest = parseIds.filter((id) => id !== target);
    // A module without a rule runs whole.
    expect(ids(run)).toEqual([target, ...sample(rest, KEEP_SAMPLE), 'tests/test_lint.py::test_lint_all', 'tests/test_lint.py::test_lint_nothing'].sort());
    expect(ids(run)).toHaveLength(KEEP_SAMPLE + 3);
  });

  it('a stem found in several folders is taken in all of them when no id names the folder', async () => {
    const run = await env.runState({
      checkout: head,
      overlay: null,
      testFiles: ['tests/test_parse.py'],
      keep: [{ module: 'tests/test_parse.py', data: ['tests/fixtures/other/create_view.yml'] }],
    });
    const targets = DIALECTS.map((d) => `tests/test_parse.py::test_parse[${d}-create_view.sql]`);
    expect(ids(run)).toEqual([...targets, ...sample(parseIds.filter((id) => !targets.includes(id)), KEEP_SAMPLE)].sort());
  });

  it('a case kept in a folder of its own is named by the folder, not by the file name every case shares', async () => {
    const run = await env.runState({
      checkout: head,
      overlay: null,
      testFiles: ['tests/test_autofix.py'],
      keep: [{ module: 'tests/test_autofix.py', data: ['tests/autofix/mysql/002_create_view/before.sql'] }],
    });
    const all = DIALECTS.flatMap((d) => NAMES.map((n, i) => `tests/test_autofix.py::test_fix[${d}-00${i}_${n}]`));
    const target = 'tests/test_autofix.py::test_fix[mysql-002_create_view]';
    expect(ids(run)).toEqual([target, ...sample(all.filter((id) => id !== target), KEEP_SAMPLE)].sort());
  });

  it('cases named <stem>_<case> are the file\'s when no id names the stem as a whole word', async () => {
    const run = await env.runState({ checkout: head, overlay: null, testFiles: ['tests/test_rules.py'], keep: [{ module: 'tests/test_rules.py', data: ['tests/rules/AL01.yml'] }] });
    const all = ['AL01_test_fail', 'AL01_test_pass', 'AL02_test_fail', 'AL02_LT01_test_pass', ...Array.from({ length: 30 }, (_, i) => `CV${String(i).padStart(2, '0')}_test`)].map(
      (c) => `tests/test_rules.py::test_rule[${c}]`,
    );
    const targets = all.slice(0, 2);
    expect(ids(run)).toEqual([...targets, ...sample(all.slice(2), KEEP_SAMPLE)].sort());
  });

  it('a module whose ids name none of its data files runs whole: it reads them some other way', async () => {
    const run = await env.runState({
      checkout: head,
      overlay: null,
      testFiles: ['tests/test_lint.py', 'tests/test_parse.py'],
      keep: [{ module: 'tests/test_lint.py', data: ['tests/data/ansi/select_a.sql'] }],
    });
    expect(ids(run)).toEqual(['tests/test_lint.py::test_lint_all', 'tests/test_lint.py::test_lint_nothing', ...parseIds].sort());
  });

  it('a probe sample runs at most n cases of each file, the same ones every time', async () => {
    const req = { checkout: head, overlay: null, testFiles: ['tests/test_many.py', 'tests/test_lint.py'], sample: 7 };
    const [a, b] = [await env.runState(req), await env.runState(req)];
    const many = Array.from({ length: 60 }, (_, i) => `tests/test_many.py::test_n${i}`);
    expect(ids(a)).toEqual([...sample(many, 7), 'tests/test_lint.py::test_lint_all', 'tests/test_lint.py::test_lint_nothing'].sort());
    expect(ids(b)).toEqual(ids(a));
  });
});
