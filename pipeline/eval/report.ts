/**
 * What `foresight eval` writes and prints: one entry per graded instance (X, Y, gap, PASS_TO_PASS
 * regressions, every graded test's status, the harness files the patch changed, the apply log, the
 * runs' output tails) and the aggregate: mean X, mean Y and mean gap over every gradeable instance of
 * the split, an instance without a prediction counting as 0 (the table says how many were submitted),
 * a patch whose runs were no evidence while the gold run's were as 0 (`no_evidence_under_patch`); only
 * a row whose gold run is no evidence either is `infra`, counted apart and outside the means.
 * The entry's schema also checks checkpointed entries: one of another shape is regraded.
 */
import { z } from 'zod';
import type { GradeResult, Score } from '../../core/env/index.ts';
import { shownDate } from './rows.ts';

const ScoreSchema = z.discriminatedUnion('kind', [
  z.object({
    kind: z.literal('scored'),
    value: z.number(),
    passed: z.number().int(),
    total: z.number().int(),
    reason: z.literal('no_evidence_under_patch').optional(),
    detail: z.string().optional(),
  }),
  z.object({ kind: z.literal('infra'), reason: z.string(), detail: z.string() }),
  z.object({ kind: z.literal('empty') }),
]);
const Statuses = z.record(z.string(), z.enum(['pass', 'fail', 'error', 'skip', 'missing']));
const RunSchema = z.object({
  kind: z.enum(['report', 'timeout', 'no_report']),
  exit_code: z.number().int().nullable(),
  duration_ms: z.number(),
  tests: z.record(z.string(), z.enum(['pass', 'fail', 'error', 'skip'])),
  collection_errors: z.array(z.string()),
  problem: z.object({ kind: z.string(), reason: z.string(), detail: z.string() }).nullable(),
  output_tail: z.string(),
  /** 2: the first run was no evidence and the part was run again in a new container. */
  attempts: z.number().int(),
});

export const InstanceReportSchema = z.object({
  instance_id: z.string(),
  model_name_or_path: z.string(),
  /** `graded`, or `patch_failed` (scored X = Y = 0). */
  kind: z.enum(['graded', 'patch_failed']),
  /** Share of FAIL_TO_PASS passing; null when the run was no evidence (`x.kind` says why). */
  X: z.number().nullable(),
  Y: z.number().nullable(),
  gap: z.number().nullable(),
  x: ScoreSchema,
  y: ScoreSchema,
  /** PASS_TO_PASS tests not passing after the patch; null when the X run was no evidence. */
  p2p_regressions: z.array(z.string()).nullable(),
  tests: z.object({ FAIL_TO_PASS: Statuses, PASS_TO_PASS: Statuses, ANTICIPATION_FAIL_TO_PASS: Statuses }),
  apply_log: z.string(),
  /** git's message when the patch does not apply. */
  patch_failed_detail: z.string().nullable(),
  /** Test files the patch touched, reset before the bundle was laid. */
  reset_test_files: z.array(z.string()),
  /** Harness files the patch changed (conftest.py, test configuration, plug-ins, ...): restored, and flagged here. */
  tampered_files: z.array(z.object({ path: z.string(), action: z.enum(['reset', 'removed', 'sections']) })),
  /** Whether the gold patch's runs were evidence in this image, when a run of this patch was not (null: not needed). */
  gold_evidence: z.object({ x: z.boolean(), y: z.boolean() }).nullable(),
  runs: z.object({ x: RunSchema.nullable(), y: RunSchema.nullable() }),
  duration_ms: z.number(),
});
export type InstanceReport = z.infer<typeof InstanceReportSchema>;

export interface EvalAggregate {
  /** Gradeable instances of the split: the means' denominator (less `infra`). */
  total: number;
  /** Instances with a prediction. */
  submitted: number;
  /** Instances with a result (graded or patch_failed). */
  instances: number;
  /** Predictions that changed the test harness (every such file was restored before grading). */
  harness_touched: number;
  /** Instances scored 0 because the patch's runs were no evidence while the gold run's were. */
  no_evidence_under_patch: number;
  patch_failed: number;
  /** Instances whose X or Y run was no evidence, the gold run's too: outside the means. */
  infra: number;
  mean_X: number | null;
  mean_Y: number | null;
  mean_gap: number | null;
  /** How many instances each mean is over. */
  n_X: number;
  n_Y: number;
  n_gap: number;
}

export interface EvalReport {
  dataset: string;
  split: string;
  run: string;
  models: string[];
  finished_at: string;
  aggregate: EvalAggregate;
  instances: InstanceReport[];
  /**
   * `--merged-after`: the rows of the split whose PR1 merged before `date` (an ISO instant) were left out, `left_out`
   * of `of`, with `predictions_left_out` predictions for them; everything else in the report is over the rows left. Null without the
   * flag (absent from reports of an older foresight).
   */
  merged_after?: { date: string; left_out: number; of: number; predictions_left_out: number; instances: string[] } | null;
  /** Rows not graded, and why. */
  skipped: { no_prediction: string[]; not_gradeable: string[] };
  /** Instances whose grading failed for a reason outside the patch (e.g. the eval image is missing): regraded by a rerun. */
  errors: Array<{ instance_id: string; error: string }>;
}

const scoreValue = (s: Score): number | null => (s.kind === 'scored' ? s.value : null);

/** The report entry of one graded instance. */
export function instanceReport(instanceId: string, model: string, r: GradeResult, goldEvidence: InstanceReport['gold_evidence'] = null): InstanceReport {
  const run = (g: Extract<GradeResult, { kind: 'graded' }>['runs']['x']): InstanceReport['runs']['x'] =>
    g && {
      kind: g.kind,
      exit_code: g.exitCode,
      duration_ms: g.durationMs,
      tests: g.tests,
      collection_errors: g.collectionErrors,
      problem: g.problem,
      output_tail: g.outputTail,
      attempts: g.attempts,
    };
  const graded = r.kind === 'graded' ? r : null;
  return {
    instance_id: instanceId,
    model_name_or_path: model,
    kind: r.kind,
    X: scoreValue(r.x),
    Y: scoreValue(r.y),
    gap: r.gap,
    x: r.x,
    y: r.y,
    p2p_regressions: graded ? graded.p2pRegressions : [],
    tests: { FAIL_TO_PASS: graded?.f2p ?? {}, PASS_TO_PASS: graded?.p2p ?? {}, ANTICIPATION_FAIL_TO_PASS: graded?.anti ?? {} },
    apply_log: r.applyLog,
    patch_failed_detail: r.kind === 'patch_failed' ? r.detail : null,
    reset_test_files: graded?.reset ?? [],
    tampered_files: graded?.tampered ?? [],
    gold_evidence: goldEvidence,
    runs: { x: run(graded?.runs.x ?? null), y: run(graded?.runs.y ?? null) },
    duration_ms: r.durationMs,
  };
}

const mean = (xs: number[]): number | null => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : null);

/**
 * The means over every gradeable instance: `instances` are the graded ones, `unsubmitted` the ids of
 * the rest (each counts as X = 0, Y = 0, gap 0). Instances whose runs are no evidence for a reason that
 * is not the patch's (`infra`) are left out and counted apart.
 */
export function aggregate(instances: readonly InstanceReport[], unsubmitted: readonly string[] = []): EvalAggregate {
  const zeros = unsubmitted.map(() => 0);
  const xs = [...instances.flatMap((i) => (i.X === null ? [] : [i.X])), ...zeros];
  const ys = [...instances.flatMap((i) => (i.Y === null ? [] : [i.Y])), ...zeros];
  const gaps = [...instances.flatMap((i) => (i.gap === null ? [] : [i.gap])), ...zeros];
  return {
    total: instances.length + unsubmitted.length,
    submitted: instances.length,
    instances: instances.length,
    harness_touched: instances.filter((i) => i.tampered_files.length > 0).length,
    no_evidence_under_patch: instances.filter((i) => [i.x, i.y].some((s) => s.kind === 'scored' && s.reason === 'no_evidence_under_patch')).length,
    patch_failed: instances.filter((i) => i.kind === 'patch_failed').length,
    infra: instances.filter((i) => i.x.kind === 'infra' || i.y.kind === 'infra').length,
    mean_X: mean(xs),
    mean_Y: mean(ys),
    mean_gap: mean(gaps),
    n_X: xs.length,
    n_Y: ys.length,
    n_gap: gaps.length,
  };
}

const pct = (v: number | null, signed = false): string => (v === null ? '-' : `${signed && v > 0 ? '+' : ''}${(v * 100).toFixed(1)}%`);
const cell = (s: InstanceReport['x']): string => (s.kind === 'scored' ? pct(s.value) : s.kind === 'infra' ? `infra` : '-');

/** The printed table: one line per instance, then the means and what is counted apart. */
export function formatReport(report: EvalReport): string {
  const rows = report.instances.map((i) => [
    i.instance_id,
    cell(i.x),
    cell(i.y),
    pct(i.gap, true),
    i.p2p_regressions === null ? '-' : String(i.p2p_regressions.length),
    [
      i.kind === 'patch_failed' ? 'patch did not apply' : '',
      ...[i.x, i.y].map((s) => (s.kind === 'infra' ? s.reason : s.kind === 'scored' && s.reason ? s.reason : '')),
      i.tampered_files.length ? `harness touched: ${i.tampered_files.map((t) => t.path).join(' ')}` : '',
    ]
      .filter((n, k, all) => n !== '' && all.indexOf(n) === k)
      .join('; '),
  ]);
  const a = report.aggregate;
  const head = ['instance', 'X', 'Y', 'gap', 'p2p regressions', 'note'];
  const foot = [`mean`, `${pct(a.mean_X)} (n=${a.n_X})`, `${pct(a.mean_Y)} (n=${a.n_Y})`, `${pct(a.mean_gap, true)} (n=${a.n_gap})`, '', ''];
  const all = [head, ...rows, foot];
  const widths = head.map((_, c) => Math.max(...all.map((r) => r[c]!.length)));
  const line = (r: string[]): string => r.map((v, c) => v.padEnd(widths[c]!)).join('  ').trimEnd();
  const out = [`${report.run}: ${report.split} split of ${report.dataset}`];
  const w = report.merged_after;
  if (w) {
    const preds = w.predictions_left_out ? `, ${w.predictions_left_out} prediction(s) for them not graded` : '';
    out.push(`--merged-after ${shownDate(w.date)}: ${w.left_out} of ${w.of} row(s) left out (PR1 merged before it)${preds}; X, Y and gap are over the ${w.of - w.left_out} left`);
  }
  out.push(line(head), ...rows.map(line), line(foot));
  out.push(`${a.submitted} of ${a.total} submitted (the means count every instance; one without a prediction scores 0)`);
  out.push(
    `${a.instances} graded, ${a.patch_failed} patch(es) did not apply (scored 0), ${a.no_evidence_under_patch} whose runs were no evidence under the patch (scored 0), ` +
      `${a.harness_touched} touched the test harness (restored before grading), ${a.infra} with an infrastructure failure (outside the means)`,
  );
  if (report.skipped.no_prediction.length) out.push(`no prediction (scored 0): ${report.skipped.no_prediction.join(', ')}`);
  if (report.skipped.not_gradeable.length) out.push(`not gradeable (skipped): ${report.skipped.not_gradeable.length}`);
  for (const e of report.errors) out.push(`not graded: ${e.instance_id}: ${e.error}`);
  return out.join('\n');
}
