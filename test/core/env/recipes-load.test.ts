/**
 * Recipes without Docker: the schema and its error messages, the shipped recipe files, detection on
 * generated repositories (real git), globs, ignored tests, and reading the pip configuration.
 */
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ForesightError } from '../../../core/foundation/errors.ts';
import { clearSecrets, redact } from '../../../core/foundation/secrets.ts';
import { parsePipConfigList, pipSources } from '../../../core/env/image/pip-sources.ts';
import { declaredExtras, detectRecipe } from '../../../core/env/recipes/detect.ts';
import { matchesGlob } from '../../../core/foundation/glob.ts';
import { loadRecipe, parseRecipe, RECIPES_DIR, recipeFileName } from '../../../core/env/recipes/load.ts';
import { eraTestRules } from '../../../core/env/era.ts';
import { DEFAULT_DEPENDENCY_FILES, filterTestFiles, isIgnoredTest, RecipeSchema, runnerNames } from '../../../core/env/recipes/schema.ts';
import { runners } from '../../../core/env/runners/registry.ts';
import { gitRepo, type GitRepo } from '../../helpers/git-repo.ts';

const DATE = '2024-01-01T00:00:00Z';
/** A 2024 commit gets pytest 8 (detect.ts pytestFor). */
const PYTEST_8 = "pip install 'pytest<9'";
const cleanups: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const c of cleanups) await c();
});

async function repoWith(files: Record<string, string>): Promise<{ repo: GitRepo; sha: string }> {
  const repo = await gitRepo();
  cleanups.push(() => repo.remove());
  const sha = await repo.commit({ files, message: 'init', date: DATE });
  return { repo, sha };
}

async function tempDir(): Promise<string> {
  const d = await mkdtemp(path.join(tmpdir(), 'foresight-recipes-'));
  cleanups.push(() => rm(d, { recursive: true, force: true }));
  return d;
}

function thrown(fn: () => unknown): ForesightError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ForesightError);
    return err as ForesightError;
  }
  throw new Error('expected a ForesightError');
}

describe('recipe schema and files', () => {
  it('fills defaults', () => {
    const r = RecipeSchema.parse({ runner: 'pytest' });
    expect(r).toEqual({
      runner: 'pytest',
      python: 'auto',
      systemPackages: [],
      install: [],
      dependencyFiles: [...DEFAULT_DEPENDENCY_FILES],
      env: {},
      ignoreTests: [],
      backends: ['sqlite'],
    });
  });

  it('a broken recipe file is a ForesightError naming the file and the field', () => {
    const file = '/x/acme__widget.json';
    const err = thrown(() =>
      parseRecipe(JSON.stringify({ runner: 'nose', install: 'pip install -e .', instal: [], env: { 'BAD-NAME': 'x' } }), file),
    );
    expect(err.message).toContain(file);
    expect(err.message).toContain('field "runner"');
    expect(err.message).toContain('field "install"');
    expect(err.message).toContain('field "env.BAD-NAME"');
    expect(err.message).toContain('unknown field(s) "instal"');
    expect(err.remedy).toContain(`fix runner`);
    expect(err.remedy).toContain(file);
    // The runner names come from the runner registry, not from a second list.
    expect(err.remedy).toContain(`runner ${[...runners.keys()].map((n) => `'${n}'`).join('|')},`);
    expect(err.remedy).toContain(`runner 'pytest'|'django'|`);
    expect(err.message).toMatch(/field "runner": .*"pytest".*"django"/);
    const nested = thrown(() => parseRecipe(JSON.stringify({ runner: 'pytest', systemPackages: ['ok-pkg', 'Bad Pkg'] }), file));
    expect(nested.message).toContain('field "systemPackages[1]"');
    const json = thrown(() => parseRecipe('{ "runner": ', file));
    expect(json.message).toMatch(/not valid JSON/);
  });

  it('accepts exactly the runners the registry knows', () => {
    expect(runnerNames()).toEqual([...runners.keys()]);
    for (const name of runners.keys()) expect(RecipeSchema.parse({ runner: name }).runner).toBe(name);
    expect(RecipeSchema.safeParse({ runner: 'nose' }).success).toBe(false);
  });

  it('loadRecipe reads the repository file, and throws on a broken one', async () => {
    const dir = await tempDir();
    await writeFile(path.join(dir, 'acme__widget.json'), JSON.stringify({ runner: 'django', python: '3.11', install: ['pip install -e .'] }));
    const ok = await loadRecipe('acme/widget', '/nonexistent', 'HEAD', { dir });
    expect(ok.source).toBe('file');
    expect(ok.file).toBe(path.join(dir, 'acme__widget.json'));
    expect(ok.recipe.runner).toBe('django');
    await writeFile(path.join(dir, 'acme__broken.json'), JSON.stringify({ runner: 'pytest', dependencyFiles: ['/etc/passwd'] }));
    const err = await loadRecipe('acme/broken', '/nonexistent', 'HEAD', { dir }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ForesightError);
    expect((err as Error).message).toContain('field "dependencyFiles[0]"');
    expect(() => recipeFileName('../etc')).toThrow(ForesightError);
    expect(recipeFileName('django/django')).toBe('django__django.json');
  });

  it("recipes 'detect' (FORESIGHT_RECIPES=detect) ignores the repository's file, even a broken one, and detects", async () => {
    const dir = await tempDir();
    await writeFile(path.join(dir, 'acme__widget.json'), JSON.stringify({ runner: 'django', python: '3.11', install: ['pip install -e .'] }));
    await writeFile(path.join(dir, 'acme__broken.json'), '{ not json');
    const { repo, sha } = await repoWith({ 'pyproject.toml': '[project]\nname = "w"\n[project.optional-dependencies]\ntest = ["pytest"]\n' });
    for (const name of ['acme/widget', 'acme/broken']) {
      const got = await loadRecipe(name, repo.dir, sha, { dir, recipes: 'detect' });
      expect(got.source).toBe('detected');
      expect(got.file).toBeNull();
      expect(got.reasons[0]).toContain('FORESIGHT_RECIPES=detect');
      expect(got.recipe.runner).toBe('pytest');
      expect(got.candidates[0].label).toMatch(/ \.\[test\]$/);
    }
    expect((await loadRecipe('acme/widget', repo.dir, sha, { dir, recipes: 'shipped' })).source).toBe('file');
  });

  it('every shipped recipe file is valid', async () => {
    const files = (await readdir(RECIPES_DIR)).filter((f) => f.endsWith('.json'));
    expect(files).toEqual(expect.arrayContaining(['django__django.json', 'demo__minilib.json']));
    // Django's python is "auto": read from the commit (a Django 4.2-like setup.cfg: 3.11 first, 3.9 after).
    const { repo, sha } = await repoWith({
      'setup.cfg': '[metadata]\nclassifiers =\n    Programming Language :: Python :: 3.8\n    Programming Language :: Python :: 3.11\n[options]\npython_requires = >=3.8\n',
    });
    const django = await loadRecipe('django/django', repo.dir, sha);
    expect(django.recipe.runner).toBe('django');
    expect(django.candidates.map((c) => c.recipe.python)).toEqual(['3.11', '3.9', '3.13']);
    // Django alone (its dependencies come from the next lines, or Debian's packages on 3.9).
    expect(django.recipe.install[0]).toMatch(/^pip install --no-deps -e \. \|\| .*--no-build-isolation --no-deps -e \./);
    expect(django.recipe.install.join(' ')).toMatch(/asgiref.*sqlparse/);
    expect(django.recipe.dependencyFiles).toContain('tests/requirements/py3.txt');
    const demo = await loadRecipe('demo/minilib', '/nonexistent', 'HEAD');
    expect(demo.recipe.runner).toBe('pytest');
    expect(demo.recipe.ignoreTests).toEqual([]); // its flaky test must stay graded
  });
});

describe('recipe detection (real git, no checkout)', () => {
  it('pyproject with a test extra', async () => {
    const { repo, sha } = await repoWith({
      'pyproject.toml': '[build-system]\nrequires = ["setuptools"]\n\n[project]\nname = "p"\n\n[project.optional-dependencies]\ndocs = ["sphinx"]\ntest = ["pytest"]\n',
      'p/__init__.py': '',
    });
    const loaded = await loadRecipe('acme/none', repo.dir, sha, { dir: await tempDir() });
    expect(loaded.source).toBe('detected');
    expect(loaded.recipe.runner).toBe('pytest');
    expect(loaded.recipe.install).toEqual(["pip install -e '.[test]'", PYTEST_8]);
  });

  it('setup.py with a dev extra and a test requirements file', async () => {
    const { repo, sha } = await repoWith({
      'setup.py': 'from setuptools import setup\nsetup(name="p", extras_require={"dev": ["black"], "yaml": ["pyyaml"]})\n',
      'requirements-test.txt': 'pytest\n',
      'requirements.txt': 'attrs\n',
    });
    const { recipe, reasons } = await detectRecipe(repo.dir, sha);
    expect(recipe.install).toEqual(["pip install -e '.[dev]'", 'pip install -r requirements-test.txt', PYTEST_8]);
    expect(reasons.join('\n')).toContain('setup.py');
  });

  it('Django-style tests/runtests.py', async () => {
    const { repo, sha } = await repoWith({
      'pyproject.toml': '[build-system]\nrequires = ["setuptools>=40.8.0"]\nbuild-backend = "setuptools.build_meta"\n',
      'tests/runtests.py': '#!/usr/bin/env python\n',
      'tests/requirements/py3.txt': 'asgiref\n',
    });
    const { recipe } = await detectRecipe(repo.dir, sha);
    expect(recipe.runner).toBe('django');
    expect(recipe.install).toEqual(['pip install -e .']);
    expect(recipe.dependencyFiles).toContain('tests/requirements/*.txt');
  });

  it('no installable project: requirements.txt and pytest; tool-only pyproject is not installed', async () => {
    const { repo, sha } = await repoWith({
      'pyproject.toml': '[tool.pytest.ini_options]\ntestpaths = ["tests"]\n',
      'requirements.txt': 'sqlparse\n',
      'tests/test_a.py': 'def test_a():\n    pass\n',
    });
    const { recipe } = await detectRecipe(repo.dir, sha);
    expect(recipe.install).toEqual(['pip install -r requirements.txt', PYTEST_8]);
    const bare = await repoWith({ 'tests/test_a.py': 'def test_a():\n    pass\n' });
    expect((await detectRecipe(bare.repo.dir, bare.sha)).recipe.install).toEqual([PYTEST_8]);
  });

  it('reads extras from setup.cfg and inline pyproject tables', () => {
    expect(declaredExtras({ setupCfg: '[metadata]\nname = p\n\n[options.extras_require]\ntesting =\n    pytest\ndocs = sphinx\n' })).toEqual([
      'testing',
      'docs',
    ]);
    expect(declaredExtras({ pyproject: '[project]\nname="p"\noptional-dependencies = { tests = ["pytest"] }\n' })).toContain('tests');
    // pytest's own form: dotted keys inside [project]; the same keys under another table are not extras.
    const dotted = '[project]\nname = "p"\noptional-dependencies.dev = [\n  "hypothesis",\n]\nurls.Source = "x"\n[tool.x]\noptional-dependencies.lint = []\n';
    expect(declaredExtras({ pyproject: dotted })).toEqual(['dev']);
    // Set by subscript on a dict defined elsewhere (attrs, 2021); a comparison is not an assignment.
    const subscript = 'EXTRAS = {"docs": ["sphinx"], "tests_no_zope": ["hypothesis"]}\nEXTRAS["tests"] = EXTRAS["tests_no_zope"] + ["zope"]\nEXTRAS["dev"] = EXTRAS["tests"]\nif EXTRAS["testing"] == 1: pass\nsetup(extras_require=EXTRAS)\n';
    expect(declaredExtras({ setupPy: subscript }).sort()).toEqual(['dev', 'tests']);
  });

  it('reads pyproject extras as TOML: quoted keys, multi-line arrays with comments, Poetry extras; invalid TOML declares none', () => {
    const quoted = "[project]\nname = 'p'\n\n[project.'optional-dependencies']\n'test' = [\n  'pytest',  # test = [\"x\"]\n  # dev = []\n]\n\"docs\" = ['sphinx']\n";
    expect(declaredExtras({ pyproject: quoted })).toEqual(['test', 'docs']);
    expect(declaredExtras({ pyproject: '[tool.poetry.extras]\ntesting = ["pytest"]\n' })).toEqual(['testing']);
    // An inline table of another table is no extra of the project.
    expect(declaredExtras({ pyproject: '[project]\nname = "p"\n[tool.x]\noptional-dependencies = { dev = ["y"] }\n' })).toEqual([]);
    expect(() => declaredExtras({ pyproject: '[project]\noptional-dependencies = { test = ["pytest"]\n' })).not.toThrow();
    expect(declaredExtras({ pyproject: '[project]\noptional-dependencies = { test = ["pytest"]\n', setupCfg: '[options.extras_require]\ntests = pytest\n' })).toEqual(['tests']);
  });

  it('a pyproject with a single-quoted [project] table and a test extra is installed with it', async () => {
    const { repo, sha } = await repoWith({
      'pyproject.toml': "[build-system]\n'requires' = ['setuptools']\n\n['project']\n'name' = 'p'\n\n[project.optional-dependencies]\n'test' = [\n  'pytest',\n]\n",
    });
    expect((await detectRecipe(repo.dir, sha)).recipe.install).toEqual(["pip install -e '.[test]'", PYTEST_8]);
  });
});

describe('globs and test filters', () => {
  it('matches paths from the repository root', () => {
    expect(matchesGlob('requirements-dev.txt', 'requirements*.txt')).toBe(true);
    expect(matchesGlob('docs/requirements.txt', 'requirements*.txt')).toBe(false);
    expect(matchesGlob('docs/requirements.txt', '**/requirements*.txt')).toBe(true);
    expect(matchesGlob('requirements.txt', '**/requirements*.txt')).toBe(true);
    expect(matchesGlob('tests/requirements/py3.txt', 'tests/requirements/*.txt')).toBe(true);
    expect(matchesGlob('setup.cfg', '{setup.cfg,tox.ini}')).toBe(true);
    expect(matchesGlob('setupXcfg', 'setup.cfg')).toBe(false);
    expect(matchesGlob('a/b/c.py', 'a/**')).toBe(true);
  });

  it('ignoreTests and testFiles', () => {
    const r = RecipeSchema.parse({
      runner: 'pytest',
      ignoreTests: ['tests/test_net.py', 'tests/test_a.py::test_slow', 'admin_views.tests.Slow', 'tests/gui/**'],
      testFiles: ['tests/**/test_*.py'],
    });
    expect(isIgnoredTest(r, 'tests/test_net.py::test_x')).toBe(true);
    expect(isIgnoredTest(r, 'tests/test_a.py::test_slow')).toBe(true);
    expect(isIgnoredTest(r, 'tests/test_a.py::test_slow[1-2]')).toBe(true);
    expect(isIgnoredTest(r, 'tests/test_a.py::test_slower')).toBe(false);
    expect(isIgnoredTest(r, 'admin_views.tests.Slow.test_y')).toBe(true);
    expect(isIgnoredTest(r, 'admin_views.tests.Slowish.test_y')).toBe(false);
    expect(isIgnoredTest(r, 'tests/gui/test_w.py::test_z')).toBe(true);
    expect(filterTestFiles(r, ['tests/test_a.py', 'tests/sub/test_b.py', 'docs/conf.py'])).toEqual(['tests/test_a.py', 'tests/sub/test_b.py']);
    expect(filterTestFiles(RecipeSchema.parse({ runner: 'pytest' }), ['x.py'])).toEqual(['x.py']);
  });
});

describe('pip configuration', () => {
  it('parses `pip config list`', () => {
    const m = parsePipConfigList(":env:.find-links='/w'\nglobal.extra-index-url='file:///a/simple file:///b/simple'\nnoise\n");
    expect(m.get(':env:.find-links')).toBe('/w');
    expect(m.get('global.extra-index-url')).toBe('file:///a/simple file:///b/simple');
  });

  it('mounts local sources only, with the root of an index whose pages link outside it', async () => {
    const root = await tempDir();
    await mkdir(path.join(root, 'repo/simple/pkg'), { recursive: true });
    await mkdir(path.join(root, 'repo/files'), { recursive: true });
    await writeFile(path.join(root, 'repo/simple/pkg/index.html'), '<a href="../../files/pkg-1.0-py3-none-any.whl#sha256=00">pkg</a>');
    await mkdir(path.join(root, 'wheels'));
    await writeFile(path.join(root, 'constraints.txt'), 'pkg<2\n');
    const cfg = new Map([
      ['global.index-url', 'https://pypi.example.invalid/simple'],
      ['global.extra-index-url', `file://${root}/repo/simple`],
      ['global.find-links', `${root}/wheels ${root}/missing`],
      ['global.constraint', `${root}/constraints.txt`],
      [':env:.find-links', `${root}/wheels`],
    ]);
    const s = await pipSources(cfg);
    expect(s.binds).toEqual([`${root}/constraints.txt:${root}/constraints.txt:ro`, `${root}/repo:${root}/repo:ro`, `${root}/wheels:${root}/wheels:ro`]);
    expect(s.env).toContain(`PIP_INDEX_URL=file://${root}/repo/simple`);
    expect(s.env).toContain(`PIP_FIND_LINKS=${root}/wheels`);
    expect(s.env).toContain(`PIP_CONSTRAINT=${root}/constraints.txt`);
    expect(s.env.join(' ')).not.toContain('example.invalid');
    expect(s.notes.join('\n')).toContain('remote, not used');
    const none = await pipSources(new Map());
    expect(none.env).toContain('PIP_NO_INDEX=1');
    expect(none.binds).toEqual([]);
  });

  it('credentials in a pip index URL never reach the env-build log', async () => {
    const s = await pipSources(new Map([['global.index-url', 'https://builder:idx-s3cret-pw@pypi.example.invalid/simple']]));
    const notes = s.notes.join('\n');
    expect(notes).toContain('https://pypi.example.invalid/simple');
    expect(notes).not.toContain('idx-s3cret-pw');
    // Registered as a secret: pip's own output quoting the URL is redacted wherever it is written.
    expect(redact('Looking in indexes: https://builder:idx-s3cret-pw@pypi.example.invalid/simple')).not.toContain('idx-s3cret-pw');
    clearSecrets();
  });
});

describe("eraTestRules: what decides an era's test files, from the commit alone", () => {
  it('detected install candidates share pytest: their rules; the shipped Django recipe: its runner and backends; an explicit image: the configured runner', async () => {
    const { repo, sha } = await repoWith({ 'pyproject.toml': '[project]\nname = "x"\nversion = "1"\n', 'x.py': '', 'tests/test_x.py': 'def test_x():\n    pass\n' });
    const detected = await eraTestRules({ repo: 'gen/x', clone: repo.dir, recipes: 'detect', image: null, runner: 'pytest' }, sha);
    expect(detected?.runner.name).toBe('pytest');
    const django = await eraTestRules({ repo: 'django/django', clone: repo.dir, recipes: 'shipped', image: null, runner: 'pytest' }, sha);
    expect(django?.runner.name).toBe('django');
    expect(django?.recipe.backends).toEqual(['sqlite', 'postgresql', 'mysql']);
    const image = await eraTestRules({ repo: 'django/django', clone: repo.dir, recipes: 'shipped', image: 'some-image', runner: 'pytest' }, sha);
    expect(image?.runner.name).toBe('pytest');
    expect(image?.recipe.runner).toBe('pytest');
  });
});
