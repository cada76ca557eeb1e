/**
 * The rows of an emitted dataset as the report shows them: every row of `jsonl/verified.jsonl`, marked
 * `test` when `jsonl/test.jsonl` holds it. List and verdict columns are JSON-encoded strings (the card);
 * they are decoded here so a malformed one is an error naming file and line, not a blank on the page.
 * Columns added by later foresight versions are optional: an older dataset still gets a report.
 */
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { ForesightError } from '../../core/foundation/errors.ts';
import { parseLine, readJsonLines } from '../eval/read-jsonl.ts';
import { evalReadyWhy, type EvalReadyWhy } from './eval-ready.ts';

/** The seven test sets of a row, in the card's order. */
export const SET_COLUMNS = [
  'FAIL_TO_PASS',
  'PASS_TO_PASS',
  'p2p_excluded_gold_fail',
  'ANTICIPATION_FAIL_TO_PASS',
  'PR2_FAIL_TO_PASS',
  'PR2_PASS_TO_PASS',
  'flaky_tests',
] as const;
export type SetColumn = (typeof SET_COLUMNS)[number];

/** The judges' answers (JSON strings, null where no judge answered). */
export const VERDICT_COLUMNS = [
  'eligibility_verdict',
  'attribution_verdict',
  'fairness_verdicts',
  'solvability_verdict',
  'pr2_solvability_verdict',
  'labels_verdict',
  'spec_repairs',
] as const;

/** A JSON-encoded column decoded with `schema`; absent or null stays null. */
function jsonColumn<T extends z.ZodType>(schema: T) {
  return z
    .string()
    .nullish()
    .transform((s, ctx): z.infer<T> | null => {
      if (s === null || s === undefined || s === '') return null;
      let raw: unknown;
      try {
        raw = JSON.parse(s);
      } catch {
        ctx.addIssue({ code: 'custom', message: 'is not a JSON-encoded value' });
        return z.NEVER;
      }
      const parsed = schema.safeParse(raw);
      if (!parsed.success) {
        ctx.addIssue({ code: 'custom', message: parsed.error.issues[0]?.message ?? 'invalid' });
        return z.NEVER;
      }
      return parsed.data;
    });
}

const text = z.string().nullish().transform((s) => s ?? '');
const optText = z.string().nullish().transform((s) => s ?? null);
const list = jsonColumn(z.array(z.string())).transform((l) => l ?? []);
const anyJson = jsonColumn(z.unknown());

const sets = Object.fromEntries(SET_COLUMNS.map((c) => [c, list])) as Record<SetColumn, typeof list>;
const verdicts = Object.fromEntries(VERDICT_COLUMNS.map((c) => [c, anyJson])) as Record<(typeof VERDICT_COLUMNS)[number], typeof anyJson>;

/** The columns the report reads; others (grading bundle, images) are dropped to keep the page small. */
export const ReportRowSchema = z.object({
  instance_id: z.string().min(1),
  repo: text,
  base_commit: text,
  pr1_head_sha: text,
  pr2_base_sha: text,
  pr2_head_sha: text,
  created_at: optText,
  pr2_created_at: optText,
  gap_days: z.number().nullish().transform((n) => n ?? null),
  problem_statement: text,
  problem_statement_raw: text,
  pr2_problem_statement: optText,
  pr2_problem_statement_raw: text,
  patch: text,
  test_patch: text,
  anticipation_patch: text,
  anticipation_test_patch: text,
  ...sets,
  gradeable: z.boolean(),
  excluded: z.boolean(),
  exclusion_reason: optText,
  exclusion_detail: optText,
  mining_category: text,
  mining_evidence: anyJson,
  ...verdicts,
  fairness_consensus: optText,
  eval_ready: z.boolean().nullish().transform((b) => b ?? null),
  /** {judged_by, ...}: who judged the row (the offline rules leave solvability and clarity unjudged). */
  llm_usage: anyJson,
  severity: optText,
  failure_mode: optText,
  trigger_path: optText,
  mechanism: optText,
  difficulty: optText,
  pr1_difficulty: optText,
  pr1_task_type: optText,
  pr1_code: optText,
  clarity_score: z.number().nullish().transform((n) => n ?? null),
  pr2_spec_code: optText,
  runner: text,
});
export type ReportRow = z.infer<typeof ReportRowSchema> & {
  /** `test` when the row is in the test split, else `verified` (the verified config only). */
  split: 'test' | 'verified';
  /** Why eval_ready is false (null when it is true or unknown). */
  eval_ready_why: EvalReadyWhy | null;
};

/** What the report takes from the test split: membership, eval_ready, and `quality` ({judged_by, flags}: why not eval_ready). */
const TestIdSchema = z.object({ instance_id: z.string().min(1), eval_ready: z.boolean().nullish(), quality: anyJson });

const REMEDY = 'pass --dataset <the emitted dataset folder> (data/<owner>__<name>/emit/hf, it holds jsonl/verified.jsonl)';
const STALE = 'emit the dataset again (foresight emit --repo owner/name --force)';

/** Every verified row of the dataset folder, in file order, each marked with its split. */
export async function readReportRows(dataset: string): Promise<ReportRow[]> {
  if (!existsSync(dataset) || !statSync(dataset).isDirectory()) {
    throw new ForesightError(`--dataset ${dataset} is not a folder`, { remedy: REMEDY });
  }
  const verifiedPath = join(dataset, 'jsonl', 'verified.jsonl');
  if (!existsSync(verifiedPath)) throw new ForesightError(`${dataset} holds no jsonl/verified.jsonl`, { remedy: REMEDY });
  const testPath = join(dataset, 'jsonl', 'test.jsonl');
  const inTest = new Map<string, { eval_ready: boolean | null; quality: unknown }>();
  if (existsSync(testPath)) {
    for (const l of await readJsonLines(testPath, 'the test split', STALE)) {
      const r = parseLine(TestIdSchema, l, testPath, STALE);
      inTest.set(r.instance_id, { eval_ready: r.eval_ready ?? null, quality: r.quality });
    }
  }
  const rows: ReportRow[] = [];
  for (const l of await readJsonLines(verifiedPath, 'the verified config', STALE)) {
    const r = parseLine(ReportRowSchema, l, verifiedPath, STALE);
    const t = inTest.get(r.instance_id);
    // Older verified rows lack eval_ready; the test split has carried it longer.
    const row = { ...r, eval_ready: r.eval_ready ?? t?.eval_ready ?? null, split: t ? ('test' as const) : ('verified' as const) };
    rows.push({ ...row, eval_ready_why: evalReadyWhy(row, t?.quality ?? null) });
  }
  const ids = new Set(rows.map((r) => r.instance_id));
  const missing = [...inTest.keys()].filter((id) => !ids.has(id));
  if (missing.length) {
    throw new ForesightError(`${testPath} holds ${missing.join(', ')}, which ${verifiedPath} lacks`, { remedy: STALE });
  }
  return rows;
}
