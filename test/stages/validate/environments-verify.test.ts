/**
 * Detected recipes verify themselves at the PR's head, on a real git repository and real
 * Docker (offline builds): a candidate that installs but cannot collect the PR's tests (a module its extra
 * lacks) is rejected for its report and the next is chosen; a failing test never rejects one; the choice and
 * the check are saved and reused without a second probe; when no candidate gives a usable report the first
 * that installs is kept, marked unverified.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { absoluteGitDir } from '../../../core/foundation/git.ts';
import { silentLogger } from '../../../core/foundation/log.ts';
import { applyCachePolicy, CHOICE_FILE, connectDocker, EnvImages, ensureBaseImage, isDockerReachable, type ChoiceFile } from '../../../core/env/index.ts';
import { changedTestModules, eraEnvironment, type EnvironmentOptions } from '../../../core/env/index.ts';
import { gitRepo, type GitRepo } from '../../helpers/git-repo.ts';

const docker = connectDocker();
const reachable = await isDockerReachable(docker);
const skip = !reachable && !process.env['CI'];
if (skip) console.warn('[environments-verify.test] SKIPPED: Docker is not reachable and CI is unset');

const DATE = '2024-01-01T00:00:00Z';
/** New dependency files each run: the builds really build. */
const NONCE = randomBytes(6).toString('hex');

// `dev` installs (pytest only) but lacks sqlparse, which the tests import; `test` has it.
const PYPROJECT = [
  '[build-system]',
  'requires = ["setuptools>=61"]',
  'build-backend = "setuptools.build_meta"',
  '',
  '[project]',
  'name = "probepkg"',
  'version = "0.1.0"',
  `description = "foresight probe test ${NONCE}"`,
  '',
  '[project.optional-dependencies]',
  'dev = ["pytest"]',
  'test = ["pytest", "sqlparse"]',
  '',
  '[tool.setuptools]',
  'packages = ["probepkg"]',
  '',
].join('\n');

describe.skipIf(skip)('detected recipes checked at the PR head (real Docker, offline)', () => {
  const repos: GitRepo[] = [];
  let dataDir: string;
  const made = new Set<string>();

  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(tmpdir(), 'foresight-verify-'));
    await ensureBaseImage({ log: (c) => process.stderr.write(c) });
  });
  afterAll(async () => {
    if (made.size) await applyCachePolicy('base', { used: [...made] });
    await Promise.all(repos.map((r) => r.remove()));
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  /** A repository of the test's own (the tests run side by side) at its initial commit, and the options of its eras. */
  async function probeRepo(): Promise<{ repo: GitRepo; init: string; base: Omit<EnvironmentOptions, 'repoDir' | 'images'> }> {
    const repo = await gitRepo();
    repos.push(repo);
    const init = await repo.commit({ files: { 'pyproject.toml': PYPROJECT, 'probepkg/__init__.py': 'X = 1\n', 'README.md': 'probe\n' }, message: 'init', date: DATE });
    const base = {
      repo: 'acme/probepkg', clone: repo.dir, gitDir: await absoluteGitDir(repo.dir), log: silentLogger, image: null, runner: 'pytest' as const,
      signal: new AbortController().signal, limits: { runTimeoutSec: 120 },
    };
    return { repo, init, base };
  }

  const eras = async (repoDir: string): Promise<ChoiceFile['eras'][string][]> =>
    Object.values((JSON.parse(await readFile(path.join(repoDir, CHOICE_FILE), 'utf8')) as ChoiceFile).eras);

  // First the tests that build PYPROJECT's images and the one with a pyproject of its own, side by side; then,
  // side by side, those that reuse the images the first built (only their probes run).
  describe.concurrent('building', () => {
    it('an extra that installs but cannot collect the PR\'s tests is rejected for its report; a failing test does not reject .[test]', async () => {
      const { repo, base } = await probeRepo();
      // The PR: a test file importing sqlparse, one test passing and one failing.
      const pr = await repo.commit({
        files: { 'tests/test_probe.py': 'import sqlparse\nfrom probepkg import X\n\n\ndef test_x():\n    assert X == 1\n\n\ndef test_fails():\n    assert X == 2\n' },
        message: 'PR: add tests (#1)',
        date: DATE,
      });
      expect(await changedTestModules(repo.dir, pr)).toEqual(['tests/test_probe.py']);
      const repoDir = path.join(dataDir, 'one');
      const env = await eraEnvironment({ ...base, repoDir, images: new EnvImages({ docker }) }, pr);
      expect(env).toMatchObject({ kind: 'ready', built: true });
      if (env.kind !== 'ready') return;
      made.add(env.image);
      expect(env.recipe.install).toContain("pip install -e '.[test]'");
      const [era] = await eras(repoDir);
      expect(era!.chosen).toBe('py3.11 .[test]');
      expect(era!.tried.map((t) => [t.label, t.outcome, t.stage ?? null])).toEqual([['py3.11 .[dev]', 'rejected', 'report'], ['py3.11 .[test]', 'chosen', null]]);
      expect(era!.tried[0]!.reason).toMatch(/^unusable report: tests\/test_probe\.py cannot be collected: ModuleNotFoundError: No module named 'sqlparse'/);
      // The failing test is in a trustworthy report: it never moves to another candidate.
      expect(era!.tried[1]!.check).toBe('trustworthy: 2 tests ran (1 passed, 1 failed, 0 errors, 0 skipped)');

      // The next run reuses the choice and its check: nothing is built or probed again.
      const again = await eraEnvironment({ ...base, repoDir, images: new EnvImages({ docker }) }, pr);
      expect(again).toMatchObject({ kind: 'ready', image: env.image, built: false });
      const [era2] = await eras(repoDir);
      expect(era2!.updated).toBe(era!.updated);
    }, 600_000);

    it('a dev extra naming a tool the offline wheels lack, which the tests do not import: the extra is installed without it', async () => {
      const { repo, base } = await probeRepo();
      const pr = await repo.commit({
        files: {
          'pyproject.toml': PYPROJECT.replace('dev = ["pytest"]\ntest = ["pytest", "sqlparse"]', 'dev = ["autoflake-nonexistent-xyz", "sqlparse"]'),
          'tests/test_more.py': 'import sqlparse\n\n\ndef test_parse():\n    assert sqlparse.format("select 1")\n',
        },
        message: 'PR: only a dev extra (#3)',
        date: DATE,
      });
      const repoDir = path.join(dataDir, 'three');
      const env = await eraEnvironment({ ...base, repoDir, images: new EnvImages({ docker }) }, pr);
      expect(env).toMatchObject({ kind: 'ready' });
      if (env.kind !== 'ready') return;
      made.add(env.image);
      const [era] = await eras(repoDir);
      expect(era!.tried.map((t) => [t.label, t.outcome, t.stage ?? null])).toEqual([['py3.11 .[dev]', 'rejected', 'install'], ['py3.11 .[dev] without autoflake-nonexistent-xyz', 'chosen', null]]);
      expect(era!.tried[0]!.reason).toMatch(/No matching distribution found for autoflake-nonexistent-xyz(; extra == "dev")? \(retried without autoflake-nonexistent-xyz /);
      expect(era!.tried[1]).toMatchObject({ from: 'py3.11 .[dev]', dropped: ['autoflake-nonexistent-xyz'] });
      expect(era!.tried[1]!.check).toBe('trustworthy: 1 tests ran (1 passed, 0 failed, 0 errors, 0 skipped)');
    }, 600_000);
  });

  // Not concurrent itself: it starts when 'building' is done; its tests run side by side.
  describe('reusing what the first built', () => {
    it.concurrent("a bisection's era asked below the PR: the PR's test files that do not exist there yet are not what the candidate is checked on", async () => {
      const { repo, init, base } = await probeRepo();
      // An older commit with a test of its own, then the later PR whose test files the bisection follows.
      const older = await repo.commit({
        files: { 'tests/test_older.py': 'import sqlparse\nfrom probepkg import X\n\n\ndef test_x():\n    assert X == 1\n' },
        message: 'Older tests (#2)',
        date: DATE,
      });
      await repo.commit({ files: { 'tests/test_later.py': 'def test_later():\n    assert True\n' }, message: 'PR2: later tests (#4)', date: DATE });
      const files = ['tests/test_older.py', 'tests/test_later.py'];

      // Checked on the file that exists: .[dev] cannot collect it (no sqlparse), .[test] runs it; the later
      // file never rejects a candidate.
      const repoDir = path.join(dataDir, 'below');
      const env = await eraEnvironment({ ...base, repoDir, images: new EnvImages({ docker }) }, older, files);
      expect(env).toMatchObject({ kind: 'ready', label: 'py3.11 .[test]' });
      if (env.kind === 'ready') made.add(env.image);
      const [era] = await eras(repoDir);
      expect(era!.tried.map((t) => [t.label, t.outcome, t.stage ?? null])).toEqual([['py3.11 .[dev]', 'rejected', 'report'], ['py3.11 .[test]', 'chosen', null]]);
      expect(era!.tried[1]!.check).toBe('trustworthy: 1 tests ran (1 passed, 0 failed, 0 errors, 0 skipped)');

      // Where none of them exists yet, nothing tells: the first that installs, inconclusive, with no container started.
      const noneDir = path.join(dataDir, 'below-none');
      const first = await eraEnvironment({ ...base, repoDir: noneDir, images: new EnvImages({ docker }) }, init, files);
      expect(first).toMatchObject({ kind: 'ready', label: 'py3.11 .[dev]' });
      const [none] = await eras(noneDir);
      expect(none!.tried.map((t) => [t.label, t.outcome, t.check ?? null])).toEqual([['py3.11 .[dev]', 'chosen', 'inconclusive: no test file to run']]);
    }, 600_000);

    it.concurrent('warnings turned into errors by the project meet a newer dependency\'s deprecation: the check is rerun with them left as warnings', async () => {
      const { repo, base } = await probeRepo();
      // pytest.ini is no dependency file: the images of the first test are reused, only the probes run.
      const pr = await repo.commit({
        files: {
          'pyproject.toml': PYPROJECT,
          'pytest.ini': '[pytest]\nfilterwarnings =\n    error\n',
          'tests/conftest.py': 'import warnings\n\nwarnings.warn("use the new module instead", DeprecationWarning)\n',
          'tests/test_warned.py': 'import sqlparse\n\n\ndef test_w():\n    assert sqlparse\n',
        },
        message: 'PR: warnings are errors (#4)',
        date: DATE,
      });
      const repoDir = path.join(dataDir, 'four');
      const env = await eraEnvironment({ ...base, repoDir, images: new EnvImages({ docker }) }, pr);
      expect(env).toMatchObject({ kind: 'ready', recipe: { env: { PYTEST_ADDOPTS: '-W ignore::DeprecationWarning -W ignore::PendingDeprecationWarning' } } });
      if (env.kind !== 'ready') return;
      made.add(env.image);
      const [era] = await eras(repoDir);
      const chosen = era!.tried.find((t) => t.outcome === 'chosen')!;
      expect(chosen.label).toBe('py3.11 .[test]');
      expect(chosen.env).toEqual({ PYTEST_ADDOPTS: '-W ignore::DeprecationWarning -W ignore::PendingDeprecationWarning' });
      expect(chosen.check).toMatch(/^trustworthy: 1 tests ran .*; deprecation warnings left as warnings \(.*DeprecationWarning: use the new module instead/);
      // The next run reuses the choice with its environment, without probing again.
      const again = await eraEnvironment({ ...base, repoDir, images: new EnvImages({ docker }) }, pr);
      expect(again).toMatchObject({ kind: 'ready', image: env.image, recipe: { env: chosen.env } });
    }, 600_000);

    it.concurrent('when no candidate gives a usable report, the first that installs is kept and marked unverified', async () => {
      const { repo, base } = await probeRepo();
      const pr = await repo.commit({
        files: { 'tests/test_other.py': 'import module_nobody_ships_xyz\n\n\ndef test_y():\n    pass\n' },
        message: 'PR: a test needing a module nothing installs (#2)',
        date: DATE,
      });
      const repoDir = path.join(dataDir, 'two');
      // Same dependency files: the images of the first test are reused, only the probes run.
      const env = await eraEnvironment({ ...base, repoDir, images: new EnvImages({ docker }) }, pr);
      expect(env).toMatchObject({ kind: 'ready' });
      if (env.kind !== 'ready') return;
      made.add(env.image);
      expect(env.recipe.install).toContain("pip install -e '.[dev]'");
      const [era] = await eras(repoDir);
      expect(era!.chosen).toBe('py3.11 .[dev]');
      expect(era!.tried[0]).toMatchObject({ label: 'py3.11 .[dev]', outcome: 'chosen' });
      expect(era!.tried[0]!.check).toMatch(/^unverified: no candidate gave a usable report \(tests\/test_other\.py cannot be collected: ModuleNotFoundError/);
      // Three candidates installed without a usable report; the rest (no-isolation twins, other Pythons) are not built.
      expect(era!.tried.slice(1, 3).map((t) => [t.label, t.outcome, t.stage])).toEqual([['py3.11 .[test]', 'rejected', 'report'], ['py3.11 . + installable [dev]', 'rejected', 'report']]);
      expect(era!.tried.slice(3).map((t) => t.stage)).toEqual(Array(27).fill('skipped'));
    }, 900_000);
  });
});
