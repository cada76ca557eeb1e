/**
 * `foresight eval`'s input, without Docker: the predictions file checked line by line (JSONL or one JSON
 * list), the rows of a split, unknown instances refused before anything is graded, and `--merged-after`.
 * Grading itself: eval.test.ts.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectDocker } from '../../core/env/index.ts';
import { ForesightError } from '../../core/foundation/errors.ts';
import { formatReport, readPredictions, readRows, runEval, type EvalOptions } from '../../pipeline/eval/index.ts';
import { datasetIn, emptyBundle, evalOptsWith, jsonl, row } from '../helpers/eval-dataset.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const docker = connectDocker();

let scratch: string;
beforeAll(async () => {
  scratch = await mkdtemp(path.join(tmpdir(), 'foresight-eval-rows-test-'));
});
afterAll(async () => {
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

const datasetDir = (name: string, splits: { test?: unknown[]; verified?: unknown[] }): Promise<string> => datasetIn(scratch, name, splits);
const evalOpts = (dataset: string, predictions: EvalOptions['predictions'], over: Partial<EvalOptions> = {}): EvalOptions => evalOptsWith(docker, dataset, predictions, over);

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
