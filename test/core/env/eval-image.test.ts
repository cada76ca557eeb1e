/**
 * Real Docker: tier-3 eval images on a generated repository (real git) with a past
 * tag, a base commit, a side branch, a later "PR1 head" (tagged) and a later "PR2 head". The env image
 * is built offline from the machine's local wheels (~15 s); everything made here is removed at the end.
 * Skipped only when the daemon is unreachable AND CI is unset; in CI a missing daemon fails loudly.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import Docker from 'dockerode';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ForesightError } from '../../../core/foundation/errors.ts';
import {
  applyCachePolicy,
  connectDocker,
  ensureBaseImage,
  ensureEvalImage,
  envImageFor,
  EVAL_HISTORY_LABEL,
  EVAL_KEY_LABEL,
  isDockerReachable,
  type EvalImageResult,
} from '../../../core/env/index.ts';
import { forceRemove, ownerLabels } from '../../../core/env/container/cleanup.ts';
import { runExec } from '../../../core/env/container/exec.ts';
import { RecipeSchema } from '../../../core/env/recipes/schema.ts';
import { pytestRunner } from '../../../core/env/runners/pytest/index.ts';
import { gitRepo, type GitRepo } from '../../helpers/git-repo.ts';

const docker = connectDocker();
const reachable = await isDockerReachable(docker);
const skip = !reachable && !process.env['CI'];
if (skip) {
  console.warn('[eval-image.test] SKIPPED: Docker is not reachable and CI is unset (start dockerd to run these tests)');
}

const DATE = '2024-01-01T00:00:00Z';
/** Makes this run's env image new (and so ours to remove). */
const NONCE = randomBytes(6).toString('hex');
/** Text that exists only in the future (PR2's held-out test): no object of an eval image may hold it. */
const FUTURE_MARK = `FUTURE_EDGE_CASE_${NONCE}`;

const pyproject = [
  '[build-system]',
  'requires = ["setuptools>=61"]',
  'build-backend = "setuptools.build_meta"',
  '',
  '[project]',
  'name = "tinypkg"',
  'version = "0.1.0"',
  `description = "foresight eval image test ${NONCE}"`,
  'dependencies = []',
  '',
  '[tool.setuptools]',
  'packages = ["tinypkg"]',
  '',
].join('\n');

const recipe = RecipeSchema.parse({ runner: 'pytest', install: ['pip install -e .'], dependencyFiles: ['pyproject.toml'] });

const TESTS_AT_BASE = [
  'import os',
  'import tinypkg',
  '',
  '',
  'def test_add():',
  '    assert tinypkg.add(2, 3) == 5',
  '',
  '',
  'def test_scale():',
  '    assert tinypkg.scale(2, 3) == 6',
  '',
  '',
  'def test_offline_and_in_place():',
  "    assert sorted(os.listdir('/sys/class/net')) == ['lo']",
  "    assert os.environ['FORESIGHT_PYTHON'] == '/opt/venv/bin/python'",
  '    # the code under test is the checkout pytest runs in, not the env image\'s editable install',
  "    assert os.path.dirname(tinypkg.__file__) == os.path.join(os.getcwd(), 'tinypkg')",
  '',
].join('\n');

/** A container of `image` like an eval one (no network, limits, no capabilities), as `user`. */
async function start(image: string, user = '65534:65534'): Promise<{ c: Docker.Container; sh(script: string): Promise<{ exitCode: number | null; text: string }>; close(): Promise<void> }> {
  const c = await docker.createContainer({
    Image: image,
    Cmd: ['sleep', 'infinity'],
    User: user,
    Env: ['HOME=/tmp'],
    Labels: ownerLabels(),
    NetworkDisabled: true,
    HostConfig: { NetworkMode: 'none', Memory: 1024 ** 3, PidsLimit: 256, SecurityOpt: ['no-new-privileges'], Init: true },
  });
  await c.start();
  return {
    c,
    sh: async (script) => {
      const res = await runExec(c, ['sh', '-c', script], { capture: 'combined', deadlineMs: 120_000 });
      return { exitCode: res.exitCode, text: res.text };
    },
    close: () => forceRemove(docker, c.id),
  };
}

function ready(r: EvalImageResult): Extract<EvalImageResult, { kind: 'ready' }> {
  if (r.kind !== 'ready') throw new Error(`eval image build failed:\n${r.detail}\n(log ${r.log})`);
  return r;
}

const execFileAsync = promisify(execFile);

describe.skipIf(skip)('eval images (real Docker, offline)', () => {
  let repo: GitRepo;
  let logDir: string;
  let envImage: string;
  /** C0 (tagged v0.1) → BASE → PR1 (tagged v1.0) → PR2; FEATURE on a side branch off BASE. */
  let C0: string, BASE: string, FEATURE: string, PR1: string, PR2: string;
  let futureBlob: string;
  const evalImages = new Set<string>();
  let full: Extract<EvalImageResult, { kind: 'ready' }>;

  beforeAll(async () => {
    await ensureBaseImage({ log: (c) => process.stderr.write(c) });
    logDir = await mkdtemp(path.join(tmpdir(), 'foresight-eval-logs-'));
    repo = await gitRepo();
    C0 = await repo.commit({
      files: {
        'pyproject.toml': pyproject,
        'tinypkg/__init__.py': 'def add(a, b):\n    return a + b\n',
        'tests/test_tiny.py': 'import tinypkg\n\n\ndef test_add():\n    assert tinypkg.add(2, 3) == 5\n',
        'README.md': 'tiny\n',
      },
      message: 'C0: start',
      date: DATE,
    });
    await repo.git(['tag', '-a', '-m', 'v0.1', 'v0.1', C0], { GIT_COMMITTER_NAME: 'Dev', GIT_COMMITTER_EMAIL: 'dev@example.com', GIT_COMMITTER_DATE: DATE });
    BASE = await repo.commit({
      files: { 'tinypkg/__init__.py': 'def add(a, b):\n    return a + b\n\n\ndef scale(a, k):\n    return a * k\n', 'tests/test_tiny.py': TESTS_AT_BASE },
      message: 'base',
      date: DATE,
    });
    await repo.git(['checkout', '-q', '-b', 'feature']);
    FEATURE = await repo.commit({ files: { 'feature.txt': 'a side branch\n' }, message: 'feature', date: DATE });
    await repo.git(['checkout', '-q', 'main']);
    PR1 = await repo.commit({
      files: {
        'tinypkg/clamp.py': 'def clamp(x, lo, hi):\n    return max(lo, min(x, hi))\n',
        'tests/test_clamp.py': 'from tinypkg.clamp import clamp\n\n\ndef test_clamp():\n    assert clamp(5, 0, 3) == 3\n',
      },
      message: 'PR1: clamp',
      date: DATE,
    });
    await repo.git(['tag', 'v1.0', PR1]);
    PR2 = await repo.commit({
      files: {
        'tinypkg/clamp.py': 'def clamp(x, lo, hi):\n    if lo > hi:\n        lo, hi = hi, lo\n    return max(lo, min(x, hi))\n',
        'tests/test_edge.py': `# ${FUTURE_MARK}\nfrom tinypkg.clamp import clamp\n\n\ndef test_swapped_bounds():\n    assert clamp(5, 3, 0) == 3\n`,
      },
      message: 'PR2: swapped bounds',
      date: DATE,
    });
    futureBlob = (await repo.git(['rev-parse', `${PR2}:tests/test_edge.py`])).trim();

    const t0 = Date.now();
    const env = await envImageFor({ clone: repo.dir, repo: 'test/evaltiny', commit: BASE, recipe, logDir });
    if (!env.ok) throw new Error(`env image build failed:\n${env.detail}`);
    envImage = env.image;
    console.info(`[eval-image.test] env image ${envImage} ${env.built ? 'built' : 'reused'} in ${Date.now() - t0} ms`);
  }, 600_000);

  afterAll(async () => {
    // Children first: the env image cannot go while eval images are built on it.
    for (const image of evalImages) await docker.getImage(image).remove().catch(() => undefined);
    if (envImage) await applyCachePolicy('base', { used: [envImage] });
    await repo?.remove();
    if (logDir) await rm(logDir, { recursive: true, force: true });
  });

  it('builds foresight-eval:<key> at the base commit: the env, the runner files, the labels', async () => {
    const t0 = Date.now();
    full = ready(await ensureEvalImage({ docker, clone: repo.dir, envImage, baseCommit: BASE, runner: pytestRunner, logDir }));
    evalImages.add(full.image);
    console.info(`[eval-image.test] eval image (history full): built in ${Date.now() - t0} ms, added ${full.addedBytes} bytes (${(full.addedBytes / 1024).toFixed(1)} KiB)`);
    expect(full).toMatchObject({ kind: 'ready', built: true });
    expect(full.image).toBe(`foresight-eval:${full.key}`);
    expect(full.key).toMatch(/^[0-9a-f]{24}$/);
    expect(full.addedBytes).toBeGreaterThan(0);
    expect(full.addedBytes).toBeLessThan(1024 * 1024);
    const log = await readFile(full.log!, 'utf8');
    expect(log).toContain('[foresight] eval image ready');

    const info = await docker.getImage(full.image).inspect();
    expect(info.Config.WorkingDir).toBe('/testbed');
    expect(info.Config.Env).toContain('FORESIGHT_PYTHON=/opt/venv/bin/python');
    expect(info.Config.Env.find((e) => e.startsWith('PATH='))).toMatch(/^PATH=\/opt\/venv\/bin:/);
    expect(info.Config.Labels).toMatchObject({
      [EVAL_KEY_LABEL]: full.key,
      'foresight.eval.commit': BASE,
      'foresight.eval.history': 'full',
      'foresight.tier': '3',
      'foresight.run': '',
      'foresight.pid': '',
    });
  }, 300_000);

  it('the future is absent: no later commit, tag, branch or object; only the base history', async () => {
    const ctr = await start(full.image);
    try {
      const out = async (script: string): Promise<string> => {
        const r = await ctr.sh(script);
        expect(r.exitCode, `${script}\n${r.text}`).toBe(0);
        return r.text.trim();
      };
      const code = async (script: string): Promise<number | null> => (await ctr.sh(script)).exitCode;

      expect(await out('id -u; pwd; ls /sys/class/net')).toBe('65534\n/testbed\nlo');
      for (const sha of [PR1, PR2, FEATURE, futureBlob]) expect(await code(`git cat-file -e ${sha}`)).not.toBe(0);
      expect(await out('git rev-parse HEAD')).toBe(BASE);
      expect(await code('git symbolic-ref -q HEAD')).not.toBe(0); // detached
      expect(await out('git for-each-ref')).toBe('');
      expect(await out('git tag; git remote')).toBe(''); // and, above, no branch
      expect(await out('git fsck --unreachable --no-reflogs --no-progress 2>&1')).toBe('');
      expect((await out('git log --all --format=%H')).split('\n')).toEqual([BASE, C0]);
      expect((await out('git rev-list --all')).split('\n')).toEqual([BASE, C0]);
      expect(await out('git reflog')).toBe('');
      const inGitDir = (await out('ls -A .git')).split('\n');
      for (const f of ['logs', 'FETCH_HEAD', 'ORIG_HEAD', 'shallow']) expect(inGitDir).not.toContain(f);
      expect(await out('ls .git/objects/pack | grep -c "\\.pack$"')).toBe('1');
      // Every stored object, loose or packed, is reachable from the base.
      const stored = (await out("git cat-file --batch-all-objects --batch-check='%(objectname)'")).split('\n').sort();
      const reachable = [...new Set((await out('git rev-list --objects HEAD')).split('\n').map((l) => l.split(' ')[0]!))].sort();
      expect(stored).toEqual(reachable);
      expect(await out(`git grep -c ${FUTURE_MARK} $(git rev-list --all) || true`)).toBe('');
      expect(await out('git status --porcelain --untracked-files=all')).toBe('');
      expect(await out('stat -c %u:%g /testbed /testbed/.git /testbed/tinypkg/__init__.py')).toBe('65534:65534\n65534:65534\n65534:65534');
      // Host modules stay out; what runs in the container (scripts, mocha's CommonJS reporter) is baked.
      expect(await out('test -f /foresight/pytest/run_state.sh && test -f /foresight/checkout.sh && test -f /foresight/mocha/foresight-json.cjs && find /foresight -name "*.ts" -o -name "*.js" | wc -l')).toBe('0');
      expect(await code('touch /foresight/x')).not.toBe(0); // the primitive is not the agent's to edit
    } finally {
      await ctr.close();
    }
  }, 120_000);

  it('pytest runs on /testbed in place, offline as nobody, and the tests pass', async () => {
    const ctr = await start(full.image);
    try {
      const run = await ctr.sh(
        'cd /testbed && "$FORESIGHT_PYTHON" -m pytest -p no:cacheprovider -o junit_family=xunit1 --junitxml=/tmp/r.xml -q tests/test_tiny.py',
      );
      expect(run.exitCode, run.text).toBe(0);
      const junit = await runExec(ctr.c, ['cat', '/tmp/r.xml'], { capture: 'stdout' });
      const parsed = pytestRunner.parse({ junitXml: junit.text, output: run.text, testFiles: ['tests/test_tiny.py'] });
      expect(parsed).toEqual({
        tests: { 'tests/test_tiny.py::test_add': 'pass', 'tests/test_tiny.py::test_scale': 'pass', 'tests/test_tiny.py::test_offline_and_in_place': 'pass' },
        collectionErrors: [],
      });
    } finally {
      await ctr.close();
    }
  }, 120_000);

  it('the baked run_state.sh works offline from the image alone (its /src pointed at /testbed/.git)', async () => {
    // run_state.sh clones /src into /tmp/testbed: give it the image's own store (root, test only), run it as nobody.
    const ctr = await start(full.image, '0:0');
    try {
      const link = await ctr.sh('rmdir /src && ln -s /testbed/.git /src');
      expect(link.exitCode, link.text).toBe(0);
      const run = await ctr.sh(
        `setpriv --reuid=65534 --regid=65534 --clear-groups env HOME=/tmp sh /foresight/${pytestRunner.script} ${BASE} - /tmp/r.xml tests/test_tiny.py tests/test_clamp.py`,
      );
      expect(run.exitCode, run.text).toBe(0);
      const junit = await runExec(ctr.c, ['cat', '/tmp/r.xml'], { capture: 'stdout' });
      const parsed = pytestRunner.parse({ junitXml: junit.text, output: run.text, testFiles: ['tests/test_tiny.py', 'tests/test_clamp.py'] });
      expect(parsed.tests).toEqual({ 'tests/test_tiny.py::test_add': 'pass', 'tests/test_tiny.py::test_scale': 'pass', 'tests/test_tiny.py::test_offline_and_in_place': 'pass' });
      // PR1's commit cannot be checked out: it is not in the image.
      const future = await ctr.sh(`setpriv --reuid=65534 --regid=65534 --clear-groups env HOME=/tmp sh /foresight/${pytestRunner.script} ${PR1} - /tmp/r2.xml tests/test_clamp.py`);
      expect(future.exitCode).toBe(91);
      expect(future.text).toContain(`commit ${PR1} is not in /src`);
    } finally {
      await ctr.close();
    }
  }, 120_000);

  it('a second call reuses the image quickly; another base commit or history mode gets another tag', async () => {
    const t0 = Date.now();
    const again = ready(await ensureEvalImage({ docker, clone: repo.dir, envImage, baseCommit: BASE, runner: pytestRunner, logDir }));
    expect(again).toMatchObject({ image: full.image, key: full.key, built: false, addedBytes: full.addedBytes, log: full.log });
    expect(Date.now() - t0).toBeLessThan(5_000);

    const t1 = Date.now();
    const depth1 = ready(await ensureEvalImage({ docker, clone: repo.dir, envImage, baseCommit: BASE, runner: pytestRunner, history: 'depth1', logDir }));
    evalImages.add(depth1.image);
    console.info(`[eval-image.test] eval image (history depth1): built in ${Date.now() - t1} ms, added ${depth1.addedBytes} bytes (${(depth1.addedBytes / 1024).toFixed(1)} KiB)`);
    expect(depth1).toMatchObject({ built: true });
    expect(depth1.image).not.toBe(full.image);

    const t2 = Date.now();
    const atC0 = ready(await ensureEvalImage({ docker, clone: repo.dir, envImage, baseCommit: C0, runner: pytestRunner, logDir }));
    evalImages.add(atC0.image);
    console.info(`[eval-image.test] eval image at C0 (history full): built in ${Date.now() - t2} ms`);
    expect(atC0.built).toBe(true);
    expect(new Set([full.image, depth1.image, atC0.image]).size).toBe(3);

    const ctr = await start(depth1.image);
    try {
      const r = await ctr.sh(
        'git rev-list --count HEAD; git rev-parse HEAD; cat .git/shallow; git for-each-ref; git fsck --unreachable --no-reflogs --no-progress 2>&1; git status --porcelain',
      );
      expect(r.exitCode, r.text).toBe(0);
      expect(r.text.trim()).toBe(`1\n${BASE}\n${BASE}`);
      expect((await ctr.sh(`git cat-file -e ${C0}`)).exitCode).not.toBe(0);
    } finally {
      await ctr.close();
    }
    const c0 = await start(atC0.image);
    try {
      const r = await c0.sh(`git rev-parse HEAD; git rev-list --all; git cat-file -e ${BASE} || echo no-base`);
      expect(r.text.trim()).toBe(`${C0}\n${C0}\nno-base`);
    } finally {
      await c0.close();
    }
  }, 300_000);

  it('a clone lacking old objects (made from a partial clone) gets the depth-1 image; one lacking the base tree fails up front', async () => {
    const partial = await mkdtemp(path.join(tmpdir(), 'foresight-partial-'));
    try {
      await repo.git(['config', 'uploadpack.allowFilter', 'true']);
      const g = (...args: string[]) => execFileAsync('git', ['-C', partial, ...args]);
      await execFileAsync('git', ['clone', '-q', '--no-checkout', '--filter=blob:none', `file://${repo.dir}`, partial]);
      await g('-c', 'advice.detachedHead=false', 'checkout', '-q', PR1); // fetches PR1's blobs only: C0's are never fetched
      await g('remote', 'remove', 'origin');
      const lines: string[] = [];
      const r = ready(await ensureEvalImage({ docker, clone: partial, envImage, baseCommit: PR1, runner: pytestRunner, logDir, log: (l) => lines.push(l) }));
      evalImages.add(r.image);
      expect(r).toMatchObject({ history: 'depth1', built: true });
      expect(lines.join('')).toMatch(/the clone lacks \d+ object\(s\) of the history up to/);
      expect((await docker.getImage(r.image).inspect()).Config.Labels?.[EVAL_HISTORY_LABEL]).toBe('depth1');
      // FEATURE's own file was never fetched: nothing to build from.
      const side = await ensureEvalImage({ docker, clone: partial, envImage, baseCommit: FEATURE, runner: pytestRunner, logDir });
      expect(side).toMatchObject({ kind: 'failed', reason: 'clone_incomplete' });
      if (side.kind === 'failed') expect(side.detail).toContain(`object(s) of ${FEATURE}'s own tree`);
    } finally {
      await rm(partial, { recursive: true, force: true });
    }
  }, 120_000);

  it('the recipe\'s test environment is baked into the image, so every grading runs as validation did', async () => {
    const testEnv = { PYTEST_ADDOPTS: '-W ignore::DeprecationWarning -p no:cacheprovider', QUOTED: 'a "quoted" $value' };
    const withEnv = ready(await ensureEvalImage({ docker, clone: repo.dir, envImage, baseCommit: BASE, runner: pytestRunner, testEnv, logDir }));
    evalImages.add(withEnv.image);
    expect(withEnv.image).not.toBe(full.image);
    const ctr = await start(withEnv.image);
    try {
      const r = await ctr.sh('printf "%s|%s" "$PYTEST_ADDOPTS" "$QUOTED"');
      expect(r.text).toBe(`${testEnv.PYTEST_ADDOPTS}|${testEnv.QUOTED}`);
    } finally {
      await ctr.close();
    }
  }, 120_000);

  it('a base commit missing from the clone is a failed build with the log, not an exception', async () => {
    const missing = 'f'.repeat(40);
    const r = await ensureEvalImage({ docker, clone: repo.dir, envImage, baseCommit: missing, runner: pytestRunner, logDir });
    expect(r.kind).toBe('failed');
    if (r.kind !== 'failed') return;
    evalImages.add(r.image);
    expect(r.reason).toBe('build_failed');
    expect(r.detail).toContain(`commit ${missing} is not in the clone mounted at /src`);
    expect(await readFile(r.log, 'utf8')).toContain('FAILED');
    await expect(docker.getImage(r.image).inspect()).rejects.toMatchObject({ statusCode: 404 });
    const left = await docker.listContainers({ all: true, filters: { label: [`${EVAL_KEY_LABEL}=${r.key}`] } });
    expect(left).toEqual([]);
  }, 120_000);

  it('an invalid base commit or a missing env image throws a ForesightError', async () => {
    await expect(ensureEvalImage({ docker, clone: repo.dir, envImage, baseCommit: 'HEAD', runner: pytestRunner })).rejects.toBeInstanceOf(ForesightError);
    await expect(
      ensureEvalImage({ docker, clone: repo.dir, envImage: `foresight-env:missing${NONCE}`, baseCommit: BASE, runner: pytestRunner }),
    ).rejects.toThrow(/is not present/);
  });
});

describe('Docker down', () => {
  it('ensureEvalImage throws a ForesightError', async () => {
    const down = new Docker({ socketPath: '/nonexistent/docker.sock' });
    const err = await ensureEvalImage({ docker: down, clone: '/nonexistent', envImage: 'foresight-env:x', baseCommit: 'a'.repeat(40), runner: pytestRunner }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ForesightError);
    expect((err as ForesightError).external).toBe(true);
  });
});
