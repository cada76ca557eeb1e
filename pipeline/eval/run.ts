/**
 * `foresight eval`: grade each row of an emitted dataset's split with its prediction in the row's eval
 * image (core/env gradeInstance), resumable per instance: results are checkpointed under
 * `<dataset>/eval/<run>/checkpoint.jsonl`, keyed by the grading code, the row, the prediction and the
 * limits, so a rerun regrades only what changed (or was interrupted). A failure outside the patch (a missing eval image)
 * is reported for that instance and not checkpointed; an abort stops at once and keeps nothing after it.
 * `mergedAfter` grades only the rows whose PR1 merged on or after a date (an agent's training cutoff); the rows
 * it leaves out are not run, and their checkpointed grades are kept for a run without it.
 */
import { join, resolve } from 'node:path';
import type Docker from 'dockerode';
import { writeAtomic } from '../../core/foundation/artifacts.ts';
import { errorMessage, ForesightError } from '../../core/foundation/errors.ts';
import { fingerprint, type Fingerprint } from '../../core/foundation/fingerprint.ts';
import type { Logger } from '../../core/foundation/log.ts';
import { codeKey, resumableMap, unkept } from '../../core/foundation/resumable.ts';
import { getRunner, gradeInstance, noEvidenceUnderPatch, type GradeLimits, type GradeResult } from '../../core/env/index.ts';
import { goldPredictions, GOLD_MODEL, readPredictions, type Prediction } from './predictions.ts';
import { aggregate, instanceReport, InstanceReportSchema, type EvalReport, type InstanceReport } from './report.ts';
import { readRows, shownDate, type EvalRow, type Split } from './rows.ts';

export interface EvalOptions {
  /** The emitted dataset folder (holds jsonl/<split>.jsonl). */
  dataset: string;
  split: Split;
  /** A SWE-bench predictions file, or 'gold': each row's own patch. */
  predictions: { path: string } | 'gold';
  jobs: number;
  /** Report path; default <dataset>/eval/<run>/report.json (report-merged-after-<date>.json with `mergedAfter`). */
  out?: string | null;
  /** An ISO instant (core/foundation/config-values.ts parseIsoDate): grade only rows whose PR1 merged on or after it. */
  mergedAfter?: string | null;
  docker: Docker;
  limits: GradeLimits;
  log: Logger;
  signal: AbortSignal;
}

export interface EvalOutcome {
  report: EvalReport;
  reportPath: string;
  /** Instances graded by this call, and reused from the checkpoint. */
  graded: number;
  reused: number;
}

/** A run's folder name: the split and the model(s), filesystem-safe. */
export function runName(split: Split, models: readonly string[]): string {
  const m = [...new Set(models)].sort().join('+').replace(/[^A-Za-z0-9._-]+/g, '_').replace(/^[._]+/, '').slice(0, 80);
  return `${split}-${m || 'model'}`;
}

export async function runEval(opts: EvalOptions): Promise<EvalOutcome> {
  const { log, signal } = opts;
  const dataset = resolve(opts.dataset);
  const { rows, notGradeable, ids, window } = await readRows(dataset, opts.split, opts.mergedAfter ?? null);
  let preds: Map<string, Prediction>;
  if (opts.predictions === 'gold') preds = goldPredictions(rows);
  else {
    preds = await readPredictions(opts.predictions.path);
    const unknown = [...preds.keys()].filter((id) => !ids.has(id));
    if (unknown.length) {
      throw new ForesightError(`${unknown.length} prediction(s) name no instance of the ${opts.split} split: ${unknown.slice(0, 5).join(', ')}${unknown.length > 5 ? ', …' : ''}`, {
        remedy: `check --split (test, verified or funnel) and the instance_id values of ${opts.predictions.path}`,
      });
    }
  }
  const todo: Array<{ row: EvalRow; pred: Prediction }> = [];
  const noPrediction: string[] = [];
  for (const row of rows) {
    const pred = preds.get(row.instance_id);
    if (pred) todo.push({ row, pred });
    else noPrediction.push(row.instance_id);
  }
  // A prediction for a row --merged-after left out is not graded, nor is it an unknown instance.
  const leftOut = new Set(window?.leftOut);
  const predictionsLeftOut = opts.predictions === 'gold' ? 0 : [...preds.keys()].filter((id) => leftOut.has(id)).length;
  if (window) log.info(`--merged-after ${shownDate(window.date)}: ${window.leftOut.length} of ${window.of} row(s) left out (PR1 merged before it), not graded`);
  const notGraded = notGradeable.filter((id) => preds.has(id) && opts.predictions !== 'gold');
  if (notGraded.length) log.warn(`${notGraded.length} prediction(s) for rows that are not gradeable, not graded: ${notGraded.slice(0, 5).join(', ')}`);
  if (noPrediction.length) log.info(`${noPrediction.length} row(s) without a prediction, skipped`);

  const models = opts.predictions === 'gold' ? [GOLD_MODEL] : [...new Set([...preds.values()].map((p) => p.model_name_or_path))];
  const run = runName(opts.split, models);
  const dir = join(dataset, 'eval', run);
  // A filtered report beside the whole split's: `foresight report` reads report.json alone.
  const reportPath = opts.out ? resolve(opts.out) : join(dir, window ? `report-merged-after-${shownDate(window.date).replace(/:/g, '-')}.json` : 'report.json');

  const errors: EvalReport['errors'] = [];
  // The key covers the grading code (this module's import closure: the grader, the runners, their in-container scripts).
  const code = await codeKey(import.meta.url);
  const keyOf = (row: EvalRow, pred: Prediction): Fingerprint => fingerprint(code, row, pred.model_patch, opts.limits, opts.predictions === 'gold');
  const { results, fromCheckpoint, reused, computed, keys, checkpoint } = await resumableMap(todo, {
    checkpoint: join(dir, 'checkpoint.jsonl'),
    label: 'grading',
    log,
    signal,
    concurrency: opts.jobs,
    key: ({ row, pred }) => keyOf(row, pred),
    id: ({ row }) => row.instance_id,
    schema: InstanceReportSchema.nullable(),
    compute: ({ row, pred }) =>
      gradeOne(row, pred, opts).catch((err: unknown) => {
        if (signal.aborted || !(err instanceof ForesightError)) throw err;
        // A failure outside the patch (a missing eval image): reported for that instance, never checkpointed.
        errors.push({ instance_id: row.instance_id, error: errorMessage(err) });
        log.warn(`${row.instance_id}: not graded: ${errorMessage(err)}`);
        return unkept(null);
      }),
  });
  // The rows left out keep their grades: the checkpoint holds what a run without the filter would keep.
  const leftOutPreds = opts.predictions === 'gold' ? goldPredictions(window?.leftOutRows ?? []) : preds;
  for (const row of window?.leftOutRows ?? []) {
    const pred = leftOutPreds.get(row.instance_id);
    if (pred) keys.add(keyOf(row, pred));
  }
  await checkpoint.compact(keys);
  const graded = computed - errors.length;

  // A checkpointed report names the model of this run's prediction (the same patch may come from another run's file).
  const instances = results.flatMap((r, i) => (r === null ? [] : [fromCheckpoint[i] ? { ...r, model_name_or_path: todo[i]!.pred.model_name_or_path } : r]));
  // A gradeable row without a prediction is a row the agent did not solve: 0 in the means.
  const unsubmitted = opts.predictions === 'gold' ? [] : noPrediction;
  const report: EvalReport = {
    dataset,
    split: opts.split,
    run,
    models,
    finished_at: new Date().toISOString(),
    aggregate: aggregate(instances, unsubmitted),
    instances,
    merged_after: window && { date: window.date, left_out: window.leftOut.length, of: window.of, predictions_left_out: predictionsLeftOut, instances: window.leftOut },
    skipped: { no_prediction: noPrediction, not_gradeable: notGradeable },
    errors: errors.sort((a, b) => (a.instance_id < b.instance_id ? -1 : 1)),
  };
  await writeAtomic(reportPath, JSON.stringify(report, null, 2) + '\n');
  return { report, reportPath, graded, reused };
}

function gradeWith(row: EvalRow, patch: string, opts: EvalOptions): Promise<GradeResult> {
  return gradeInstance({
    docker: opts.docker,
    image: row.docker_image,
    runner: getRunner(row.runner),
    patch,
    goldPatch: row.patch,
    bundle: row.grading_bundle,
    f2p: row.FAIL_TO_PASS,
    p2p: row.PASS_TO_PASS,
    anti: row.ANTICIPATION_FAIL_TO_PASS,
    limits: opts.limits,
    signal: opts.signal,
    // A row validated on a database service is graded with that service beside it.
    backend: row.db_backend,
    service: { log: opts.log },
  });
}

const hasEvidence = (s: GradeResult['x']): boolean => s.kind !== 'infra';

async function gradeOne(row: EvalRow, pred: Prediction, opts: EvalOptions): Promise<InstanceReport> {
  let result = await gradeWith(row, pred.model_patch, opts);
  let goldEvidence: InstanceReport['gold_evidence'] = null;
  // Runs that were no evidence twice: the patch's doing when the gold patch's runs in the same image are evidence.
  if (opts.predictions !== 'gold' && result.kind === 'graded' && (result.x.kind === 'infra' || result.y.kind === 'infra')) {
    opts.log.info(`${row.instance_id}: no evidence under the prediction (${[result.x, result.y].flatMap((s) => (s.kind === 'infra' ? [s.reason] : [])).join(', ')}): checking the gold patch in the same image`);
    const gold = await gradeWith(row, row.patch, opts);
    goldEvidence = { x: hasEvidence(gold.x), y: hasEvidence(gold.y) };
    const x = noEvidenceUnderPatch(result.x, row.FAIL_TO_PASS.length, goldEvidence.x);
    const y = noEvidenceUnderPatch(result.y, row.ANTICIPATION_FAIL_TO_PASS.length, goldEvidence.y);
    result = { ...result, x, y, gap: x.kind === 'scored' && y.kind === 'scored' ? x.value - y.value : null };
  }
  opts.log.debug(`${row.instance_id}: ${result.kind}, X ${result.x.kind === 'scored' ? result.x.value : result.x.kind}, Y ${result.y.kind === 'scored' ? result.y.value : result.y.kind}`);
  return instanceReport(row.instance_id, pred.model_name_or_path, result, goldEvidence);
}
