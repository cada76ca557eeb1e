import type { Judgement } from '../../core/foundation/model/judged.ts';
import { severity } from '../../judges/labels/index.ts';
import type { ChainJudgement } from './chain.ts';

/**
 * The card's judgement columns from the verdicts. Nothing is guessed: a column no judge answered stays
 * null, and eval_ready (bug target ∧ clarity ∈ {0, 1} ∧ pr1_code = A) is false unless all three were judged.
 */
export function deriveJudgement(j: ChainJudgement): Judgement {
  const v = j.verdicts;
  const solv = v.solvability;
  const labels = v.labels;
  const flags: string[] = [];
  if (v.judged_by === 'rules') flags.push('not_judged');
  if (v.eligibility?.verdict !== 'bug_fix') flags.push(v.eligibility ? `target_${v.eligibility.verdict}` : 'target_unjudged');
  if (!solv) flags.push('pr1_code_unjudged');
  else {
    if (solv.code !== 'A') flags.push(`pr1_code_${solv.code}`);
    if (solv.clarity_score > 1) flags.push(`clarity_${solv.clarity_score}`);
  }
  const evalReady = v.eligibility?.verdict === 'bug_fix' && solv !== null && solv.code === 'A' && solv.clarity_score <= 1;
  return {
    pr1_code: solv?.code ?? null,
    pr1_code_original: v.solvability_original?.code ?? null,
    pr1_spec_repaired: j.pr1Repaired,
    clarity_score: solv?.clarity_score ?? null,
    pr1_task_type: solv?.task_type ?? null,
    pr2_problem_statement: j.pr2Statement,
    pr2_spec_code: v.pr2_solvability?.code ?? null,
    pr2_spec_repaired: j.pr2Repaired,
    severity: labels ? severity(labels) : null,
    failure_mode: labels?.failure_mode ?? null,
    trigger_path: labels?.trigger_path ?? null,
    mechanism: labels?.mechanism ?? null,
    difficulty: labels?.difficulty ?? null,
    pr1_difficulty: labels?.pr1_difficulty ?? null,
    security: labels?.security ?? null,
    eval_ready: evalReady,
    quality_flags: evalReady ? [] : [...new Set(flags)],
  };
}

