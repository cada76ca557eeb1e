/**
 * Data files a PR changed select the test modules that read them, found in a real history's structure:
 *  - sqlfluff's layout: test/fixtures/dialects/<dialect>/*.sql read by test/dialects/dialects_test.py through
 *    `from ..conftest import get_parse_fixtures` (conftest joins "test", "fixtures", "dialects"); modules
 *    naming a sibling folder (fixtures/rules) or the dialect's name as a value are not consumers;
 *  - a module naming the file beats one naming only its folder; a folder named after the module
 *    (pytest-datadir) and a snapshot belong to that module; Django's fixtures = ["people"] in the test app;
 *  - a data file nothing reads selects nothing (never the whole suite), and many equal readers are capped.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dataConsumers, importedPaths, keepRules, MAX_DATA_CONSUMERS, reference, testRoot } from '../../../core/extract/data-consumers.ts';
import { splitPatch } from '../../../core/extract/split-patch.ts';
import { gitRepo, type GitRepo } from '../../helpers/git-repo.ts';

const CONFTEST = `import os


def get_parse_fixtures():
    out = []
    for d in os.listdir(os.path.join("test", "fixtures", "dialects")):
        out.extend((d, f) for f in os.listdir(os.path.join("test", "fixtures", "dialects", d)))
    return out
`;
const DIALECTS_TEST = `import pytest

from ..conftest import get_parse_fixtures


@pytest.mark.parametrize("dialect,file", get_parse_fixtures())
def test_parse(dialect, file):
    pass
`;
const RULES_TEST = 'import os\n\nROOT = os.path.join("test", "fixtures", "rules")\n\n\ndef test_rules():\n    assert os.path.isdir("test/fixtures/rules/std")\n';
const ANSI_TEST = 'from sqlfluff import parse\n\n\ndef test_ansi():\n    parse("select 1", dialect="ansi")\n';

describe('the test modules that read a PR\'s data files', () => {
  let repo: GitRepo;
  let base: string;

  beforeAll(async () => {
    repo = await gitRepo();
    const readers: Record<string, string> = {};
    for (let i = 0; i < MAX_DATA_CONSUMERS + 2; i++) readers[`tests/shared/test_reader${i}.py`] = 'from pathlib import Path\n\nDATA = Path(__file__).parent / "common" / "tables"\n\n\ndef test_x():\n    pass\n';
    base = await repo.commit({
      files: {
        'test/__init__.py': '',
        'test/conftest.py': CONFTEST,
        'test/dialects/__init__.py': '',
        'test/dialects/dialects_test.py': DIALECTS_TEST,
        'test/dialects/ansi_test.py': ANSI_TEST,
        'test/rules/std_test.py': RULES_TEST,
        'test/fixtures/dialects/ansi/select.sql': 'select 1\n',
        'test/fixtures/rules/std/L001.yml': 'rule: L001\n',
        'tests/loader/test_by_name.py': 'import json\n\n\ndef test_x():\n    json.load(open(HERE / "data" / "expected.json"))\n',
        'tests/loader/test_by_folder.py': 'import os\n\nDATA = os.path.join(os.path.dirname(__file__), "data")\n\n\ndef test_y():\n    pass\n',
        'tests/loader/test_unrelated.py': 'def test_z():\n    assert {"data": 1}["data"] == 1\n',
        'tests/render/test_render.py': 'def test_render(datadir):\n    pass\n',
        'tests/render/test_snap.py': 'def test_snap(snapshot):\n    pass\n',
        'tests/people/tests.py': 'class T:\n    fixtures = ["people"]\n',
        'tests/people/test_other.py': 'def test_o():\n    pass\n',
        'tests/pets/tests.py': 'class T:\n    fixtures = ["people"]\n',
        ...readers,
      },
      message: 'init',
      date: '2024-01-01T00:00:00Z',
    });
  });
  afterAll(async () => {
    await repo?.remove();
  });

  it("sqlfluff's layout: new dialect fixtures select dialects_test.py through the conftest it imports, not the modules naming a sibling folder or the dialect", async () => {
    const head = await repo.commit({
      files: { 'test/fixtures/dialects/ansi/merge.sql': 'merge into t\n', 'test/fixtures/dialects/ansi/merge.yml': 'file: merge\n', 'src/parser.py': 'MERGE = 1\n' },
      message: 'Support MERGE (#2)',
      date: '2024-01-02T00:00:00Z',
    });
    const split = await splitPatch(repo.dir, base, head);
    expect(split.testFiles).toEqual(['test/dialects/dialects_test.py']);
    expect(split.dataConsumers).toEqual({
      consumers: [{
        module: 'test/dialects/dialects_test.py',
        files: ['test/fixtures/dialects/ansi/merge.sql', 'test/fixtures/dialects/ansi/merge.yml'],
        reason: 'imports test/conftest.py, which names its folder "fixtures/dialects"',
      }],
      unreferenced: [],
      capped: null,
    });
    // The fixtures are laid over the base with the tests; the module, unchanged, runs as it is there.
    expect(split.overlayFiles).toEqual(['test/fixtures/dialects/ansi/merge.sql', 'test/fixtures/dialects/ansi/merge.yml']);
    await repo.git(['reset', '--hard', '--quiet', base]);
  });

  it('a module naming the file is taken over one naming only its folder; one naming another file of the folder, or using "data" as a value, is not a reader', async () => {
    const r = await dataConsumers(repo.dir, base, ['tests/loader/data/expected.json'], []);
    expect(r.consumers).toEqual([{ module: 'tests/loader/test_by_name.py', files: ['tests/loader/data/expected.json'], reason: 'names the file "expected.json"' }]);
    // Nothing names the file: the folder, written as a path, is the evidence; a module naming another file of it reads that one.
    const other = await dataConsumers(repo.dir, base, ['tests/loader/data/other.json'], []);
    expect(other.consumers.map((c) => [c.module, c.reason])).toEqual([['tests/loader/test_by_folder.py', 'names its folder "data"']]);
  });

  it('a folder or snapshot named after a module is its data; Django loads a fixture by its name in the test app only', async () => {
    const r = await dataConsumers(repo.dir, base, ['tests/render/test_render/golden.txt', 'tests/render/__snapshots__/test_snap.ambr', 'tests/people/fixtures/people.json'], []);
    expect(r.consumers).toEqual([
      { module: 'tests/render/test_render.py', files: ['tests/render/test_render/golden.txt'], reason: 'is named after it (tests/render/test_render/)' },
      { module: 'tests/render/test_snap.py', files: ['tests/render/__snapshots__/test_snap.ambr'], reason: 'is named after it (snapshot tests/render/__snapshots__/test_snap.ambr)' },
      { module: 'tests/people/tests.py', files: ['tests/people/fixtures/people.json'], reason: 'names "people" (the file without its extension)' },
    ]);
    expect(r.unreferenced).toEqual([]);
  });

  it('a data file no module reads selects nothing; a module the PR touched is not added again', async () => {
    const r = await dataConsumers(repo.dir, base, ['tests/loader/unused/table.csv', 'test/fixtures/rules/std/L001.yml'], ['test/rules/std_test.py']);
    expect(r).toEqual({ consumers: [], unreferenced: ['tests/loader/unused/table.csv'], capped: null });
    // Python files and files outside a test directory are never data.
    expect(await dataConsumers(repo.dir, base, ['tests/loader/helpers.py', 'data/x.json'], [])).toEqual({ consumers: [], unreferenced: [], capped: null });
  });

  it(`more than ${MAX_DATA_CONSUMERS} equal readers: the first ${MAX_DATA_CONSUMERS} by name run, and the cap is recorded`, async () => {
    const r = await dataConsumers(repo.dir, base, ['tests/shared/common/tables/t.csv'], []);
    expect(r.capped).toEqual({ found: MAX_DATA_CONSUMERS + 2, kept: MAX_DATA_CONSUMERS });
    expect(r.consumers.map((c) => c.module)).toEqual(
      Array.from({ length: MAX_DATA_CONSUMERS + 2 }, (_, i) => `tests/shared/test_reader${i}.py`).sort().slice(0, MAX_DATA_CONSUMERS),
    );
    expect(r.consumers[0]!.reason).toBe('names its folder "common/tables"');
  });

  it('a PR with no module and no reader is pr1_no_tests material: testFiles empty, the data file listed as unreferenced', async () => {
    const head = await repo.commit({ files: { 'tests/loader/unused/table.csv': 'a,b\n', 'src/x.py': 'X = 1\n' }, message: 'Add a table (#3)', date: '2024-01-03T00:00:00Z' });
    const split = await splitPatch(repo.dir, base, head);
    expect(split.testFiles).toEqual([]);
    expect(split.dataConsumers.unreferenced).toEqual(['tests/loader/unused/table.csv']);
    await repo.git(['reset', '--hard', '--quiet', base]);
  });
});

describe('reference: how a text names a data file', () => {
  const at = 'tests/test_cases.py';
  const file = 'tests/data/cases/hex.txt';
  it.each([
    ['CASES = Path(__file__).parent / "data" / "cases"', 2, 'names its folder "data/cases"'],
    ['CASES = os.path.join(HERE, "data", "cases")', 2, 'names its folder "data/cases"'],
    ['"""Every file in tests/data/cases/ is a case."""', 2, 'names its folder "data/cases"'],
    ['open(HERE / "data" / "cases" / "hex.txt")', 2, 'names the file "hex.txt"'],
    ['DATA = Path(__file__).parent / "data"', 1, 'names its folder "data"'],
    ['ROOT = "tests/data/"', 1, 'names its folder "data"'],
  ])('%s -> %i', (text, strength, what) => {
    expect(reference(text, at, file)).toEqual({ strength, what });
  });
  it.each([
    ['OTHER = "data/other/hex2.txt"'],
    ['open("other/hex.txt")'],
    ['payload = {"data": 1}; x = resp["data"]'],
    ['import data.cases_helpers'],
    ['CASES = "data/cases/oct.txt"'],
  ])('%s -> none', (text) => {
    expect(reference(text, at, file)).toBeNull();
  });
});

describe('testRoot and importedPaths', () => {
  it('the test directory: a tests/ folder anywhere, test/ or spec/ at the top', () => {
    expect(testRoot('test/fixtures/a.sql')).toBe('test');
    expect(testRoot('pkg/tests/data/a.json')).toBe('pkg/tests');
    expect(testRoot('pkg/test/data/a.json')).toBeNull();
    expect(testRoot('tests')).toBeNull();
  });
  it('relative imports by Python\'s rules, absolute ones from each enclosing folder', () => {
    const text = 'from ..conftest import (\n    a,\n    b,\n)\nfrom .util import load\nfrom . import helpers\nimport tests.common as c\n';
    const paths = importedPaths('test/dialects/x_test.py', text);
    expect(paths).toEqual(expect.arrayContaining(['test/conftest.py', 'test/dialects/util.py', 'test/dialects/helpers.py', 'tests/common.py', 'tests/common/__init__.py']));
    expect(paths).not.toContain('test/dialects/conftest.py');
  });
});

describe('keepRules', () => {
  it('one rule per module, reading every file any of its references found', () => {
    const consumers = [
      { module: 'test/rules/std_fix_auto_test.py', files: ['test/fixtures/autofix/sqlite/001/before.sql'], reason: 'names the file "before.sql"' },
      { module: 'test/rules/std_test.py', files: ['test/fixtures/autofix/sqlite/001/after.sql'], reason: 'names its folder "fixtures/autofix"' },
      { module: 'test/rules/std_fix_auto_test.py', files: ['test/fixtures/autofix/sqlite/001/after.sql', 'test/fixtures/autofix/sqlite/001/before.sql'], reason: 'names the file "after.sql"' },
    ];
    expect(keepRules({ consumers })).toEqual([
      { module: 'test/rules/std_fix_auto_test.py', data: ['test/fixtures/autofix/sqlite/001/after.sql', 'test/fixtures/autofix/sqlite/001/before.sql'] },
      { module: 'test/rules/std_test.py', data: ['test/fixtures/autofix/sqlite/001/after.sql'] },
    ]);
  });
});
