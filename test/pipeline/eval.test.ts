/**
 * `foresight eval` on a small hand-made dataset folder (jsonl/test.jsonl, jsonl/verified.jsonl) whose rows
 * point at an eval image built here from a generated repository (real git, real Docker, offline): the
 * predictions file is checked line by line, unknown instances are refused, grading resumes from its
 * checkpoint, and the CLI prints the table and exits 0. Reading predictions and rows: eval-rows.test.ts.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyCachePolicy, connectDocker, ensureBaseImage, ensureEvalImage, envImageFor, isDockerReachable, type GradingBundle } from '../../core/env/index.ts';
import { RecipeSchema } from '../../core/env/recipes/schema.ts';
import { pytestRunner } from '../../core/env/runners/pytest/index.ts';
import { formatReport, runEval, type EvalOptions } from '../../pipeline/eval/index.ts';
import { datasetIn, evalOptsWith, jsonl, row } from '../helpers/eval-dataset.ts';
import { copyProject } from '../helpers/code-copy.ts';
import { gitRepo, type GitRepo } from '../helpers/git-repo.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const docker = connectDocker();
const reachable = await isDockerReachable(docker);
const skip = !reachable && !process.env['CI'];
if (skip) console.warn('[eval.test] SKIPPED (Docker parts): Docker is not reachable and CI is unset');

const DATE = '2024-01-01T00:00:00Z';
const NONCE = randomBytes(6).toString('hex');

let scratch: string;
beforeAll(async () => {
  scratch = await mkdtemp(path.join(tmpdir(), 'foresight-eval-test-'));
});
afterAll(async () => {
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

const datasetDir = (name: string, splits: { test?: unknown[]; verified?: unknown[] }): Promise<string> => datasetIn(scratch, name, splits);
const evalOpts = (dataset: string, predictions: EvalOptions['predictions'], over: Partial<EvalOptions> = {}): EvalOptions => evalOptsWith(docker, dataset, predictions, over);

describe.skipIf(skip)('grading a dataset (real Docker, offline)', () => {
  let repo: GitRepo;
  let logDir: string;
  let envImage = '';
  let evalImage = '';
  let dataset: string;
  let fixPatch: string;

  beforeAll(async () => {
    await ensureBaseImage({ log: (c) => process.stderr.write(c) });
    logDir = await mkdtemp(path.join(tmpdir(), 'foresight-eval-cmd-logs-'));
    repo = await gitRepo();
    const pyproject = `[build-system]\nrequires = ["setuptools>=61"]\nbuild-backend = "setuptools.build_meta"\n\n[project]\nname = "evalpkg"\nversion = "0.1.0"\ndescription = "foresight eval command test ${NONCE}"\ndependencies = []\n\n[tool.setuptools]\npackages = ["evalpkg"]\n`;
    const BASE = await repo.commit({
      files: { 'pyproject.toml': pyproject, 'evalpkg/__init__.py': '', 'tests/test_base.py': 'def test_base():\n    assert True\n' },
      message: 'base',
      date: DATE,
    });
    const PR1 = await repo.commit({
      files: {
        'evalpkg/words.py': 'def shout(s):\n    return s.upper() + "!"\n',
        'tests/test_words.py': 'from evalpkg.words import shout\n\n\ndef test_shout():\n    assert shout("hi") == "HI!"\n',
      },
      message: 'PR1',
      date: DATE,
    });
    const PR2 = await repo.commit({
      files: {
        'evalpkg/words.py': 'def shout(s):\n    return s.strip().upper() + "!"\n',
        'tests/test_strip.py': 'from evalpkg.words import shout\n\n\ndef test_shout_strips():\n    assert shout(" hi ") == "HI!"\n',
      },
      message: 'PR2',
      date: DATE,
    });
    const gold = await repo.git(['diff', BASE, PR1, '--', 'evalpkg']);
    fixPatch = await repo.git(['diff', BASE, PR2, '--', 'evalpkg']);
    const show = (rev: string, f: string): Promise<string> => repo.git(['show', `${rev}:${f}`]);
    const bundle: GradingBundle = {
      version: 1,
      x: { files: [{ path: 'tests/test_words.py', encoding: 'utf8', content: await show(PR1, 'tests/test_words.py') }], run: ['tests/test_base.py', 'tests/test_words.py'] },
      y: { files: [{ path: 'tests/test_strip.py', encoding: 'utf8', content: await show(PR2, 'tests/test_strip.py') }], run: ['tests/test_strip.py'] },
    };
    const recipe = RecipeSchema.parse({ runner: 'pytest', install: ['pip install -e .'], dependencyFiles: ['pyproject.toml'] });
    const env = await envImageFor({ clone: repo.dir, repo: 'test/evalcmd', commit: BASE, recipe, logDir });
    if (!env.ok) throw new Error(`env image build failed:\n${env.detail}`);
    envImage = env.image;
    const ev = await ensureEvalImage({ docker, clone: repo.dir, envImage, baseCommit: BASE, runner: pytestRunner, logDir });
    if (ev.kind !== 'ready') throw new Error(`eval image build failed:\n${ev.detail}`);
    evalImage = ev.image;
    const r = (id: string, over: Record<string, unknown> = {}): Record<string, unknown> =>
      row(id, {
        docker_image: evalImage,
        base_commit: BASE,
        patch: gold,
        FAIL_TO_PASS: JSON.stringify(['tests/test_words.py::test_shout']),
        PASS_TO_PASS: JSON.stringify(['tests/test_base.py::test_base']),
        ANTICIPATION_FAIL_TO_PASS: JSON.stringify(['tests/test_strip.py::test_shout_strips']),
        grading_bundle: JSON.stringify(bundle),
        ...over,
      });
    // PR1 merge dates on both sides of 2024-02-01 (--merged-after); eval's grading keys do not read them.
    dataset = await datasetDir('dataset', {
      test: [r('evalcmd__1-2', { created_at: '2024-01-10T09:00:00+01:00' }), r('evalcmd__1-3', { created_at: '2024-03-01T12:00:00Z' })],
      verified: [r('evalcmd__1-2', { gradeable: true, created_at: '2024-01-10T09:00:00+01:00' }), { instance_id: 'evalcmd__5-6', gradeable: false, docker_image: '', created_at: '2024-03-01T12:00:00Z' }],
    });
  }, 600_000);

  afterAll(async () => {
    if (evalImage) await docker.getImage(evalImage).remove().catch(() => undefined);
    if (envImage) await applyCachePolicy('base', { used: [envImage] });
    await repo?.remove();
    if (logDir) await rm(logDir, { recursive: true, force: true });
  });

  it('--gold: X = 100 %, Y = 0 % on every row; a rerun grades nothing and gives the same report', async () => {
    const first = await runEval(evalOpts(dataset, 'gold'));
    expect(first).toMatchObject({ graded: 2, reused: 0 });
    expect(first.reportPath).toBe(path.join(dataset, 'eval', 'test-gold', 'report.json'));
    const { report } = first;
    expect(report.aggregate).toMatchObject({ instances: 2, patch_failed: 0, infra: 0, mean_X: 1, mean_Y: 0, mean_gap: 1 });
    for (const i of report.instances) {
      expect(i).toMatchObject({ kind: 'graded', X: 1, Y: 0, gap: 1, p2p_regressions: [] });
      expect(i.tests).toEqual({
        FAIL_TO_PASS: { 'tests/test_words.py::test_shout': 'pass' },
        PASS_TO_PASS: { 'tests/test_base.py::test_base': 'pass' },
        ANTICIPATION_FAIL_TO_PASS: { 'tests/test_strip.py::test_shout_strips': 'fail' },
      });
      expect(i.apply_log).toContain('Applied patch evalpkg/words.py cleanly');
    }
    expect(JSON.parse(await readFile(first.reportPath, 'utf8'))).toEqual(JSON.parse(JSON.stringify(report)));

    const t0 = Date.now();
    const again = await runEval(evalOpts(dataset, 'gold'));
    expect(again).toMatchObject({ graded: 0, reused: 2 });
    expect(Date.now() - t0).toBeLessThan(5_000);
    expect(again.report.instances).toEqual(report.instances);
  }, 300_000);

  it('--merged-after 2024-02-01 grades only the later row; the earlier one keeps its checkpointed grade for a run without the flag', async () => {
    const cut = await runEval(evalOpts(dataset, 'gold', { mergedAfter: '2024-02-01T00:00:00.000Z' }));
    // Graded by the test above, or here when this test runs alone.
    expect(cut.graded + cut.reused).toBe(1);
    expect(cut.reportPath).toBe(path.join(dataset, 'eval', 'test-gold', 'report-merged-after-2024-02-01.json'));
    expect(cut.report.instances.map((i) => [i.instance_id, i.X, i.Y])).toEqual([['evalcmd__1-3', 1, 0]]);
    expect(cut.report.merged_after).toEqual({ date: '2024-02-01T00:00:00.000Z', left_out: 1, of: 2, predictions_left_out: 0, instances: ['evalcmd__1-2'] });
    expect(cut.report.aggregate).toMatchObject({ total: 1, instances: 1, mean_X: 1, mean_Y: 0, mean_gap: 1, n_X: 1 });
    expect(cut.report.skipped).toEqual({ no_prediction: [], not_gradeable: [] });
    expect(formatReport(cut.report)).toMatch(/--merged-after 2024-02-01: 1 of 2 row\(s\) left out \(PR1 merged before it\); X, Y and gap are over the 1 left\n/);
    const all = await runEval(evalOpts(dataset, 'gold'));
    expect(all).toMatchObject({ graded: cut.graded === 1 ? 1 : 0, reused: cut.graded === 1 ? 1 : 2 });
    expect(all.report.merged_after).toBeNull();
    expect(all.report.instances.map((i) => i.instance_id)).toEqual(['evalcmd__1-2', 'evalcmd__1-3']);
  }, 300_000);

  it('a one-line change to the grader (core/env/container/grade.ts) makes a rerun grade every row again', async () => {
    const copy = await copyProject();
    // A dataset of its own (with the checkpoint so far): the regrade must not replace the other tests' checkpoint.
    const own = path.join(scratch, 'dataset-for-code-copy');
    await cp(dataset, own, { recursive: true });
    try {
      type EvalModule = typeof import('../../pipeline/eval/index.ts');
      const fromCopy = await copy.load<EvalModule>('pipeline/eval/index.ts');
      // The same code in another folder keeps every key: the checkpoint is reused.
      expect(await fromCopy.runEval(evalOpts(own, 'gold'))).toMatchObject({ graded: 0, reused: 2 });
      await copy.editLine('core/env/container/grade.ts', /^function /);
      const again = await fromCopy.runEval(evalOpts(own, 'gold'));
      expect(again).toMatchObject({ graded: 2, reused: 0 });
      expect(again.report.aggregate).toMatchObject({ instances: 2, mean_X: 1, mean_Y: 0 });
    } finally {
      await copy.remove();
    }
  }, 300_000);

  it('an agent\'s predictions: an empty patch scores X = 0, a fix of the edge case Y = 1, rows without one count as 0; only a changed prediction is regraded', async () => {
    const preds = path.join(scratch, 'agent.jsonl');
    await writeFile(preds, jsonl([{ instance_id: 'evalcmd__1-2', model_name_or_path: 'agent/v1', model_patch: '' }]));
    const a = await runEval(evalOpts(dataset, { path: preds }));
    expect(a).toMatchObject({ graded: 1, reused: 0 });
    expect(a.report.run).toBe('test-agent_v1');
    expect(a.report.skipped.no_prediction).toEqual(['evalcmd__1-3']);
    expect(a.report.instances).toHaveLength(1);
    expect(a.report.instances[0]).toMatchObject({ instance_id: 'evalcmd__1-2', model_name_or_path: 'agent/v1', X: 0, Y: 0, gap: 0, tampered_files: [] });
    // The unsubmitted row is in the denominator: the means are over every instance of the split.
    expect(a.report.aggregate).toMatchObject({ total: 2, submitted: 1, mean_X: 0, n_X: 2 });

    await writeFile(preds, jsonl([
      { instance_id: 'evalcmd__1-2', model_name_or_path: 'agent/v1', model_patch: '' },
      { instance_id: 'evalcmd__1-3', model_name_or_path: 'agent/v1', model_patch: fixPatch },
    ]));
    const b = await runEval(evalOpts(dataset, { path: preds }));
    expect(b).toMatchObject({ graded: 1, reused: 1 });
    expect(b.report.instances.map((i) => [i.instance_id, i.X, i.Y])).toEqual([['evalcmd__1-2', 0, 0], ['evalcmd__1-3', 1, 1]]);
    expect(b.report.aggregate).toMatchObject({ instances: 2, mean_X: 0.5, mean_Y: 0.5, mean_gap: 0 });
  }, 300_000);

  it('--split verified grades only its gradeable rows', async () => {
    const v = await runEval(evalOpts(dataset, 'gold', { split: 'verified' }));
    expect(v.report.instances.map((i) => i.instance_id)).toEqual(['evalcmd__1-2']);
    expect(v.report.skipped.not_gradeable).toEqual(['evalcmd__5-6']);
    expect(v.report.instances[0]).toMatchObject({ X: 1, Y: 0 });
  }, 300_000);

  it('the CLI prints the table and exits 0, resuming from the checkpoint', async () => {
    const out = path.join(scratch, 'cli-report.json');
    // The defaults' limits, as the tests above graded with: the checkpoint's keys match.
    const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('FORESIGHT_')));
    const res = await new Promise<{ code: number | null; stdout: string; stderr: string }>((done) => {
      execFile(path.join(ROOT, 'node_modules/.bin/tsx'), ['pipeline/bin.ts', 'eval', '--dataset', dataset, '--gold', '--out', out], { cwd: ROOT, env }, (err, stdout, stderr) =>
        done({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
      );
    });
    expect(res.code, res.stderr).toBe(0);
    expect(res.stderr).toContain('graded 0, reused 2 from the checkpoint');
    expect(res.stdout).toMatch(/evalcmd__1-2\s+100\.0%\s+0\.0%\s+\+100\.0%\s+0/);
    expect(res.stdout).toMatch(/mean\s+100\.0% \(n=2\)\s+0\.0% \(n=2\)\s+\+100\.0% \(n=2\)/);
    expect(JSON.parse(await readFile(out, 'utf8'))).toMatchObject({ split: 'test', run: 'test-gold', aggregate: { mean_X: 1 } });
  }, 120_000);
});
