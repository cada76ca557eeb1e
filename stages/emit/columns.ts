import { z } from 'zod';
import type { ColumnSpec } from './write-parquet.ts';

const s = (name: string, nullable = false): ColumnSpec => ({ name, type: 'string', nullable });
const b = (name: string, nullable = false): ColumnSpec => ({ name, type: 'bool', nullable });
const i = (name: string, nullable = false): ColumnSpec => ({ name, type: 'int64', nullable });

/**
 * The `test` split (v1 schema of the dataset card). Test lists and structured fields are JSON-encoded
 * strings, as in the card. Judgement columns are null where no judge answered them
 * (the offline rules provider answers only eligibility, attribution and fairness).
 */
export const TEST_COLUMNS: readonly ColumnSpec[] = [
  s('instance_id'), s('repo'), s('base_commit'), s('environment_setup_commit'),
  s('pr1_head_sha'), s('pr2_base_sha'), s('pr2_head_sha'),
  s('problem_statement'), s('problem_statement_raw'), s('patch'), s('test_patch'),
  s('FAIL_TO_PASS'), s('PASS_TO_PASS'),
  s('anticipation_patch'), s('anticipation_test_patch'), s('ANTICIPATION_FAIL_TO_PASS'),
  s('pr2_problem_statement', true), s('pr2_problem_statement_raw'), b('pr2_spec_repaired'), s('pr2_spec_code', true),
  s('pr1_test_files'), s('anticipation_test_files'),
  s('docker_image'), s('repo_path'), s('runner'), s('install_cmd'), s('test_cmd'), s('run_helper'), s('grading_bundle'), s('db_backend'),
  s('created_at'), s('pr2_created_at'), i('gap_days'),
  b('eval_ready'), b('fully_gradeable'),
  s('pr1_code', true), s('pr1_code_original', true), b('pr1_spec_repaired'),
  s('severity', true), s('failure_mode', true), s('trigger_path', true), s('mechanism', true),
  s('difficulty', true), s('pr1_difficulty', true), s('pr1_task_type', true),
  s('mining_category'), s('mining_evidence'), s('quality'), i('clarity_score', true),
];

/**
 * The schema of the `verified` config (the chains that passed every gate) and of the `funnel` config (every chain,
 * gradeable or not): the gates' verdicts and, for an excluded chain, why.
 */
export const VERIFIED_COLUMNS: readonly ColumnSpec[] = [
  s('instance_id'), s('repo'), s('language'), s('runner'),
  s('base_commit'), s('pr1_head_sha'), s('pr2_base_sha'), s('pr2_head_sha'),
  s('problem_statement'), s('problem_statement_raw'), s('patch'), s('test_patch'),
  s('anticipation_patch'), s('anticipation_test_patch'), s('pr2_problem_statement', true), s('pr2_problem_statement_raw'),
  s('pr1_test_files'), s('anticipation_test_files'),
  s('FAIL_TO_PASS'), s('PASS_TO_PASS'), s('p2p_excluded_gold_fail'), s('ANTICIPATION_FAIL_TO_PASS'),
  s('PR2_FAIL_TO_PASS'), s('PR2_PASS_TO_PASS'), s('flaky_tests'),
  b('gradeable'), b('excluded'), s('exclusion_reason', true), s('exclusion_detail', true),
  s('mining_category'), s('mining_evidence'),
  s('eligibility_verdict', true), s('attribution_verdict', true), s('fairness_verdicts'), s('fairness_consensus', true),
  s('solvability_verdict', true), s('pr2_solvability_verdict', true), s('labels_verdict', true), s('spec_repairs'),
  b('eval_ready'), s('pr1_code', true), s('pr1_code_original', true), b('pr1_spec_repaired'), s('pr1_task_type', true), i('clarity_score', true),
  b('pr2_spec_repaired'), s('pr2_spec_code', true),
  s('severity', true), s('failure_mode', true), s('trigger_path', true), s('mechanism', true),
  s('difficulty', true), s('pr1_difficulty', true),
  s('docker_image'), s('env_image_pr1'), s('env_image_pr2'), s('image_tier'), s('repo_path'), s('install_cmd'), s('test_cmd'), s('run_helper'), s('grading_bundle', true), s('db_backend'),
  s('pr_comments', true), s('linked_issues', true), b('security', true), s('llm_usage'), s('provenance'),
  s('created_at'), s('pr2_created_at'), i('gap_days'),
];

/** A zod schema for rows of the given columns: every column present, of its type, null only where allowed. */
export function rowSchema(columns: readonly ColumnSpec[]): z.ZodType<Record<string, unknown>> {
  const shape: Record<string, z.ZodType> = {};
  for (const c of columns) {
    const base = c.type === 'string' ? z.string() : c.type === 'bool' ? z.boolean() : c.type === 'int64' ? z.number().int() : z.number();
    shape[c.name] = c.nullable ? base.nullable() : base;
  }
  return z.object(shape).strict();
}
