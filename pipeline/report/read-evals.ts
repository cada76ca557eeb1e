/**
 * `foresight eval`'s results beside the dataset: every `<dataset>/eval/<run>/report.json`, checked with
 * eval's own entry schema. Per model and split the latest run (by `finished_at`) is shown: its means
 * (eval's `aggregate`, so the numbers are the ones `foresight eval` printed) and, per chain, each graded
 * test's status. A file that is not JSON or not an eval report is named in a warning and skipped.
 */
import { existsSync, statSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { firstIssue } from '../eval/read-jsonl.ts';
import { aggregate, InstanceReportSchema, type EvalAggregate, type EvalReport, type InstanceReport } from '../eval/report.ts';

/** The fields of eval's report.json the page reads (eval's EvalReport; `aggregate` is recomputed per model). */
export const EvalReportFileSchema = z.object({
  split: z.string(),
  run: z.string(),
  models: z.array(z.string()),
  finished_at: z.iso.datetime(),
  instances: z.array(InstanceReportSchema),
  skipped: z.object({ no_prediction: z.array(z.string()), not_gradeable: z.array(z.string()) }),
  errors: z.array(z.object({ instance_id: z.string(), error: z.string() })),
});
type EvalReportFile = z.infer<typeof EvalReportFileSchema>;
/** Compile-time check that eval's writer type still fits the schema the page parses with. */
export type EvalReportFits = EvalReport extends z.input<typeof EvalReportFileSchema> ? true : never;
const fits: EvalReportFits = true;
void fits;

/** One character per test, aligned with the row's set: p pass, f fail, e error, s skip, m missing, `.` not in the report. */
export const EVAL_STATUS_CODES: Record<string, string> = { pass: 'p', fail: 'f', error: 'e', skip: 's', missing: 'm' };

/** A score as the page shows it. */
export type ScoreView =
  | { kind: 'scored'; value: number; passed: number; total: number; reason: string | null; detail: string | null }
  | { kind: 'infra'; reason: string; detail: string }
  | { kind: 'empty' };

export interface EvalModel {
  model: string;
  split: string;
  /** The run's folder under `<dataset>/eval/`. */
  run: string;
  finished_at: string;
  /** Means over this model's instances of the dataset (and, in a one-model run, its unsubmitted rows as 0). */
  aggregate: EvalAggregate;
  /** Instances whose grading failed outside the patch (not graded; a rerun grades them). */
  errors: Array<{ instance_id: string; error: string }>;
  /** Earlier runs of the same model and split, not shown. */
  superseded: string[];
}

/** One model's result on one chain. */
export interface ChainEval {
  /** Index into the page's eval models. */
  m: number;
  kind: InstanceReport['kind'];
  X: number | null;
  Y: number | null;
  gap: number | null;
  x: ScoreView;
  y: ScoreView;
  /** EVAL_STATUS_CODES per test, in the order of the row's FAIL_TO_PASS, PASS_TO_PASS, ANTICIPATION_FAIL_TO_PASS. */
  tests: { FAIL_TO_PASS: string; PASS_TO_PASS: string; ANTICIPATION_FAIL_TO_PASS: string };
  p2p_regressions: string[] | null;
  patch_failed_detail: string | null;
  /** Harness files the patch changed (restored before grading). */
  tampered_files: string[];
}

export interface GradedSets {
  FAIL_TO_PASS: readonly string[];
  PASS_TO_PASS: readonly string[];
  ANTICIPATION_FAIL_TO_PASS: readonly string[];
}

export interface EvalsRead {
  models: EvalModel[];
  byId: Map<string, ChainEval[]>;
  /** Reports found (parsed or not). */
  found: number;
  /** One line each: a report skipped (not JSON, not an eval report), or instances left out. */
  warnings: string[];
}

const SET_KEYS = ['FAIL_TO_PASS', 'PASS_TO_PASS', 'ANTICIPATION_FAIL_TO_PASS'] as const;

const scoreView = (s: InstanceReport['x']): ScoreView =>
  s.kind === 'scored'
    ? { kind: 'scored', value: s.value, passed: s.passed, total: s.total, reason: s.reason ?? null, detail: s.detail ?? null }
    : s.kind === 'infra'
      ? { kind: 'infra', reason: s.reason, detail: s.detail }
      : { kind: 'empty' };

const sameKeys = (statuses: Record<string, unknown>, set: readonly string[]): boolean => {
  const keys = Object.keys(statuses);
  return keys.length === set.length && set.every((t) => t in statuses);
};

/** Reports under `<dataset>/eval/*\/report.json`, parsed; the unreadable ones as warnings. */
async function readReports(dataset: string, warnings: string[]): Promise<{ found: number; reports: Array<{ dir: string; report: EvalReportFile }> }> {
  const root = join(dataset, 'eval');
  if (!existsSync(root) || !statSync(root).isDirectory()) return { found: 0, reports: [] };
  const reports: Array<{ dir: string; report: EvalReportFile }> = [];
  let found = 0;
  for (const entry of (await readdir(root, { withFileTypes: true })).filter((e) => e.isDirectory()).sort((a, b) => a.name.localeCompare(b.name))) {
    const path = join(root, entry.name, 'report.json');
    if (!existsSync(path)) continue;
    found++;
    const shown = `eval/${entry.name}/report.json`;
    let raw: unknown;
    try {
      raw = JSON.parse(await readFile(path, 'utf8'));
    } catch (err) {
      warnings.push(`${shown} is not valid JSON (${(err as Error).message}): skipped`);
      continue;
    }
    const parsed = EvalReportFileSchema.safeParse(raw);
    if (!parsed.success) {
      warnings.push(`${shown} is not a report of this foresight's eval (${firstIssue(parsed.error)}): skipped; run foresight eval again to replace it`);
      continue;
    }
    reports.push({ dir: entry.name, report: parsed.data });
  }
  return { found, reports };
}

/** The eval results of the dataset's chains (`sets`: each row's graded sets, by instance id). */
export async function readEvals(dataset: string, sets: ReadonlyMap<string, GradedSets>): Promise<EvalsRead> {
  const warnings: string[] = [];
  const { found, reports } = await readReports(dataset, warnings);

  // The latest run of each model and split; the others are superseded.
  const latest = new Map<string, { dir: string; report: EvalReportFile; superseded: string[] }>();
  const runsOf = (r: EvalReportFile): string[] => [...new Set([...r.models, ...r.instances.map((i) => i.model_name_or_path)])];
  const newer = (a: { dir: string; report: EvalReportFile }, b: { dir: string; report: EvalReportFile }): boolean =>
    a.report.finished_at > b.report.finished_at || (a.report.finished_at === b.report.finished_at && a.dir > b.dir);
  for (const rep of reports) {
    for (const model of runsOf(rep.report)) {
      const key = `${model}\u0000${rep.report.split}`;
      const seen = latest.get(key);
      if (!seen) latest.set(key, { ...rep, superseded: [] });
      else if (newer(rep, seen)) latest.set(key, { ...rep, superseded: [...seen.superseded, seen.dir] });
      else seen.superseded.push(rep.dir);
    }
  }

  const models: EvalModel[] = [];
  const byId = new Map<string, ChainEval[]>();
  const keys = [...latest.keys()].sort();
  for (const key of keys) {
    const { dir, report, superseded } = latest.get(key)!;
    const model = key.split('\u0000')[0]!;
    const shown = `eval/${dir}/report.json`;
    const foreign: string[] = [];
    const stale: string[] = [];
    const kept: InstanceReport[] = [];
    for (const inst of report.instances.filter((i) => i.model_name_or_path === model)) {
      const row = sets.get(inst.instance_id);
      if (!row) foreign.push(inst.instance_id);
      // Graded against other sets than the row's (the dataset was emitted again since): its outcomes would not line up.
      else if (inst.kind === 'graded' && !SET_KEYS.every((k) => sameKeys(inst.tests[k], row[k]))) stale.push(inst.instance_id);
      else kept.push(inst);
    }
    const list = (ids: string[]): string => `${ids.slice(0, 5).join(', ')}${ids.length > 5 ? ', …' : ''}`;
    if (foreign.length) warnings.push(`${shown}: ${foreign.length} instance(s) of ${model} are not in this dataset, left out: ${list(foreign)}`);
    if (stale.length) warnings.push(`${shown}: ${stale.length} instance(s) of ${model} were graded on other test sets than the dataset's (emitted again since?), left out: ${list(stale)}; run foresight eval again`);
    const errors = report.errors.filter((e) => sets.has(e.instance_id));
    if (!kept.length && !errors.length) {
      if (!foreign.length && !stale.length) warnings.push(`${shown}: no instance of ${model} graded, left out`);
      continue;
    }
    // A one-model run's rows without a prediction count as 0 in its means, as foresight eval counts them.
    const unsubmitted = runsOf(report).length === 1 ? report.skipped.no_prediction.filter((id) => sets.has(id)) : [];
    const m = models.length;
    models.push({
      model,
      split: report.split,
      run: dir,
      finished_at: report.finished_at,
      aggregate: aggregate(kept, unsubmitted),
      errors,
      superseded: superseded.sort(),
    });
    for (const inst of kept) {
      const row = sets.get(inst.instance_id)!;
      const codes = (k: (typeof SET_KEYS)[number]): string => row[k].map((t) => EVAL_STATUS_CODES[inst.tests[k][t] ?? ''] ?? '.').join('');
      const entry: ChainEval = {
        m,
        kind: inst.kind,
        X: inst.X,
        Y: inst.Y,
        gap: inst.gap,
        x: scoreView(inst.x),
        y: scoreView(inst.y),
        tests: { FAIL_TO_PASS: codes('FAIL_TO_PASS'), PASS_TO_PASS: codes('PASS_TO_PASS'), ANTICIPATION_FAIL_TO_PASS: codes('ANTICIPATION_FAIL_TO_PASS') },
        p2p_regressions: inst.p2p_regressions,
        patch_failed_detail: inst.patch_failed_detail,
        tampered_files: inst.tampered_files.map((f) => `${f.path} (${f.action})`),
      };
      byId.set(inst.instance_id, [...(byId.get(inst.instance_id) ?? []), entry]);
    }
  }
  return { models, byId, found, warnings };
}
