/**
 * Old Django eras: which interpreter a 2016 Django gets (PyPy 3.7: its metaclasses break on
 * CPython 3.8+), how its env image gets that interpreter, and two things of the django runner that old
 * checkouts need, in real Docker over a GENERATED Django-like repository: runtests.py before Django 1.9
 * has no --parallel option, and each state runs its own tests/runtests.py even when the PR changed it
 * (a PR's runner may import a module only the PR adds). Skipped only when the daemon is unreachable AND
 * CI is unset.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { aptScript, assertDockerReachable, connectDocker, DEFAULT_BASE_ALIAS, ensureImage, installScript, isDockerReachable, openChainEnv, pythonEra, rankPythons, releaseOf, type ChainEnv } from '../../../core/env/index.ts';
import { djangoRunner } from '../../../core/env/runners/django/index.ts';
import { gitRepo } from '../../helpers/git-repo.ts';

const docker = connectDocker();
const reachable = await isDockerReachable(docker);
const skip = !reachable && !process.env['CI'];
if (skip) console.warn('[django-eras.test] SKIPPED: Docker is not reachable and CI is unset');

describe('the interpreter of an old era', () => {
  it('Django <= 1.10 (newest named Python 3.5) gets PyPy 3.7 first, then the CPythons as before', () => {
    const era = rankPythons({ named: ['3.4', '3.5'], constraint: null, date: '2016-04-09' });
    expect(era.order).toEqual(['3.7', '3.9', '3.11', '3.13']);
    expect(era.reasons.join('\n')).toContain('PyPy 3.7 first');
  });

  it('Django 1.11 (names 3.6, its metaclasses fixed) and later keep CPython only', () => {
    expect(rankPythons({ named: ['3.4', '3.5', '3.6'], constraint: null, date: '2017-04-04' }).order).toEqual(['3.9', '3.11', '3.13']);
    expect(rankPythons({ named: [], constraint: null, date: '2014-05-22' }).order).toEqual(['3.9', '3.11', '3.13']);
  });

  it('a constraint that excludes 3.7 keeps PyPy out', () => {
    expect(rankPythons({ named: ['3.5'], constraint: '>=3.8', date: '2016-01-01' }).order).not.toContain('3.7');
  });

  it('read from setup.py classifiers at the commit', async () => {
    const repo = await gitRepo();
    try {
      const sha = await repo.commit({
        files: { 'setup.py': "setup(classifiers=[\n    'Programming Language :: Python :: 2.7',\n    'Programming Language :: Python :: 3.4',\n    'Programming Language :: Python :: 3.5',\n])\n" },
        message: 'old',
        date: '2016-04-09T00:00:00Z',
      });
      expect((await pythonEra(repo.dir, sha, ['setup.py'])).order[0]).toBe('3.7');
    } finally {
      await repo.remove();
    }
  });

  it('PyPy 3.7 is bullseye\'s pypy3, installed by the apt step, with a venv bootstrapped from bullseye\'s wheels', () => {
    expect(releaseOf('3.7')).toBe('bullseye');
    expect(aptScript({ systemPackages: [], python: '3.7' })).toContain("apt-get install -y -q --no-install-recommends 'pypy3'");
    const install = installScript({ install: ['pip install pytz'], runner: 'django', python: '3.7' });
    expect(install).toContain('pypy3 -m venv --without-pip /opt/venv');
    expect(install).not.toContain('python3 -m venv');
    // The CPython eras' scripts (and so their image keys) do not change.
    expect(aptScript({ systemPackages: [], python: '3.9' })).toBeNull();
    expect(installScript({ install: [], runner: 'django', python: '3.9' })).toContain('python3 -m venv --system-site-packages /opt/venv');
  });
});

function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', '-c', 'commit.gpgsign=false', ...args], { cwd, encoding: 'utf8' }).trim();
}

function write(dir: string, file: string, lines: string[]): void {
  mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
  writeFileSync(path.join(dir, file), `${lines.join('\n')}\n`);
}

/** A runtests.py like Django 1.8's: optparse, no --parallel (an unknown option aborts the run). */
function runtests(extra: { parallel: boolean; imports: string[] }): string[] {
  return [
    'import optparse, os, sys, unittest',
    ...extra.imports,
    'p = optparse.OptionParser()',
    'p.add_option("-v", dest="verbosity", type="int", default=1)',
    'p.add_option("--noinput", action="store_false", dest="interactive")',
    'p.add_option("--settings")',
    ...(extra.parallel ? ['p.add_option("--parallel", default=0)'] : []),
    'options, labels = p.parse_args()',
    'print("parallel option: %s" % ("parallel" in vars(options)))',
    'suite = unittest.TestSuite(unittest.defaultTestLoader.loadTestsFromName(l) for l in labels)',
    'result = unittest.TextTestRunner(verbosity=options.verbosity).run(suite)',
    'sys.exit(bool(result.failures or result.errors))',
  ];
}

const CALC = 'tests/calc/tests.py';

describe.skipIf(skip)('django runner on old checkouts (Docker, generated repository)', () => {
  let tmp: string;
  let env: ChainEnv;
  let A: string;
  let B: string;

  beforeAll(async () => {
    await assertDockerReachable(docker);
    await ensureImage(DEFAULT_BASE_ALIAS, { docker });
    tmp = mkdtempSync(path.join(tmpdir(), 'foresight-django-eras-'));
    const dir = path.join(tmp, 'repo');
    mkdirSync(dir);
    git(dir, 'init', '-q', '-b', 'main');
    write(dir, 'django/__init__.py', ['VERSION = (1, 8, 0, "final", 0)']);
    write(dir, 'django/calc.py', ['def add(a, b):', '    return a - b']);
    write(dir, 'tests/runtests.py', runtests({ parallel: false, imports: [] }));
    write(dir, 'tests/test_sqlite.py', []);
    write(dir, 'tests/calc/__init__.py', []);
    write(dir, CALC, ['import unittest', 'from django.calc import add', '', 'class T(unittest.TestCase):', '    def test_zero(self):', '        self.assertEqual(add(0, 0), 0)']);
    git(dir, 'add', '-A');
    git(dir, 'commit', '-qm', 'A');
    A = git(dir, 'rev-parse', 'HEAD');
    // B: the fix, a new test, and a runner that imports a module B adds (as 44c0ecdd92 did with django.test.selenium).
    write(dir, 'django/calc.py', ['def add(a, b):', '    return a + b']);
    write(dir, 'django/selenium.py', []);
    write(dir, 'tests/runtests.py', runtests({ parallel: true, imports: ['import django.selenium'] }));
    write(dir, CALC, ['import unittest', 'from django.calc import add', '', 'class T(unittest.TestCase):', '    def test_zero(self):', '        self.assertEqual(add(0, 0), 0)', '', '    def test_add(self):', '        self.assertEqual(add(2, 3), 5)']);
    git(dir, 'add', '-A');
    git(dir, 'commit', '-qm', 'B');
    B = git(dir, 'rev-parse', 'HEAD');
    execFileSync('chmod', ['-R', 'a+rX', path.join(dir, '.git')]);
    env = await openChainEnv({ gitDir: path.join(dir, '.git'), image: DEFAULT_BASE_ALIAS, runner: djangoRunner, docker });
  });

  afterAll(async () => {
    await env?.close();
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  });

  it('at A with B laid over (runtests.py among the files): A\'s own runner, without --parallel, runs B\'s test', async () => {
    const run = await env.runState({ checkout: A, overlay: B, testFiles: [CALC, 'tests/runtests.py'] });
    expect(run.kind, run.outputTail).toBe('report');
    expect(run.outputTail).toContain('parallel option: False');
    expect(run.outputTail).not.toContain('No module named');
    expect(run.parsed?.tests).toEqual({ 'test_zero (calc.tests.T)': 'pass', 'test_add (calc.tests.T)': 'fail' });
  });

  it('at B (a runner with --parallel) the option is passed', async () => {
    const run = await env.runState({ checkout: B, overlay: null, testFiles: [CALC] });
    expect(run.kind, run.outputTail).toBe('report');
    expect(run.outputTail).toContain('parallel option: True');
    expect(run.parsed?.tests).toEqual({ 'test_zero (calc.tests.T)': 'pass', 'test_add (calc.tests.T)': 'pass' });
  });
});
