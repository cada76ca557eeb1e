/**
 * Detected recipes that verify themselves: the install candidates, in order, and the
 * choice of the first that installs, on real git repositories and real Docker (offline builds). A dev
 * extra naming a package the offline wheels lack is rejected; the choice file records the chosen and the
 * rejected candidates and the next run reuses it without building the rejected one again.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  applyCachePolicy,
  backendUnavailable,
  CHOICE_FILE,
  connectDocker,
  detectCandidates,
  EnvChoices,
  EnvImages,
  ensureBaseImage,
  installScript,
  isDockerReachable,
  rejectionReason,
} from '../../../core/env/index.ts';
import { bestEffortEach, bestEffortExtra, bestEffortFile, buildRequires, dependencyGroups, pytestFor } from '../../../core/env/recipes/detect.ts';
import { loadRecipe } from '../../../core/env/recipes/load.ts';
import { requiresPython } from '../../../core/env/recipes/python-era.ts';
import { gitRepo, type GitRepo } from '../../helpers/git-repo.ts';

const docker = connectDocker();
const reachable = await isDockerReachable(docker);
const skip = !reachable && !process.env['CI'];
if (skip) console.warn('[recipe-candidates.test] SKIPPED: Docker is not reachable and CI is unset');

const DATE = '2024-01-01T00:00:00Z';
/** The pytest of a 2024 commit: before pytest 9, whose removals older suites trip on. */
const PYTEST_8 = "pip install 'pytest<9'";
/** New dependency files each run: the builds really build. */
const NONCE = randomBytes(6).toString('hex');

const setuptoolsProject = (extras: Record<string, string[]>): string =>
  [
    '[build-system]',
    'requires = ["setuptools>=61"]',
    'build-backend = "setuptools.build_meta"',
    '',
    '[project]',
    'name = "tinypkg"',
    'version = "0.1.0"',
    `description = "foresight candidates test ${NONCE}"`,
    '',
    '[project.optional-dependencies]',
    ...Object.entries(extras).map(([k, v]) => `${k} = [${v.map((d) => JSON.stringify(d)).join(', ')}]`),
    '',
    '[tool.setuptools]',
    'packages = ["tinypkg"]',
    '',
  ].join('\n');

describe('install candidates (detection)', () => {
  const repos: GitRepo[] = [];
  afterAll(async () => {
    for (const r of repos) await r.remove();
  });
  const repoWith = async (files: Record<string, string>): Promise<{ dir: string; sha: string }> => {
    const repo = await gitRepo();
    repos.push(repo);
    return { dir: repo.dir, sha: await repo.commit({ files, message: 'init', date: DATE }) };
  };

  it('dev extra, then test, then the bare project with the requirements file, then pytest alone; then without isolation', async () => {
    const { dir, sha } = await repoWith({
      'pyproject.toml': setuptoolsProject({ test: ['pytest'], dev: ['black'], docs: ['sphinx'] }),
      'requirements-test.txt': 'pytest\n',
      'tinypkg/__init__.py': '',
    });
    const { candidates } = await detectCandidates(dir, sha);
    expect(candidates.map((c) => c.label)).toEqual([
      '.[dev] + requirements-test.txt',
      '.[test] + requirements-test.txt',
      '. + installable [dev] + requirements-test.txt',
      '. + installable [test] + requirements-test.txt',
      '. + requirements-test.txt',
      '. + installable requirements-test.txt',
      '. + pytest',
      'no-isolation .[dev] + requirements-test.txt',
      'no-isolation .[test] + requirements-test.txt',
      'no-isolation . + installable [dev] + requirements-test.txt',
      'no-isolation . + installable [test] + requirements-test.txt',
      'no-isolation . + requirements-test.txt',
      'no-isolation . + installable requirements-test.txt',
      'no-isolation . + pytest',
    ]);
    expect(candidates[6]!.recipe.install).toEqual(['pip install -e .', PYTEST_8]);
    expect(candidates[5]!.recipe.install).toEqual(['pip install -e .', bestEffortFile('requirements-test.txt'), PYTEST_8]);
    expect(candidates[2]!.recipe.install).toEqual(['pip install -e .', bestEffortExtra('dev'), 'pip install -r requirements-test.txt', PYTEST_8]);
    expect(candidates[7]!.recipe.install).toEqual([
      'pip install setuptools wheel',
      "pip install --no-build-isolation -e '.[dev]'",
      'pip install -r requirements-test.txt',
      PYTEST_8,
    ]);
    expect(candidates.map((c) => c.isolated)).toEqual([...Array(7).fill(true), ...Array(7).fill(false)]);
  });

  it('3.9\'s venv sees Debian\'s packages (the offline wheels lack the backports pytest needs there); 3.11\'s does not', () => {
    expect(installScript({ runner: 'pytest', install: [], python: '3.9' })).toContain('python3 -m venv --system-site-packages /opt/venv ||');
    expect(installScript({ runner: 'pytest', install: [], python: '3.11' })).toContain('python3 -m venv /opt/venv ||');
    expect(installScript({ runner: 'pytest', install: [], python: '3.11' })).not.toContain('system-site');
  });

  it('PEP 735 dependency groups (no extras): each test/dev group is installed one requirement at a time, includes resolved', async () => {
    const groups = dependencyGroups([
      '[project]', 'name = "g"', '', '[dependency-groups]',
      'tests-extra = [\'cloudpickle; platform_python_implementation == "CPython"\']',
      'tests = [', '  { include-group = "tests-extra" },', '  # a comment', '  "hypothesis",', '  "pympler",', ']',
      'dev = [{ include-group = "tests" }]', 'docs = ["sphinx"]', '', '[tool.x]', 'y = ["z"]', '',
    ].join('\n'));
    expect(groups.get('tests')).toEqual(['cloudpickle; platform_python_implementation == "CPython"', 'hypothesis', 'pympler']);
    expect(groups.get('dev')).toEqual(groups.get('tests'));
    expect(groups.has('y')).toBe(false);
    const { dir, sha } = await repoWith({
      'pyproject.toml': '[build-system]\nrequires = ["hatchling"]\nbuild-backend = "hatchling.build"\n\n[project]\nname = "g"\nversion = "1"\n\n[dependency-groups]\ntests = ["hypothesis"]\ndev = [{ include-group = "tests" }]\n',
    });
    const { candidates } = await detectCandidates(dir, sha);
    // dev and tests resolve to the same requirements: one candidate.
    expect(candidates.slice(0, 2).map((c) => c.label)).toEqual(['. + installable group dev', '.']);
    expect(candidates[0]!.recipe.install).toEqual(['pip install -e .', bestEffortEach(['hypothesis']), PYTEST_8]);
    expect(bestEffortEach(['a b'])).toMatch(/; for r in 'a b'; do try_req "\$r"; done$/);
  });

  it('an installable project whose only requirements file is a top-level requirements.txt (exact pins, dev tools) gets it line by line', async () => {
    const { dir, sha } = await repoWith({
      'pyproject.toml': '[build-system]\nrequires = ["hatchling"]\nbuild-backend = "hatchling.build"\n\n[project]\nname = "r"\nversion = "1"\n',
      'requirements.txt': '-e .[full]\npytest==8.4.1\n',
    });
    const { candidates } = await detectCandidates(dir, sha);
    expect(candidates.slice(0, 2).map((c) => c.label)).toEqual(['.', '. + installable requirements.txt']);
    expect(candidates[1]!.recipe.install).toEqual(['pip install -e .', bestEffortFile('requirements.txt'), PYTEST_8]);
  });

  it('a commit from before pytest 9 gets pytest 8 (its py.path hook arguments are gone in 9); a later one the newest', () => {
    expect(pytestFor('2025-11-07T23:00:00+01:00')).toBe(PYTEST_8);
    expect(pytestFor('2026-01-05T10:00:00Z')).toBe('pip install pytest');
  });

  it('the build backend is installed unpinned, with editables for hatchling', () => {
    const py = '[build-system]\nrequires = [\n  "hatchling>=1.5,<2",\n  \'hatch-vcs\',\n]\nbuild-backend = "hatchling.build"\n\n[project]\nname = "x"\n';
    expect(buildRequires(py)).toEqual(['hatchling', 'hatch-vcs']);
    expect(buildRequires('[project]\nname = "x"\n[build-system]\nrequires = ["flit_core >=3.2,<4"]\n')).toEqual(['flit_core']);
  });

  it('build requires are read as TOML: extras, single quotes, multi-line arrays with comments', () => {
    // `[toml]` closes no array: all three requirements, by name (the backend is installed unpinned).
    expect(buildRequires('[build-system]\nrequires = ["setuptools_scm[toml]>=6.2", "wheel", "cython"]\n')).toEqual(['setuptools_scm', 'wheel', 'cython']);
    expect(buildRequires("[build-system]\n'requires' = ['flit_core >=3.2,<4', \"wheel; python_version < '3.8'\"]\n")).toEqual(['flit_core', 'wheel']);
    const commented = ['[build-system]', 'requires = [', '  # "old-backend" is gone', '  "setuptools>=61",  # "wheel" is not needed', "  'setuptools',", ']', 'build-backend = "setuptools.build_meta"', ''].join('\n');
    expect(buildRequires(commented)).toEqual(['setuptools']);
    // Only [build-system] counts, not a `requires` of another table.
    expect(buildRequires('[tool.x]\nrequires = ["y"]\n[build-system]\nrequires = []\n')).toEqual([]);
  });

  it('the no-isolation candidates install every build requirement of `setuptools_scm[toml]>=6.2, wheel, cython`', async () => {
    const { dir, sha } = await repoWith({
      'pyproject.toml': '[build-system]\nrequires = ["setuptools_scm[toml]>=6.2", "wheel", "cython"]\nbuild-backend = "setuptools.build_meta"\n\n[project]\nname = "s"\ndynamic = ["version"]\n',
    });
    const { candidates } = await detectCandidates(dir, sha);
    expect(candidates.map((c) => c.label)).toEqual(['.', 'no-isolation .']);
    expect(candidates[1]!.recipe.install).toEqual(['pip install setuptools_scm wheel cython setuptools', 'pip install --no-build-isolation -e .', PYTEST_8]);
  });

  it('dependency groups are read as TOML: single quotes, multi-line arrays, comments holding quotes', () => {
    const groups = dependencyGroups(
      ["[dependency-groups]", "'test' = [", "  'pytest>=8',  # \"pytest-xdist\" later", '  # "hypothesis"', '  {include-group = \'lint\'},', ']', 'lint = ["ruff"]', ''].join('\n'),
    );
    expect(groups.get('test')).toEqual(['pytest>=8', 'ruff']);
    expect([...groups.keys()]).toEqual(['test', 'lint']);
  });

  it('a pyproject.toml that is not valid TOML declares nothing, and detection does not throw', async () => {
    const broken = '[build-system\nrequires = ["setuptools"\n\n[project]\nname = "b"\n';
    expect(buildRequires(broken)).toEqual([]);
    expect(dependencyGroups(broken).size).toBe(0);
    expect(requiresPython({ pyproject: '[project]\nrequires-python = >=3.9\n' })).toBeNull();
    expect(requiresPython({ pyproject: '[project]\nrequires-python = >=3.9\n', setupCfg: '[options]\npython_requires = >=3.7\n' })).toBe('>=3.7');
    // Not installable from the pyproject alone (pip could not read it either): pytest only.
    const alone = await repoWith({ 'pyproject.toml': broken, 'tests/test_a.py': 'def test_a():\n    pass\n' });
    expect((await detectCandidates(alone.dir, alone.sha)).candidates.map((c) => c.recipe.install)).toEqual([[PYTEST_8]]);
    // A setup.py still makes the project installable.
    const withSetup = await repoWith({ 'pyproject.toml': broken, 'setup.py': 'from setuptools import setup\nsetup()\n' });
    expect((await detectCandidates(withSetup.dir, withSetup.sha)).candidates.map((c) => c.label)).toEqual(['.', 'no-isolation .']);
    expect((await detectCandidates(withSetup.dir, withSetup.sha)).candidates[1]!.recipe.install[0]).toBe('pip install setuptools wheel');
  });

  it('a Django-style suite and a project with nothing to install', async () => {
    const dj = await repoWith({ 'setup.py': 'from setuptools import setup\nsetup()\n', 'tests/runtests.py': '' });
    expect((await detectCandidates(dj.dir, dj.sha)).candidates.map((c) => c.label)).toEqual(['.', 'no-isolation .']);
    const bare = await repoWith({ 'tests/test_a.py': 'def test_a():\n    pass\n' });
    expect((await detectCandidates(bare.dir, bare.sha)).candidates.map((c) => c.recipe.install)).toEqual([[PYTEST_8]]);
  });

  it('a rejection is named by pip\'s error line, and a missing build backend is recognised', () => {
    const detail = [
      'Collecting autoflake-nonexistent-xyz',
      'ERROR: Could not find a version that satisfies the requirement autoflake-nonexistent-xyz (from tinypkg[dev]) (from versions: none)',
      'ERROR: No matching distribution found for autoflake-nonexistent-xyz',
      "[foresight] FAILED (exit 1): pip install -e '.[dev]'",
    ].join('\n');
    expect(rejectionReason(detail)).toBe('ERROR: No matching distribution found for autoflake-nonexistent-xyz');
    const conflict = 'ERROR: Cannot install pytest==8.4.2 and pytest==9.1.1 because these package versions have conflicting dependencies.\n\nERROR: ResolutionImpossible: for help visit https://pip.pypa.io/x';
    expect(rejectionReason(conflict)).toMatch(/^ERROR: Cannot install pytest/);
    const py2 = "      SyntaxError: multiple exception types must be parenthesized\n  note: This error originates from a subprocess\nerror: metadata-generation-failed\n× Encountered error while generating package metadata.";
    expect(rejectionReason(py2)).toBe('SyntaxError: multiple exception types must be parenthesized');
    expect(backendUnavailable(detail)).toBe(false);
    expect(backendUnavailable("  Installing build dependencies: finished with status 'error'\nerror: subprocess-exited-with-error")).toBe(true);
  });
});

// Concurrent: each test has a repository and choice file of its own, and builds images no other test builds.
describe.skipIf(skip).concurrent('detected recipes that verify themselves (real Docker, offline)', () => {
  const repos: GitRepo[] = [];
  let dataDir: string;
  let logDir: string;
  const made = new Set<string>();
  const ownRepo = async (): Promise<GitRepo> => {
    const repo = await gitRepo();
    repos.push(repo);
    return repo;
  };

  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(tmpdir(), 'foresight-choices-'));
    logDir = path.join(dataDir, 'env-logs');
    // The default base (bookworm) is built here when missing (about 90 s), not inside a test's time.
    await ensureBaseImage({ log: (c) => process.stderr.write(c) });
  });
  afterAll(async () => {
    if (made.size) await applyCachePolicy('base', { used: [...made] });
    await Promise.all(repos.map((r) => r.remove()));
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  const req = (repo: GitRepo, commit: string, lines: string[]) => ({
    clone: repo.dir,
    repo: 'acme/tinypkg',
    commit,
    logDir,
    log: (c: string) => void lines.push(c),
  });

  it('a dev extra the offline wheels cannot satisfy is rejected, .[test] is chosen, and the next run reuses the choice', async () => {
    const repo = await ownRepo();
    const sha = await repo.commit({
      files: {
        'pyproject.toml': setuptoolsProject({ dev: ['autoflake-nonexistent-xyz', 'pytest'], test: ['pytest'] }),
        'tinypkg/__init__.py': 'X = 1\n',
        'tests/test_x.py': 'from tinypkg import X\n\n\ndef test_x():\n    assert X == 1\n',
      },
      message: 'dev extra with a missing tool',
      date: DATE,
    });
    // Through loadRecipe (no recipe file): each install on each Python, 3.11 first (2024, no version named).
    const { candidates, source } = await loadRecipe('acme/tinypkg', repo.dir, sha, { dir: dataDir });
    expect(source).toBe('detected');
    expect(candidates.slice(0, 2).map((c) => c.label)).toEqual(['py3.11 .[dev]', 'py3.11 .[test]']);
    expect(candidates.map((c) => c.recipe.python)).toEqual([...Array(10).fill('3.11'), ...Array(10).fill('3.9'), ...Array(10).fill('3.13')]);
    const file = path.join(dataDir, CHOICE_FILE);

    const lines1: string[] = [];
    const first = await new EnvChoices(file).choose({ images: new EnvImages({ docker }), req: req(repo, sha, lines1), candidates });
    expect(first.kind).toBe('ready');
    if (first.kind !== 'ready') return;
    made.add(first.result.image);
    expect(first.candidate.label).toBe('py3.11 .[test]');
    expect(first.result.built).toBe(true);
    expect(first.rejected).toEqual([{ label: 'py3.11 .[dev]', reason: expect.stringContaining('autoflake-nonexistent-xyz'), stage: 'install', built: true }]);

    const saved = JSON.parse(await readFile(file, 'utf8')) as { eras: Record<string, { chosen: string; tried: Array<{ label: string; outcome: string; reason: string }> }> };
    const eras = Object.values(saved.eras);
    expect(eras).toHaveLength(1);
    expect(eras[0]!.chosen).toBe('py3.11 .[test]');
    expect(eras[0]!.tried.map((t) => [t.label, t.outcome])).toEqual([['py3.11 .[dev]', 'rejected'], ['py3.11 .[test]', 'chosen']]);
    expect(eras[0]!.tried[0]!.reason).toMatch(/^ERROR: .*autoflake-nonexistent-xyz/);

    // A new run (new EnvImages, the file read again): the rejected candidate is not built again.
    const lines2: string[] = [];
    const again = await new EnvChoices(file).choose({ images: new EnvImages({ docker }), req: req(repo, sha, lines2), candidates });
    expect(again).toMatchObject({ kind: 'ready', candidate: { label: 'py3.11 .[test]' }, result: { built: false, image: first.result.image } });
    if (again.kind === 'ready') expect(again.rejected).toEqual([{ label: 'py3.11 .[dev]', reason: eras[0]!.tried[0]!.reason, stage: 'install', built: false }]);
    expect(lines2.join('')).not.toContain('building foresight-env');
    expect(lines1.join('')).toContain('building foresight-env');

    // A later era (its pyproject changed) whose dev extra still names the tool no offline wheel provides:
    // .[dev] is not built again there; one that no longer names it would be (namesPackage, choose-env-check.test.ts).
    const sha2 = await repo.commit({
      files: { 'pyproject.toml': `${setuptoolsProject({ dev: ['autoflake-nonexistent-xyz', 'pytest'], test: ['pytest'] })}# era 2\n` },
      message: 'a later era',
      date: DATE,
    });
    const lines3: string[] = [];
    const later = await new EnvChoices(file).choose({ images: new EnvImages({ docker }), req: req(repo, sha2, lines3), candidates: (await loadRecipe('acme/tinypkg', repo.dir, sha2, { dir: dataDir })).candidates });
    expect(later).toMatchObject({ kind: 'ready', candidate: { label: 'py3.11 .[test]' }, result: { built: true } });
    if (later.kind !== 'ready') return;
    made.add(later.result.image);
    expect(later.rejected).toEqual([{ label: 'py3.11 .[dev]', reason: expect.stringMatching(new RegExp(`^not built: at ${sha.slice(0, 10)} it failed on autoflake-nonexistent-xyz`)), stage: 'skipped', built: false }]);
    expect(lines3.join('').match(/building foresight-env/g)).toHaveLength(1);
    expect(Object.keys((await new EnvChoices(file).read()).eras)).toHaveLength(2);
  }, 400_000);

  it('a build backend pin the offline wheels lack (flit_core<4) skips the isolated candidates and builds without isolation', async () => {
    const repo = await ownRepo();
    const sha = await repo.commit({
      files: {
        'pyproject.toml': [
          '[build-system]',
          'requires = ["flit_core >=3.2,<4"]',
          'build-backend = "flit_core.buildapi"',
          '',
          '[project]',
          'name = "flitpkg"',
          'version = "0.1.0"',
          `description = "foresight flit test ${NONCE}"`,
          '',
          '[project.optional-dependencies]',
          'test = ["pytest"]',
          '',
        ].join('\n'),
        'flitpkg/__init__.py': '"""flitpkg."""\n',
      },
      message: 'flit project',
      date: DATE,
    });
    const { candidates } = await detectCandidates(repo.dir, sha);
    const res = await new EnvChoices(path.join(dataDir, 'flit.json')).choose({ images: new EnvImages({ docker }), req: req(repo, sha, []), candidates });
    expect(res).toMatchObject({ kind: 'ready', candidate: { label: 'no-isolation .[test]', isolated: false } });
    if (res.kind !== 'ready') return;
    made.add(res.result.image);
    expect(res.candidate.recipe.install[0]).toBe('pip install flit_core setuptools wheel');
    // Only the first isolated candidate was built; the other isolated one was skipped for the same cause.
    expect(res.rejected.map((r) => [r.label, r.built])).toEqual([['.[test]', true], ['. + installable [test]', false], ['.', false]]);
    expect(res.rejected[1]!.reason).toContain('build backend cannot be installed offline');
  }, 300_000);

  it('an install that fails on the era\'s Python (3.9, bullseye) is retried on the next one (3.11)', async () => {
    const repo = await ownRepo();
    const sha = await repo.commit({
      files: {
        'setup.cfg': `[metadata]\nname = oldpkg\ndescription = ${NONCE}\nclassifiers =\n    Programming Language :: Python :: 3.7\n    Programming Language :: Python :: 3.8\n`,
      },
      message: 'an old era',
      date: '2020-06-01T00:00:00Z',
    });
    const recipes = path.join(dataDir, 'recipes');
    const { mkdir, writeFile } = await import('node:fs/promises');
    await mkdir(recipes, { recursive: true });
    // Stands for code that installs only on 3.11 (a cp311-only wheel, say).
    const install = ['python --version', 'python -c "import sys; sys.exit(0 if sys.version_info[:2] == (3, 11) else 3)" || { echo "ERROR: needs Python 3.11"; exit 3; }'];
    await writeFile(path.join(recipes, 'acme__old.json'), JSON.stringify({ runner: 'pytest', python: 'auto', install, dependencyFiles: ['setup.cfg'] }));
    const { candidates } = await loadRecipe('acme/old', repo.dir, sha, { dir: recipes });
    expect(candidates.map((c) => c.label)).toEqual(['py3.9 acme__old.json', 'py3.11 acme__old.json', 'py3.13 acme__old.json']);
    const lines: string[] = [];
    const res = await new EnvChoices(path.join(dataDir, 'old.json')).choose({ images: new EnvImages({ docker }), req: req(repo, sha, lines), candidates });
    expect(res).toMatchObject({ kind: 'ready', candidate: { label: 'py3.11 acme__old.json' } });
    if (res.kind !== 'ready') return;
    made.add(res.result.image);
    expect(res.rejected).toEqual([{ label: 'py3.9 acme__old.json', reason: 'ERROR: needs Python 3.11', stage: 'install', built: true }]);
    // The rejected build really ran Debian bullseye's Python 3.9.
    const log9 = lines.join('').match(/building (foresight-env:\w+) for /)?.[1];
    expect(log9).toBeDefined();
    const text = await readFile(path.join(logDir, `${log9!.replace(':', '-')}.log`), 'utf8');
    expect(text).toMatch(/Python 3\.9\.\d+/);
    expect(text).toContain('(Debian bullseye)');
  }, 900_000);
});
