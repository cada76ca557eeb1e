/**
 * `foresight eval` on a small hand-made dataset folder (jsonl/test.jsonl, jsonl/verified.jsonl) whose rows
 * point at an eval image built here from a generated repository (real git, real Docker, offline): the
 * predictions file is checked line by line, unknown instances are refused, grading resumes from its
 * checkpoint, and the CLI prints the table and exits 0. Parsing tests need no Docker.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultConfig } from '../../core/foundation/config.ts';
import { ForesightError } from '../../core/foundation/errors.ts';
import { silentLogger } from '../../core/foundation/log.ts';
import { applyCachePolicy, connectDocker, ensureBaseImage, ensureEvalImage, envImageFor, isDockerReachable, type GradingBundle } from '../../core/env/index.ts';
import { RecipeSchema } from '../../core/env/recipes/schema.ts';
import { pytestRunner } from '../../core/env/runners/pytest/index.ts';
import { formatReport, gradeLimits, readPredictions, readRows, runEval, type EvalOptions } from '../../pipeline/eval/index.ts';
import { copyProject } from '../helpers/code-copy.ts';
import { gitRepo, type GitRepo } from '../helpers/git-repo.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const docker = connectDocker();
const reachable = await isDockerReachable(docker);
const skip = !reachable && !process.env['CI'];
if (skip) console.warn('[eval.test] SKIPPED (Docker parts): Docker is not reachable and CI is unset');

const DATE = '2024-01-01T00:00:00Z';
const NONCE = randomBytes(6).toString('hex');
const SHA = 'a'.repeat(40);

let scratch: string;
beforeAll(async () => {
  scratch = await mkdtemp(path.join(tmpdir(), 'foresight-eval-test-'));
});
afterAll(async () => {
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

const jsonl = (rows: readonly unknown[]): string => rows.map((r) => JSON.stringify(r)).join('\n') + '\n';
const emptyBundle: GradingBundle = { version: 1, x: { files: [], run: [] }, y: { files: [], run: [] } };

/** A row as emit writes it (list fields and the bundle JSON-encoded), with the fields eval reads. */
function row(id: string, over: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    instance_id: id,
    repo: 'test/evaltiny',
    docker_image: 'foresight-eval:none',
    runner: 'pytest',
    base_commit: SHA,
    patch: '',
    FAIL_TO_PASS: JSON.stringify(['tests/test_a.py::test_a']),
    PASS_TO_PASS: JSON.stringify([]),
    ANTICIPATION_FAIL_TO_PASS: JSON.stringify(['tests/test_b.py::test_b']),
    pr1_test_files: JSON.stringify(['tests/test_a.py']),
    anticipation_test_files: JSON.stringify(['tests/test_b.py']),
    grading_bundle: JSON.stringify(emptyBundle),
    ...over,
  };
}

async function datasetDir(name: string, splits: { test?: unknown[]; verified?: unknown[] }): Promise<string> {
  const dir = path.join(scratch, name);
  await mkdir(path.join(dir, 'jsonl'), { recursive: true });
  for (const [split, rows] of Object.entries(splits)) await writeFile(path.join(dir, 'jsonl', `${split}.jsonl`), jsonl(rows));
  return dir;
}

function evalOpts(dataset: string, predictions: EvalOptions['predictions'], over: Partial<EvalOptions> = {}): EvalOptions {
  return { dataset, split: 'test', predictions, jobs: 2, docker, limits: gradeLimits(defaultConfig().validate), log: silentLogger, signal: new AbortController().signal, ...over };
}

describe('predictions and rows', () => {
  it('a line that is not JSON, or not a SWE-bench prediction, is refused with its line named', async () => {
    const file = path.join(scratch, 'bad.jsonl');
    const good = { instance_id: 'a__1-2', model_name_or_path: 'm', model_patch: '' };
    await writeFile(file, `${JSON.stringify(good)}\n\n{"instance_id": "b__1-2",\n`);
    await expect(readPredictions(file)).rejects.toThrow(new RegExp(`${file.replace(/[.]/g, '\\.')}:3 is not valid JSON`));
    await writeFile(file, `${JSON.stringify(good)}\n${JSON.stringify({ instance_id: 'b__1-2', model_patch: 'x' })}\n`);
    await expect(readPredictions(file)).rejects.toThrow(/bad\.jsonl:2: model_name_or_path: /);
    await writeFile(file, `${JSON.stringify(good)}\n${JSON.stringify({ ...good, model_patch: 5 })}\n`);
    await expect(readPredictions(file)).rejects.toThrow(/bad\.jsonl:2: model_patch: /);
    await writeFile(file, `${JSON.stringify(good)}\n${JSON.stringify(good)}\n`);
    await expect(readPredictions(file)).rejects.toThrow(/bad\.jsonl:2: instance a__1-2 was already predicted on line 1/);
    await writeFile(file, '\n');
    await expect(readPredictions(file)).rejects.toThrow(/holds no prediction/);
  });

  it('trial: a missing predictions file was answered with the remedy for a bad JSON line → it is named as missing, with the flag to fix', async () => {
    const file = path.join(scratch, 'nope.jsonl');
    const err = await readPredictions(file).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ForesightError);
    expect((err as ForesightError).message).toBe(`predictions file ${file} does not exist`);
    expect((err as ForesightError).remedy).toMatch(/pass --predictions with the path of a SWE-bench predictions file/);
    expect((err as ForesightError).oneLine()).not.toMatch(/\n/);
  });

  it('trial: predictions as one JSON list (SWE-bench\'s other form) were refused → the list gives the same predictions as the JSONL form', async () => {
    const preds = [
      { instance_id: 'a__1-2', model_name_or_path: 'm', model_patch: 'diff --git a/x b/x\n' },
      { instance_id: 'b__1-2', model_name_or_path: 'm', model_patch: null },
    ];
    const lines = path.join(scratch, 'list.jsonl');
    const list = path.join(scratch, 'list.json');
    await writeFile(lines, jsonl(preds));
    await writeFile(list, `\n  ${JSON.stringify(preds, null, 2)}\n`);
    const fromList = await readPredictions(list);
    expect([...fromList.values()]).toEqual([...(await readPredictions(lines)).values()]);
    expect(fromList.get('b__1-2')!.model_patch).toBe('');
  });

  it('a bad element of a JSON list is named by its index', async () => {
    const file = path.join(scratch, 'bad-list.json');
    const good = { instance_id: 'a__1-2', model_name_or_path: 'm', model_patch: '' };
    await writeFile(file, JSON.stringify([good, { ...good, instance_id: 'b__1-2' }, { instance_id: 'c__1-2', model_patch: 'x' }], null, 2));
    await expect(readPredictions(file)).rejects.toThrow(/bad-list\.json: element 2 is not a SWE-bench prediction: model_name_or_path: /);
    await writeFile(file, JSON.stringify([good, 5]));
    await expect(readPredictions(file)).rejects.toThrow(/bad-list\.json: element 1 is not a SWE-bench prediction: /);
    await writeFile(file, JSON.stringify([good, good]));
    await expect(readPredictions(file)).rejects.toThrow(/bad-list\.json: element 1: instance a__1-2 was already predicted on element 0/);
    await writeFile(file, '[\n  {"instance_id": "a__1-2",\n');
    await expect(readPredictions(file)).rejects.toThrow(/bad-list\.json starts with \[ but is not a valid JSON list/);
    await writeFile(file, '[]\n');
    await expect(readPredictions(file)).rejects.toThrow(/holds no prediction/);
  });

  it('a null model_patch is an empty prediction', async () => {
    const file = path.join(scratch, 'null.jsonl');
    await writeFile(file, jsonl([{ instance_id: 'a__1-2', model_name_or_path: 'm', model_patch: null }]));
    expect((await readPredictions(file)).get('a__1-2')).toEqual({ instance_id: 'a__1-2', model_name_or_path: 'm', model_patch: '' });
  });

  it('a row whose list field or bundle is not what emit writes is refused with its line and field named', async () => {
    const d1 = await datasetDir('bad-rows', { test: [row('a__1-2'), row('b__1-2', { FAIL_TO_PASS: '[1' })] });
    await expect(readRows(d1, 'test')).rejects.toThrow(/test\.jsonl:2: FAIL_TO_PASS: is not a JSON-encoded value/);
    const d2 = await datasetDir('bad-bundle', { test: [row('a__1-2', { grading_bundle: JSON.stringify({ ...emptyBundle, x: { files: [{ path: '../etc/passwd', encoding: 'utf8', content: '' }], run: [] } }) })] });
    await expect(readRows(d2, 'test')).rejects.toThrow(/test\.jsonl:1: grading_bundle: x\.files\.0\.path: must be a repo-relative path/);
    const d3 = await datasetDir('no-split', {});
    await expect(readRows(d3, 'test')).rejects.toThrow(/the test split file .*jsonl\/test\.jsonl cannot be read/);
  });

  it('verified: only gradeable rows are graded, the others are listed', async () => {
    const d = await datasetDir('verified-rows', { verified: [row('a__1-2', { gradeable: true }), { instance_id: 'b__3-4', gradeable: false, docker_image: '' }] });
    const r = await readRows(d, 'verified');
    expect(r.rows.map((x) => x.instance_id)).toEqual(['a__1-2']);
    expect(r.notGradeable).toEqual(['b__3-4']);
    expect(r.rows[0]!.FAIL_TO_PASS).toEqual(['tests/test_a.py::test_a']);
  });

  it('a prediction naming no instance of the split is refused before anything is graded', async () => {
    const d = await datasetDir('unknown-id', { test: [row('a__1-2')] });
    const preds = path.join(scratch, 'unknown.jsonl');
    await writeFile(preds, jsonl([{ instance_id: 'a__1-2', model_name_or_path: 'm', model_patch: '' }, { instance_id: 'zz__9-9', model_name_or_path: 'm', model_patch: '' }]));
    const err = await runEval(evalOpts(d, { path: preds })).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ForesightError);
    expect((err as Error).message).toMatch(/1 prediction\(s\) name no instance of the test split: zz__9-9/);
  });
});

describe('--merged-after: only rows whose PR1 merged on or after the date are graded', () => {
  const JAN = '2024-01-15T10:00:00Z';
  // 2024-02-01 01:00 at +02:00 is 2024-01-31 23:00 UTC: before the cutoff, though its local day is not.
  const LATE_JAN = '2024-02-01T01:00:00+02:00';
  const FEB = '2024-02-01T00:00:00Z';
  const MAR = '2024-03-20T08:30:00+01:00';
  const CUTOFF = '2024-02-01T00:00:00.000Z';

  it('rows before the date are left out (compared as instants), the date itself is kept; verified\'s left-out rows are not listed as not gradeable', async () => {
    const d = await datasetDir('window-rows', {
      test: [row('a__1-2', { created_at: JAN }), row('b__3-4', { created_at: LATE_JAN }), row('c__5-6', { created_at: FEB }), row('d__7-8', { created_at: MAR })],
      verified: [
        row('a__1-2', { created_at: JAN, gradeable: true }),
        { instance_id: 'e__9-9', gradeable: false, docker_image: '', created_at: JAN },
        row('d__7-8', { created_at: MAR, gradeable: true }),
        { instance_id: 'f__9-9', gradeable: false, docker_image: '', created_at: MAR },
      ],
    });
    const all = await readRows(d, 'test');
    expect(all.window).toBeNull();
    expect(all.rows.map((r) => r.instance_id)).toEqual(['a__1-2', 'b__3-4', 'c__5-6', 'd__7-8']);

    const t = await readRows(d, 'test', CUTOFF);
    expect(t.rows.map((r) => r.instance_id)).toEqual(['c__5-6', 'd__7-8']);
    expect(t.window).toMatchObject({ date: CUTOFF, of: 4, leftOut: ['a__1-2', 'b__3-4'] });
    expect(t.window!.leftOutRows.map((r) => r.instance_id)).toEqual(['a__1-2', 'b__3-4']);
    // A prediction may still name a left-out row: every id of the split is known.
    expect([...t.ids].sort()).toEqual(['a__1-2', 'b__3-4', 'c__5-6', 'd__7-8']);

    const v = await readRows(d, 'verified', CUTOFF);
    expect(v.rows.map((r) => r.instance_id)).toEqual(['d__7-8']);
    expect(v.notGradeable).toEqual(['f__9-9']);
    expect(v.window).toMatchObject({ of: 4, leftOut: ['a__1-2', 'e__9-9'] });
    expect(v.window!.leftOutRows.map((r) => r.instance_id)).toEqual(['a__1-2']);
  });

  it('a prediction for a left-out row is counted as left out, not missing and not unknown; nothing is graded when no row left has a prediction', async () => {
    const d = await datasetDir('window-preds', { test: [row('a__1-2', { created_at: JAN }), row('b__3-4', { created_at: MAR }), row('c__5-6', { created_at: MAR })] });
    const preds = path.join(scratch, 'window-preds.jsonl');
    await writeFile(preds, jsonl([{ instance_id: 'a__1-2', model_name_or_path: 'agent/v2', model_patch: 'diff --git a/x b/x\n' }]));
    // The rows left point at no image: grading either of them would fail, so the run shows none was attempted.
    const res = await runEval(evalOpts(d, { path: preds }, { mergedAfter: CUTOFF }));
    expect(res).toMatchObject({ graded: 0, reused: 0 });
    expect(res.reportPath).toBe(path.join(d, 'eval', 'test-agent_v2', 'report-merged-after-2024-02-01.json'));
    const r = res.report;
    expect(r.instances).toEqual([]);
    expect(r.errors).toEqual([]);
    expect(r.merged_after).toEqual({ date: CUTOFF, left_out: 1, of: 3, predictions_left_out: 1, instances: ['a__1-2'] });
    expect(r.skipped.no_prediction).toEqual(['b__3-4', 'c__5-6']);
    expect(r.aggregate).toMatchObject({ total: 2, submitted: 0, mean_X: 0, n_X: 2 });
    expect(JSON.parse(await readFile(res.reportPath, 'utf8'))).toEqual(JSON.parse(JSON.stringify(r)));
    const table = formatReport(r);
    expect(table).toContain('--merged-after 2024-02-01: 1 of 3 row(s) left out (PR1 merged before it), 1 prediction(s) for them not graded; X, Y and gap are over the 2 left');
    expect(table).toContain('0 of 2 submitted');
  });

  it('a date after every row is refused, naming the date and the newest PR1 merge date, before anything is graded', async () => {
    const d = await datasetDir('window-empty', { test: [row('a__1-2', { created_at: JAN }), row('d__7-8', { created_at: MAR }), row('b__3-4', { created_at: LATE_JAN })] });
    const err = await runEval(evalOpts(d, 'gold', { mergedAfter: '2024-06-01T00:00:00.000Z' })).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ForesightError);
    expect((err as ForesightError).message).toBe(`--merged-after 2024-06-01 leaves no row of the test split: its newest PR1 merged ${MAR} (d__7-8)`);
    expect((err as ForesightError).remedy).toMatch(/pass --merged-after 2024-03-20 or earlier, or leave the flag out/);
    expect(existsSync(path.join(d, 'eval'))).toBe(false);
  });

  it('a row without a readable created_at is refused with its line named, only when the flag is given', async () => {
    const d1 = await datasetDir('window-no-date', { test: [row('a__1-2', { created_at: JAN }), row('b__3-4')] });
    await expect(readRows(d1, 'test', CUTOFF)).rejects.toThrow(/test\.jsonl:2: no created_at \(PR1's merge date\), which --merged-after reads/);
    expect((await readRows(d1, 'test')).rows).toHaveLength(2);
    const d2 = await datasetDir('window-bad-date', { test: [row('a__1-2', { created_at: 'last tuesday' })] });
    await expect(readRows(d2, 'test', CUTOFF)).rejects.toThrow(/test\.jsonl:1: created_at "last tuesday" is not an ISO date/);
  });

  it('the CLI refuses a bad date in one line naming the flag, before Docker is reached', async () => {
    const d = await datasetDir('window-cli', { test: [row('a__1-2', { created_at: JAN })] });
    const res = await new Promise<{ code: number | null; stderr: string }>((done) => {
      // An unreachable daemon: the date must be refused before it is tried.
      const env = { ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('FORESIGHT_'))), DOCKER_HOST: 'tcp://127.0.0.1:1' };
      execFile(path.join(ROOT, 'node_modules/.bin/tsx'), ['pipeline/bin.ts', 'eval', '--dataset', d, '--gold', '--merged-after', '2024-02-30'], { cwd: ROOT, env }, (err, _stdout, stderr) =>
        done({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stderr }),
      );
    });
    expect(res.code, res.stderr).toBe(1);
    expect(res.stderr.trim()).toBe('foresight: --merged-after 2024-02-30 is not a date — pass --merged-after an ISO date such as 2023-01-01');
  }, 60_000);
});

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
