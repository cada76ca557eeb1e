/**
 * Real Docker: grading agents' patches in a tier-3 eval image. A generated repository
 * (real git): BASE → PR1 (adds clamp and its test) → PR2 (fixes swapped bounds, adds the held-out test).
 * The env image is built offline from the machine's local wheels, the eval image at BASE; the grading
 * bundle holds PR1's test files (X) and PR2's (Y), as emit ships them. Everything made here is removed.
 * Skipped only when the daemon is unreachable AND CI is unset; in CI a missing daemon fails loudly.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  applyCachePolicy,
  connectDocker,
  ensureBaseImage,
  ensureEvalImage,
  envImageFor,
  gradeInstance,
  isDockerReachable,
  type GradeResult,
  type GradingBundle,
} from '../../../core/env/index.ts';
import { PID_LABEL } from '../../../core/env/container/cleanup.ts';
import { RecipeSchema } from '../../../core/env/recipes/schema.ts';
import { pytestRunner } from '../../../core/env/runners/pytest/index.ts';
import { gitRepo, type GitRepo } from '../../helpers/git-repo.ts';

const docker = connectDocker();
const reachable = await isDockerReachable(docker);
const skip = !reachable && !process.env['CI'];
if (skip) console.warn('[grade.test] SKIPPED: Docker is not reachable and CI is unset (start dockerd to run these tests)');

const DATE = '2024-01-01T00:00:00Z';
const NONCE = randomBytes(6).toString('hex');

const pyproject = [
  '[build-system]',
  'requires = ["setuptools>=61"]',
  'build-backend = "setuptools.build_meta"',
  '',
  '[project]',
  'name = "gradepkg"',
  'version = "0.1.0"',
  `description = "foresight grading test ${NONCE}"`,
  'dependencies = []',
  '',
  '[tool.setuptools]',
  'packages = ["gradepkg"]',
  '',
].join('\n');
const recipe = RecipeSchema.parse({ runner: 'pytest', install: ['pip install -e .'], dependencyFiles: ['pyproject.toml'] });

const TINY = 'tests/test_tiny.py';
const CLAMP = 'tests/test_clamp.py';
const EDGE = 'tests/test_edge.py';
const F2P = [`${CLAMP}::test_clamp`];
const P2P = [`${TINY}::test_add`];
const ANTI = [`${EDGE}::test_swapped_bounds`];

function graded(r: GradeResult): Extract<GradeResult, { kind: 'graded' }> {
  if (r.kind !== 'graded') throw new Error(`expected a graded result, got ${r.kind}: ${r.detail}`);
  return r;
}

describe.skipIf(skip)('gradeInstance (real Docker, offline)', () => {
  let repo: GitRepo;
  let logDir: string;
  let envImage = '';
  let evalImage = '';
  let BASE: string, PR1: string, PR2: string;
  /** PR1's and PR2's source diffs against BASE: the gold patch, and the gold patch plus the edge-case fix. */
  let gold: string, goldPlusFix: string;
  let bundle: GradingBundle;

  const show = async (rev: string, file: string): Promise<string> => repo.git(['show', `${rev}:${file}`]);
  const grade = (patch: string, over: Partial<Parameters<typeof gradeInstance>[0]> = {}): Promise<GradeResult> =>
    gradeInstance({ docker, image: evalImage, runner: pytestRunner, patch, bundle, f2p: F2P, p2p: P2P, anti: ANTI, limits: { timeoutSec: 60 }, ...over });

  beforeAll(async () => {
    await ensureBaseImage({ log: (c) => process.stderr.write(c) });
    logDir = await mkdtemp(path.join(tmpdir(), 'foresight-grade-logs-'));
    repo = await gitRepo();
    BASE = await repo.commit({
      files: {
        'pyproject.toml': pyproject,
        'gradepkg/__init__.py': 'def add(a, b):\n    return a + b\n',
        [TINY]: 'import gradepkg\n\n\ndef test_add():\n    assert gradepkg.add(2, 3) == 5\n',
      },
      message: 'base',
      date: DATE,
    });
    PR1 = await repo.commit({
      files: {
        'gradepkg/clamp.py': 'def clamp(x, lo, hi):\n    return max(lo, min(x, hi))\n',
        [CLAMP]: 'from gradepkg.clamp import clamp\n\n\ndef test_clamp():\n    assert clamp(5, 0, 3) == 3\n',
      },
      message: 'PR1: clamp',
      date: DATE,
    });
    PR2 = await repo.commit({
      files: {
        'gradepkg/clamp.py': 'def clamp(x, lo, hi):\n    if lo > hi:\n        lo, hi = hi, lo\n    return max(lo, min(x, hi))\n',
        [EDGE]: 'from gradepkg.clamp import clamp\n\n\ndef test_swapped_bounds():\n    assert clamp(-5, 3, 0) == 0\n',
      },
      message: 'PR2: swapped bounds',
      date: DATE,
    });
    gold = await repo.git(['diff', BASE, PR1, '--', 'gradepkg']);
    goldPlusFix = await repo.git(['diff', BASE, PR2, '--', 'gradepkg']);
    bundle = {
      version: 1,
      x: {
        files: [
          { path: TINY, encoding: 'utf8', content: await show(PR1, TINY) },
          { path: CLAMP, encoding: 'base64', content: Buffer.from(await show(PR1, CLAMP)).toString('base64') },
        ],
        run: [TINY, CLAMP],
      },
      y: { files: [{ path: EDGE, encoding: 'utf8', content: await show(PR2, EDGE) }], run: [EDGE] },
    };

    const env = await envImageFor({ clone: repo.dir, repo: 'test/gradetiny', commit: BASE, recipe, logDir });
    if (!env.ok) throw new Error(`env image build failed:\n${env.detail}`);
    envImage = env.image;
    const ev = await ensureEvalImage({ docker, clone: repo.dir, envImage, baseCommit: BASE, runner: pytestRunner, logDir });
    if (ev.kind !== 'ready') throw new Error(`eval image build failed:\n${ev.detail}`);
    evalImage = ev.image;
  }, 600_000);

  afterAll(async () => {
    if (evalImage) await docker.getImage(evalImage).remove().catch(() => undefined);
    if (envImage) await applyCachePolicy('base', { used: [envImage] });
    await repo?.remove();
    if (logDir) await rm(logDir, { recursive: true, force: true });
  });

  /** The bundle plus an X test that sleeps a minute. */
  const slowBundle = (): GradingBundle => ({
    ...bundle,
    x: {
      files: [...bundle.x.files, { path: 'tests/test_slow.py', encoding: 'utf8', content: 'import time\n\n\ndef test_slow():\n    time.sleep(60)\n' }],
      run: [...bundle.x.run, 'tests/test_slow.py'],
    },
  });
  const leftContainers = async (): Promise<unknown[]> => docker.listContainers({ all: true, filters: { label: [`${PID_LABEL}=${process.pid}`] } });

  it('the gold patch with the bundle gives X = 1, Y = 0, no PASS_TO_PASS regression; the container is gone', async () => {
    const r = graded(await grade(gold));
    expect(r.x).toEqual({ kind: 'scored', value: 1, passed: 1, total: 1 });
    expect(r.y).toEqual({ kind: 'scored', value: 0, passed: 0, total: 1 });
    expect(r.gap).toBe(1);
    expect(r.f2p).toEqual({ [F2P[0]!]: 'pass' });
    expect(r.p2p).toEqual({ [P2P[0]!]: 'pass' });
    expect(r.anti).toEqual({ [ANTI[0]!]: 'fail' });
    expect(r.p2pRegressions).toEqual([]);
    expect(r.reset).toEqual([]);
    expect(r.tampered).toEqual([]);
    expect(r.applyLog).toContain('Applied patch gradepkg/clamp.py cleanly');
    expect(r.runs.x?.problem).toBeNull();
    expect(r.runs.x?.tests).toEqual({ [P2P[0]!]: 'pass', [F2P[0]!]: 'pass' });
    expect(await leftContainers()).toEqual([]);
  }, 120_000);

  it('an empty patch gives X = 0 (PR1\'s test cannot import what PR1 adds): evidence, not infra', async () => {
    const r = graded(await grade(''));
    expect(r.applyLog).toContain('empty patch');
    expect(r.x).toEqual({ kind: 'scored', value: 0, passed: 0, total: 1 });
    expect(r.f2p[F2P[0]!]).not.toBe('pass');
    expect(r.runs.x?.collectionErrors).toEqual([CLAMP]);
    expect(r.p2pRegressions).toEqual([]);
    expect(r.y).toMatchObject({ kind: 'scored', value: 0 });
  }, 120_000);

  it('a patch that does not apply is patch_failed with git\'s message, scored X = Y = 0', async () => {
    const wrong = ['diff --git a/gradepkg/__init__.py b/gradepkg/__init__.py', '--- a/gradepkg/__init__.py', '+++ b/gradepkg/__init__.py', '@@ -1,2 +1,2 @@', '-def add(a, b, c):', '-    return a + b + c', '+def add(a, b):', '+    return a - b', ''].join('\n');
    const r = await grade(wrong);
    expect(r.kind).toBe('patch_failed');
    if (r.kind !== 'patch_failed') return;
    expect(r.detail).toMatch(/patch failed: gradepkg\/__init__.py:1/);
    expect(r.detail).toMatch(/gradepkg\/__init__.py: patch does not apply/);
    expect(r.x).toEqual({ kind: 'scored', value: 0, passed: 0, total: 1 });
    expect(r.y).toEqual({ kind: 'scored', value: 0, passed: 0, total: 1 });
    expect(r.gap).toBe(0);
    expect(await leftContainers()).toEqual([]);
  }, 120_000);

  it('test files the patch edits or adds are reset before the bundle is laid: the agent cannot grade itself', async () => {
    // The agent "fixes" PR1's test and writes its own version of the held-out test, and breaks test_add.
    await repo.git(['checkout', '-q', '-b', `agent-${NONCE}`, BASE]);
    const agent = await repo.commit({
      files: {
        'gradepkg/clamp.py': 'def clamp(x, lo, hi):\n    return x\n',
        [CLAMP]: 'def test_clamp():\n    assert True\n',
        [EDGE]: 'def test_swapped_bounds():\n    assert True\n',
        [TINY]: 'def test_add():\n    assert True\n',
      },
      message: 'agent',
      date: DATE,
    });
    await repo.git(['checkout', '-q', 'main']);
    const sneaky = await repo.git(['diff', BASE, agent]);
    const r = graded(await grade(sneaky));
    expect([...r.reset].sort()).toEqual([CLAMP, EDGE, TINY].sort());
    expect(r.applyLog).toMatch(/reset tests\/test_tiny\.py/);
    expect(r.applyLog).toMatch(/removed tests\/test_edge\.py/);
    // The bundle's tests graded the agent's clamp (which does not clamp): X = 0, Y = 0.
    expect(r.x).toEqual({ kind: 'scored', value: 0, passed: 0, total: 1 });
    expect(r.f2p[F2P[0]!]).toBe('fail');
    expect(r.p2p[P2P[0]!]).toBe('pass');
    expect(r.y).toEqual({ kind: 'scored', value: 0, passed: 0, total: 1 });
  }, 120_000);

  it("pytest's configuration is the row's gold version: the agent's change to its table is undone and flagged, the rest of its edit stays", async () => {
    // The row's own patch adds a pytest setting; the agent changes the pytest table and the project's version.
    const section = '\n[tool.pytest.ini_options]\nmarkers = ["gold_marker: from the row"]\n';
    const rowPatch = await repo.git(['diff', BASE, PR1, '--', 'gradepkg']) + [
      'diff --git a/pyproject.toml b/pyproject.toml', '--- a/pyproject.toml', '+++ b/pyproject.toml', `@@ -12,1 +12,${1 + section.split('\n').length - 1} @@`, ' packages = ["gradepkg"]',
      ...section.split('\n').slice(0, -1).map((l) => `+${l}`), '',
    ].join('\n');
    const agentToml = pyproject.replace('version = "0.1.0"', 'version = "9.9.9"') + '\n[tool.pytest.ini_options]\naddopts = "-p forge_plugin"\n';
    await repo.git(['checkout', '-q', '-b', `toml-${NONCE}`, BASE]);
    const agent = await repo.commit({ files: { 'pyproject.toml': agentToml, 'gradepkg/clamp.py': 'def clamp(x, lo, hi):\n    return max(lo, min(x, hi))\n' }, message: 'agent', date: DATE });
    await repo.git(['checkout', '-q', 'main']);
    const probe = 'def test_config():\n    text = open("pyproject.toml").read()\n    assert "gold_marker" in text and "forge_plugin" not in text and \'version = "9.9.9"\' in text\n';
    const probed: GradingBundle = { ...bundle, x: { files: [...bundle.x.files, { path: 'tests/test_probe.py', encoding: 'utf8', content: probe }], run: [...bundle.x.run, 'tests/test_probe.py'] } };
    const r = graded(await grade(await repo.git(['diff', BASE, agent]), { goldPatch: rowPatch, bundle: probed, p2p: [...P2P, 'tests/test_probe.py::test_config'] }));
    expect(r.p2p['tests/test_probe.py::test_config'], r.runs.x?.outputTail).toBe('pass');
    expect(r.tampered).toEqual([{ path: 'pyproject.toml', action: 'sections' }]);
    expect(r.x).toMatchObject({ kind: 'scored', value: 1 });
  }, 120_000);

  it('Y = 0 with the gold patch, Y = 1 with a patch that also fixes the edge case', async () => {
    const r = graded(await grade(goldPlusFix));
    expect(r.x).toMatchObject({ kind: 'scored', value: 1 });
    expect(r.y).toEqual({ kind: 'scored', value: 1, passed: 1, total: 1 });
    expect(r.anti).toEqual({ [ANTI[0]!]: 'pass' });
    expect(r.gap).toBe(0);
  }, 120_000);

  it('a test that sleeps past the timeout is run once more, then makes X infra (timeout), not 0 %', async () => {
    const t0 = Date.now();
    const r = graded(await grade(gold, { bundle: slowBundle(), limits: { timeoutSec: 4 } }));
    expect(Date.now() - t0).toBeLessThan(80_000);
    expect(r.x).toMatchObject({ kind: 'infra', reason: 'timeout' });
    expect(r.runs.x?.kind).toBe('timeout');
    expect(r.runs.x?.attempts).toBe(2);
    expect(r.p2pRegressions).toBeNull();
    expect(r.gap).toBeNull();
    // The Y run still ran, in a container of its own.
    expect(r.y).toEqual({ kind: 'scored', value: 0, passed: 0, total: 1 });
    expect(r.runs.y?.attempts).toBe(1);
    expect(await leftContainers()).toEqual([]);
  }, 120_000);

  it('bundle files are laid as the eval user (0644, uid 65534), paths longer than 100 bytes included', async () => {
    const deep = `tests/${'d'.repeat(60)}/${'e'.repeat(50)}/test_long_${NONCE}.py`;
    expect(Buffer.byteLength(deep)).toBeGreaterThan(100);
    const probe = [
      'import os, stat',
      '',
      '',
      'def test_owner_and_mode():',
      '    st = os.stat(__file__)',
      '    assert (st.st_uid, st.st_gid, stat.S_IMODE(st.st_mode)) == (65534, 65534, 0o644)',
      '    parent = os.stat(os.path.dirname(__file__))',
      '    assert (parent.st_uid, stat.S_IMODE(parent.st_mode)) == (65534, 0o755)',
      '',
    ].join('\n');
    const withDeep: GradingBundle = { ...bundle, x: { files: [...bundle.x.files, { path: deep, encoding: 'utf8', content: probe }], run: [...bundle.x.run, deep] } };
    const r = graded(await grade(gold, { bundle: withDeep, p2p: [...P2P, `${deep}::test_owner_and_mode`] }));
    expect(r.p2p).toEqual({ [P2P[0]!]: 'pass', [`${deep}::test_owner_and_mode`]: 'pass' });
    expect(r.x).toMatchObject({ kind: 'scored', value: 1 });
  }, 120_000);

  it('an abort mid-run removes the container at once and throws the abort reason', async () => {
    const ac = new AbortController();
    const t0 = Date.now();
    const p = grade(gold, { signal: ac.signal, bundle: slowBundle() });
    setTimeout(() => ac.abort(new Error(`stop ${NONCE}`)), 3000);
    await expect(p).rejects.toThrow(`stop ${NONCE}`);
    expect(Date.now() - t0).toBeLessThan(30_000);
    // removeOnAbort removes it at once; give the daemon a moment.
    for (let i = 0; i < 50 && (await leftContainers()).length; i++) await new Promise((r) => setTimeout(r, 100));
    expect(await leftContainers()).toEqual([]);
  }, 120_000);

  it('a missing eval image throws a ForesightError naming it', async () => {
    await expect(grade(gold, { image: `foresight-eval:missing${NONCE}` })).rejects.toThrow(/eval image foresight-eval:missing.* is not present/);
  });
});
