/**
 * Real Docker: the base and env image tiers on a generated repository (real git) whose pyproject
 * needs a package from the machine's local wheels. Builds are offline; the test run has no network.
 * Skipped only when the daemon is unreachable AND CI is unset; in CI a missing daemon fails loudly.
 * The first base build takes about 90 s and is reused afterwards.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Docker from 'dockerode';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ForesightError } from '../../../core/foundation/errors.ts';
import { connectDocker, DEFAULT_BASE_ALIAS, isDockerReachable, openChainEnv } from '../../../core/env/index.ts';
import { forceRemove, ownerLabels } from '../../../core/env/container/cleanup.ts';
import {
  applyCachePolicy,
  baseImageTag,
  ensureBaseImage,
  envImageFor,
  EnvImages,
  envImageKey,
  listEnvImages,
  pruneImages,
  touchImage,
  type BaseImage,
} from '../../../core/env/index.ts';
import { loadRecipe } from '../../../core/env/recipes/load.ts';
import { RecipeSchema } from '../../../core/env/recipes/schema.ts';
import { pytestRunner } from '../../../core/env/runners/pytest/index.ts';
import { gitRepo, type GitRepo } from '../../helpers/git-repo.ts';

const docker = connectDocker();
const reachable = await isDockerReachable(docker);
const skip = !reachable && !process.env['CI'];
if (skip) {
  console.warn('[images-env.test] SKIPPED: Docker is not reachable and CI is unset (start dockerd to run these tests)');
}

const DATE = '2024-01-01T00:00:00Z';
/** Makes this run's dependency files (so its env images) new: the first build really builds. */
const NONCE = randomBytes(6).toString('hex');

const pyproject = (deps: string[]): string =>
  [
    '[build-system]',
    'requires = ["setuptools>=61"]',
    'build-backend = "setuptools.build_meta"',
    '',
    '[project]',
    'name = "tinypkg"',
    'version = "0.1.0"',
    `description = "foresight image test ${NONCE}"`,
    `dependencies = [${deps.map((d) => JSON.stringify(d)).join(', ')}]`,
    '',
    '[tool.setuptools]',
    'packages = ["tinypkg"]',
    '',
  ].join('\n');

const recipe = RecipeSchema.parse({
  runner: 'pytest',
  install: ['pip install -e .', 'pip install pytest'],
  dependencyFiles: ['pyproject.toml', 'requirements*.txt'],
});

// Concurrent: each test builds images of its own (the builds mostly wait on pip and docker commit).
describe.skipIf(skip).concurrent('env images (real Docker, offline)', () => {
  let repo: GitRepo;
  let logDir: string;
  let base: BaseImage;
  /** C1: pyproject needs sqlparse; C2: only README changes; C3: pyproject also needs attrs. */
  let C1: string, C2: string, C3: string;
  const made: string[] = [];

  beforeAll(async () => {
    const t0 = Date.now();
    base = await ensureBaseImage({ log: (c) => process.stderr.write(c) });
    console.info(`[images-env.test] base ${base.image} ${base.built ? 'built' : 'reused'} in ${Date.now() - t0} ms`);
    logDir = await mkdtemp(path.join(tmpdir(), 'foresight-env-logs-'));
    repo = await gitRepo();
    C1 = await repo.commit({
      files: {
        'pyproject.toml': pyproject(['sqlparse']),
        'tinypkg/__init__.py': 'import sqlparse\n\n\ndef pretty(sql):\n    return sqlparse.format(sql, keyword_case="upper")\n',
        'tests/test_tiny.py': [
          'import os',
          'import sqlparse',
          'from tinypkg import pretty',
          '',
          '',
          'def test_pretty():',
          '    assert pretty("select 1") == "SELECT 1"',
          '',
          '',
          'def test_offline_and_venv():',
          "    assert sorted(os.listdir('/sys/class/net')) == ['lo']",
          "    assert os.environ['FORESIGHT_PYTHON'] == '/opt/venv/bin/python'",
          "    assert sqlparse.__file__.startswith('/opt/venv/')",
          '',
        ].join('\n'),
        'README.md': 'tiny\n',
      },
      message: 'C1',
      date: DATE,
    });
    C2 = await repo.commit({ files: { 'README.md': 'tiny, now documented\n' }, message: 'C2', date: DATE });
    C3 = await repo.commit({ files: { 'pyproject.toml': pyproject(['sqlparse', 'attrs']) }, message: 'C3', date: DATE });
  });

  afterAll(async () => {
    if (made.length) await applyCachePolicy('base', { used: made });
    await repo?.remove();
    if (logDir) await rm(logDir, { recursive: true, force: true });
  });

  it('the base image is tagged by the hash of its build script, with the alias kept', async () => {
    expect(base.image).toBe(await baseImageTag());
    expect(base.image).toMatch(/^foresight-base:[0-9a-f]{16}$/);
    const alias = await docker.getImage(DEFAULT_BASE_ALIAS).inspect();
    expect(alias.Id).toBe(base.id);
    const again = await ensureBaseImage();
    expect(again).toMatchObject({ image: base.image, id: base.id, built: false });
  });

  it('the key follows the dependency files, not unrelated files', async () => {
    const k1 = await envImageKey({ clone: repo.dir, commit: C1, recipe, baseId: base.id });
    const k2 = await envImageKey({ clone: repo.dir, commit: C2, recipe, baseId: base.id });
    const k3 = await envImageKey({ clone: repo.dir, commit: C3, recipe, baseId: base.id });
    expect(k1.key).toMatch(/^[0-9a-f]{24}$/);
    expect(k2.key).toBe(k1.key);
    expect(k3.key).not.toBe(k1.key);
    expect(k1.files.map((f) => f.path)).toEqual(['pyproject.toml']);
    const otherBase = await envImageKey({ clone: repo.dir, commit: C1, recipe, baseId: 'sha256:other' });
    expect(otherBase.key).not.toBe(k1.key);
    const otherRecipe = await envImageKey({ clone: repo.dir, commit: C1, recipe: { ...recipe, install: ['pip install -e .'] }, baseId: base.id });
    expect(otherRecipe.key).not.toBe(k1.key);
    const testOnly = await envImageKey({ clone: repo.dir, commit: C1, recipe: { ...recipe, ignoreTests: ['x'] }, baseId: base.id });
    expect(testOnly.key).toBe(k1.key);
  });

  it('builds offline, the tests pass in a no-network container from it, and a second call reuses it', async () => {
    const t0 = Date.now();
    const r1 = await envImageFor({ clone: repo.dir, repo: 'test/tiny', commit: C1, recipe, logDir });
    made.push(r1.image);
    console.info(`[images-env.test] env build ${Date.now() - t0} ms`);
    expect(r1).toMatchObject({ ok: true, built: true });
    expect(r1.image).toBe(`foresight-env:${r1.key}`);
    const log = await readFile(r1.log!, 'utf8');
    expect(log).toContain('Successfully installed');
    expect(log).toMatch(/sqlparse==/);

    const info = await docker.getImage(r1.image).inspect();
    expect(info.Config.Env).toContain('FORESIGHT_PYTHON=/opt/venv/bin/python');
    expect(info.Config.Labels?.['foresight.env.key']).toBe(r1.key);
    expect(info.Config.Labels?.['foresight.run']).toBe('');

    // The chain container: no network, nobody, the runner script clones the commit itself.
    const env = await openChainEnv({ gitDir: path.join(repo.dir, '.git'), image: r1.image, runner: pytestRunner });
    try {
      const run = await env.runState({ checkout: C1, overlay: null, testFiles: ['tests/test_tiny.py'] });
      expect(run.outputTail).not.toMatch(/ModuleNotFoundError/);
      expect(run.parsed.tests).toEqual({
        'tests/test_tiny.py::test_pretty': 'pass',
        'tests/test_tiny.py::test_offline_and_venv': 'pass',
      });
    } finally {
      await env.close();
    }

    const t1 = Date.now();
    const r2 = await envImageFor({ clone: repo.dir, repo: 'test/tiny', commit: C2, recipe, logDir });
    expect(r2).toMatchObject({ ok: true, built: false, image: r1.image, log: r1.log });
    expect(Date.now() - t1).toBeLessThan(10_000);
  }, 240_000);

  it('concurrent requests for one key build once', async () => {
    // One run's EnvImages shares the build in flight; the lock file covers other runs and processes.
    const images = new EnvImages();
    const [a, b] = await Promise.all([
      images.envImageFor({ clone: repo.dir, repo: 'test/tiny', commit: C3, recipe, logDir }),
      images.envImageFor({ clone: repo.dir, repo: 'test/tiny', commit: C3, recipe, logDir }),
    ]);
    made.push(a.image);
    expect(a.ok && b.ok).toBe(true);
    expect(a.image).toBe(b.image);
    expect([a.built, b.built].sort()).toEqual([false, true]);
  }, 240_000);

  it('an install failure is ok:false with the pip error, not an exception', async () => {
    const bad = RecipeSchema.parse({ runner: 'pytest', install: ['pip install no-such-package-xyz'], dependencyFiles: ['pyproject.toml'] });
    const r = await envImageFor({ clone: repo.dir, repo: 'test/tiny', commit: C1, recipe: bad, logDir });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.reason).toBe('env_install_failed');
    expect(r.built).toBe(false);
    expect(r.detail).toMatch(/No matching distribution found for no-such-package-xyz/);
    expect(r.detail).toContain('FAILED (exit 1): pip install no-such-package-xyz');
    expect(await readFile(r.log, 'utf8')).toContain('no-such-package-xyz');
    await expect(docker.getImage(r.image).inspect()).rejects.toMatchObject({ statusCode: 404 });
    const containers = await docker.listContainers({ all: true, filters: { label: ['foresight.env.key'] } });
    expect(containers.filter((c) => c.Labels['foresight.env.key'] === r.key)).toEqual([]);
  }, 120_000);

  it('systemPackages come from the Debian mirror; the install step runs without network', async () => {
    const withApt = RecipeSchema.parse({
      runner: 'pytest',
      systemPackages: ['jq'],
      // The install step may write the venv (its user's until the finish step), not the rest of /opt.
      install: ['ls /sys/class/net > /opt/venv/net-during-install', 'pip install -e .'],
      dependencyFiles: ['pyproject.toml'],
    });
    const r = await envImageFor({ clone: repo.dir, repo: 'test/tiny', commit: C1, recipe: withApt, logDir });
    made.push(r.image);
    expect(r).toMatchObject({ ok: true, built: true });
    const c = await docker.createContainer({
      Image: r.image,
      Cmd: ['sh', '-c', 'cat /opt/venv/net-during-install; echo "{\\"a\\": 1}" | jq -c .; python -m pytest --version'],
      HostConfig: { NetworkMode: 'none' },
      Labels: ownerLabels(),
    });
    try {
      await c.start();
      await c.wait();
      const out = (await c.logs({ stdout: true, stderr: true })).toString('utf8');
      expect(out).toMatch(/^.{0,8}lo\s*$/m);
      expect(out).not.toMatch(/eth0/);
      expect(out).toContain('{"a":1}');
      expect(out).toMatch(/pytest \d/); // added for the pytest runner though the recipe did not install it
    } finally {
      await forceRemove(docker, c.id);
    }
  }, 240_000);

  it('the shipped Django recipe installs a 2024 Django layout (setuptools pinned <69.3) offline', async () => {
    const dj = await gitRepo();
    try {
      const sha = await dj.commit({
        files: {
          'pyproject.toml': [
            '[build-system]',
            'requires = ["setuptools>=61.0.0,<69.3.0"]',
            'build-backend = "setuptools.build_meta"',
            '',
            '[project]',
            'name = "Django"',
            'dynamic = ["version"]',
            'requires-python = ">= 3.10"',
            'dependencies = ["asgiref >= 3.7.0", "sqlparse >= 0.3.1", "tzdata; sys_platform == \'win32\'"]',
            `description = "foresight image test ${NONCE}"`,
            'license = {text = "BSD-3-Clause"}',
            '',
            '[project.optional-dependencies]',
            'argon2 = ["argon2-cffi>=19.1.0"]',
            'bcrypt = ["bcrypt"]',
            '',
            '[project.scripts]',
            'django-admin = "django.core.management:execute_from_command_line"',
            '',
            '[tool.setuptools.dynamic]',
            'version = {attr = "django.__version__"}',
            '',
            '[tool.setuptools.packages.find]',
            'include = ["django*"]',
            '',
          ].join('\n'),
          'django/__init__.py': '__version__ = "5.1.dev20240101000000"\n',
          'django/core/__init__.py': '',
          'django/core/management/__init__.py': 'def execute_from_command_line(argv=None):\n    pass\n',
          'tests/runtests.py': '#!/usr/bin/env python\nimport django\n',
          'tests/requirements/py3.txt': 'asgiref >= 3.7.0\nsqlparse >= 0.3.1\n',
        },
        message: 'Django-like',
        date: DATE,
      });
      const { recipe: django, source } = await loadRecipe('django/django', dj.dir, sha);
      expect(source).toBe('file');
      const r = await envImageFor({ clone: dj.dir, repo: 'django/django', commit: sha, recipe: django, logDir });
      made.push(r.image);
      expect(r.ok ? '' : r.detail).toBe('');
      const log = await readFile(r.log!, 'utf8');
      expect(log).toMatch(/setuptools<69.3.0,>=61.0.0/); // the isolated build found no such setuptools: the fallback ran
      const c = await docker.createContainer({
        Image: r.image,
        Cmd: [
          'python',
          '-c',
          'import importlib.metadata as m, asgiref, sqlparse, tblib, yaml, PIL, numpy, argon2, bcrypt, jinja2, docutils; print("django", m.version("Django"))',
        ],
        HostConfig: { NetworkMode: 'none' },
        User: '65534:65534',
        Labels: ownerLabels(),
      });
      try {
        await c.start();
        const { StatusCode } = (await c.wait()) as { StatusCode: number };
        const out = (await c.logs({ stdout: true, stderr: true })).toString('utf8');
        expect(out).toContain('django 5.1.dev20240101000000');
        expect(StatusCode).toBe(0);
      } finally {
        await forceRemove(docker, c.id);
      }
    } finally {
      await dj.remove();
    }
  }, 240_000);

  it('pruneImages keeps the N most recently used', async () => {
    const repository = `foresight-env-test-${NONCE}`;
    const refs: string[] = [];
    for (const name of ['a', 'b', 'c']) {
      const c = await docker.createContainer({ Image: base.image, Cmd: ['true'], Labels: ownerLabels() });
      try {
        await c.commit({ repo: repository, tag: name, changes: [`LABEL foresight.test=${name}`] });
      } finally {
        await forceRemove(docker, c.id);
      }
      refs.push(`${repository}:${name}`);
      await new Promise((r) => setTimeout(r, 20));
    }
    try {
      await touchImage(`${repository}:a`); // a is now the most recently used, b the least
      expect((await listEnvImages({ repository })).map((i) => i.ref)).toEqual([`${repository}:a`, `${repository}:c`, `${repository}:b`]);
      // The run's own images are spared whatever their age (emit still needs them).
      expect(await pruneImages({ keep: 1, repository, spare: [`${repository}:b`] })).toEqual([`${repository}:c`]);
      expect((await listEnvImages({ repository })).map((i) => i.ref).sort()).toEqual([`${repository}:a`, `${repository}:b`]);
      expect(await pruneImages({ keep: 1, repository })).toEqual([`${repository}:b`]);
    } finally {
      await pruneImages({ keep: 0, repository });
    }
    expect(await listEnvImages({ repository })).toEqual([]);
  });
});

describe('Docker down', () => {
  it('envImageFor throws a ForesightError', async () => {
    const down = new Docker({ socketPath: '/nonexistent/docker.sock' });
    const err = await envImageFor({
      clone: '/nonexistent',
      repo: 'x/y',
      commit: 'HEAD',
      recipe,
      docker: down,
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ForesightError);
    expect((err as ForesightError).external).toBe(true);
  });
});
