/**
 * The rows of an emitted dataset as the report shows them: every mined chain, the rows of `jsonl/funnel.jsonl`
 * (with any `jsonl/verified.jsonl` row a release carries that the funnel lacks), each marked with the config
 * it reaches: `test` when `jsonl/test.jsonl` holds it (it is then a `verified` row too), `verified` when only
 * `verified` does (a published row now excluded), else `funnel`. A folder an older foresight wrote has no
 * funnel: its `verified.jsonl` held every chain, and is read as the funnel. List and verdict columns are
 * JSON-encoded strings (the card); they are decoded here so a malformed one is an error naming file and
 * line, not a blank on the page.
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
  /** The config the chain reaches: `test` (and `verified`), `verified` only (published, now excluded), or `funnel` only. */
  split: 'test' | 'verified' | 'funnel';
  /** Why eval_ready is false (null when it is true or unknown). */
  eval_ready_why: EvalReadyWhy | null;
};

/** What the report takes from the test split: membership, eval_ready, and `quality` ({judged_by, flags}: why not eval_ready). */
const TestIdSchema = z.object({ instance_id: z.string().min(1), eval_ready: z.boolean().nullish(), quality: anyJson });

const REMEDY = 'pass --dataset <the emitted dataset folder> (data/<owner>__<name>/emit/hf, it holds jsonl/funnel.jsonl)';
const STALE = 'emit the dataset again (foresight emit --repo owner/name --force)';

export interface ReportRows {
  rows: ReportRow[];
  /** The folder predates the funnel config: its `verified.jsonl` (every chain) was read as the funnel. */
  olderLayout: boolean;
}

/** Every chain of the dataset folder, in file order (the funnel's, then any other `verified` row), each marked with its config. */
export async function readReportRows(dataset: string): Promise<ReportRows> {
  if (!existsSync(dataset) || !statSync(dataset).isDirectory()) {
    throw new ForesightError(`--dataset ${dataset} is not a folder`, { remedy: REMEDY });
  }
  const funnelPath = join(dataset, 'jsonl', 'funnel.jsonl');
  const verifiedPath = join(dataset, 'jsonl', 'verified.jsonl');
  const olderLayout = !existsSync(funnelPath) && existsSync(verifiedPath);
  if (!existsSync(funnelPath) && !olderLayout) throw new ForesightError(`${dataset} holds no jsonl/funnel.jsonl`, { remedy: REMEDY });
  const testPath = join(dataset, 'jsonl', 'test.jsonl');
  const inTest = new Map<string, { eval_ready: boolean | null; quality: unknown }>();
  if (existsSync(testPath)) {
    for (const l of await readJsonLines(testPath, 'the test split', STALE)) {
      const r = parseLine(TestIdSchema, l, testPath, STALE);
      inTest.set(r.instance_id, { eval_ready: r.eval_ready ?? null, quality: r.quality });
    }
  }
  const read = async (path: string, what: string) => (await readJsonLines(path, what, STALE)).map((l) => parseLine(ReportRowSchema, l, path, STALE));
  const chains = await read(olderLayout ? verifiedPath : funnelPath, olderLayout ? 'the verified config (every chain, as an older foresight wrote it)' : 'the funnel config');
  const verified = new Set<string>();
  if (!olderLayout && existsSync(verifiedPath)) {
    const seen = new Set(chains.map((r) => r.instance_id));
    for (const r of await read(verifiedPath, 'the verified config')) {
      verified.add(r.instance_id);
      if (!seen.has(r.instance_id)) chains.push(r);
    }
  }
  const rows: ReportRow[] = [];
  for (const r of chains) {
    const t = inTest.get(r.instance_id);
    const split = t ? ('test' as const) : verified.has(r.instance_id) ? ('verified' as const) : ('funnel' as const);
    // Older rows lack eval_ready; the test split has carried it longer.
    const row = { ...r, eval_ready: r.eval_ready ?? t?.eval_ready ?? null, split };
    rows.push({ ...row, eval_ready_why: evalReadyWhy(row, t?.quality ?? null) });
  }
  const ids = new Set(rows.map((r) => r.instance_id));
  const missing = [...inTest.keys()].filter((id) => !ids.has(id));
  if (missing.length) {
    throw new ForesightError(`${testPath} holds ${missing.join(', ')}, which ${olderLayout ? verifiedPath : funnelPath} lacks`, { remedy: STALE });
  }
  return { rows, olderLayout };
}
