/**
 * Real Docker: setuptools_scm's version file (written by an install into a work tree each state's checkout
 * no longer has) is written again at every state that lacks it, and a commit that tracks it keeps its own.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectDocker, DEFAULT_BASE_ALIAS, ensureImage, isDockerReachable, openChainEnv, type ChainEnv } from '../../../core/env/index.ts';
import { pytestRunner } from '../../../core/env/runners/pytest/index.ts';
import { gitRepo, type GitRepo } from '../../helpers/git-repo.ts';

const docker = connectDocker();
const skip = !(await isDockerReachable(docker)) && !process.env['CI'];

const PYPROJECT = '[project]\nname = "pkg"\ndynamic = ["version"]\n\n[tool.setuptools_scm]\nwrite_to = "src/pkg/_version.py"\n';
const TEST = (want: string): string =>
  [
    'import os, sys, pathlib',
    'sys.path.insert(0, str(pathlib.Path(__file__).parent.parent / "src"))',
    'import pkg',
    '',
    'def test_version():',
    `    assert (pkg.version, pkg.version_tuple) == ${want}`,
    '    assert not os.path.exists(pathlib.Path(__file__).parent.parent.parent / "escape.py")',
    '',
  ].join('\n');

describe.skipIf(skip)('checkout: setuptools_scm version file (Docker)', () => {
  let repo: GitRepo;
  let env: ChainEnv;
  const revs: Record<string, string> = {};

  beforeAll(async () => {
    await ensureImage(DEFAULT_BASE_ALIAS, { docker });
    repo = await gitRepo();
    // A: the file is generated (ignored); nothing installed the project here, so the version is 0.0.0.
    revs.A = await repo.commit({
      files: {
        'pyproject.toml': PYPROJECT,
        '.gitignore': 'src/pkg/_version.py\n',
        'src/pkg/__init__.py': 'from ._version import version, version_tuple\n',
        'tests/test_v.py': TEST("('0.0.0', (0, 0, 0))"),
      },
      message: 'A',
      date: '2024-01-01T00:00:00Z',
    });
    // B: the commit tracks its own version file, which must win.
    revs.B = await repo.commit({
      files: {
        '.gitignore': '',
        'src/pkg/_version.py': "version = '9.9'\nversion_tuple = (9, 9)\n",
        'tests/test_v.py': TEST("('9.9', (9, 9))"),
      },
      message: 'B',
      date: '2024-01-02T00:00:00Z',
    });
    // C: a version file outside the work tree is never written.
    revs.C = await repo.commit({
      files: { 'pyproject.toml': PYPROJECT.replace('src/pkg/_version.py', '../escape.py'), 'src/pkg/_version.py': "version = 'C'\nversion_tuple = ()\n", 'tests/test_v.py': TEST("('C', ())") },
      message: 'C',
      date: '2024-01-03T00:00:00Z',
    });
    // D: imports the package through /tmp/testbed/src, where an env image's editable install points.
    revs.D = await repo.commit({
      files: { 'tests/test_v.py': 'import sys\nsys.path.insert(0, "/tmp/testbed/src")\nimport pkg\n\ndef test_version():\n    assert pkg.version == "C"\n' },
      message: 'D',
      date: '2024-01-04T00:00:00Z',
    });
    env = await openChainEnv({ gitDir: `${repo.dir}/.git`, image: DEFAULT_BASE_ALIAS, runner: pytestRunner, docker });
  });

  afterAll(async () => {
    await env?.close();
    await repo?.remove();
  });

  it('written where missing (A, again after B), kept where tracked (B), never outside the tree (C)', async () => {
    for (const at of ['A', 'B', 'A', 'C'] as const) {
      const run = await env.runState({ checkout: revs[at]!, overlay: null, testFiles: ['tests/test_v.py'] });
      expect(run.kind, `${at}: ${run.outputTail}`).toBe('report');
      expect(run.parsed, `${at}: ${run.outputTail}`).toEqual({ tests: { 'tests/test_v.py::test_version': 'pass' }, collectionErrors: [] });
    }
  });

  it('in place (grading in /testbed), /tmp/testbed names the work tree, so a src-layout editable install resolves', async () => {
    const other = await openChainEnv({ gitDir: `${repo.dir}/.git`, image: DEFAULT_BASE_ALIAS, runner: pytestRunner, docker, env: { FORESIGHT_TESTBED: '/tmp/wt' } });
    try {
      // A checkout in /tmp/wt: nothing at /tmp/testbed, the package cannot be imported.
      const cloned = await other.runState({ checkout: revs.D!, overlay: null, testFiles: ['tests/test_v.py'] });
      expect(cloned.parsed.collectionErrors, cloned.outputTail).toEqual(['tests/test_v.py']);
      const inPlace = await other.runState({ checkout: '.', overlay: null, testFiles: ['tests/test_v.py'] });
      expect(inPlace.parsed, inPlace.outputTail).toEqual({ tests: { 'tests/test_v.py::test_version': 'pass' }, collectionErrors: [] });
    } finally {
      await other.close();
    }
  });
});
