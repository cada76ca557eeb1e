/**
 * Why a row is not `eval_ready`. The judge sets eval_ready = PR2 judged a bug fix ∧ pr1_code = A ∧
 * clarity ≤ 1 and records the unmet conditions as flags: the `test` split carries them in its `quality`
 * column ({judged_by, flags}); the `verified` and `funnel` configs have no such column, so for other rows the
 * same flags are derived from the verdict columns they do carry.
 */
import { z } from 'zod';

const QualitySchema = z.object({ judged_by: z.string().nullish(), flags: z.array(z.string()) });
const EligibilitySchema = z.object({ verdict: z.string() });
const SolvabilitySchema = z.object({ code: z.string(), clarity_score: z.number() });
const UsageSchema = z.object({ judged_by: z.string() });

/** The flags of `quality` (a test row), or null when the value is not that shape. */
export function qualityFlags(quality: unknown): string[] | null {
  const q = QualitySchema.safeParse(quality);
  return q.success ? q.data.flags : null;
}

/** The judge's flags recomputed from a verified row's verdict columns (decoded JSON, null when absent). */
export function derivedFlags(r: { eligibility_verdict: unknown; solvability_verdict: unknown; llm_usage: unknown }): string[] {
  const flags: string[] = [];
  const usage = UsageSchema.safeParse(r.llm_usage);
  if (usage.success && usage.data.judged_by === 'rules') flags.push('not_judged');
  const elig = EligibilitySchema.safeParse(r.eligibility_verdict);
  if (!elig.success) flags.push('target_unjudged');
  else if (elig.data.verdict !== 'bug_fix') flags.push(`target_${elig.data.verdict}`);
  const solv = SolvabilitySchema.safeParse(r.solvability_verdict);
  if (!solv.success) flags.push('pr1_code_unjudged');
  else {
    if (solv.data.code !== 'A') flags.push(`pr1_code_${solv.data.code}`);
    if (solv.data.clarity_score > 1) flags.push(`clarity_${solv.data.clarity_score}`);
  }
  return flags;
}

/** One flag in words. */
export function flagMeaning(flag: string): string {
  if (flag === 'not_judged') return 'judged by the offline rules, which judge neither PR1\u2019s solvability nor its clarity (set FORESIGHT_LLM_BASE_URL to judge with an LLM)';
  if (flag === 'target_unjudged') return 'PR2 has no eligibility verdict (bug fix or not)';
  if (flag === 'pr1_code_unjudged') return 'PR1\u2019s statement has no solvability verdict (pr1_code)';
  let m = /^target_(.+)$/.exec(flag);
  if (m) return `PR2 was judged ${m[1]}, not a bug fix`;
  m = /^pr1_code_(.+)$/.exec(flag);
  if (m) return `PR1\u2019s statement was judged ${m[1]}, not A (solvable)`;
  m = /^clarity_(\d+)$/.exec(flag);
  if (m) return `PR1\u2019s statement has clarity ${m[1]} (eval_ready needs 0 or 1)`;
  return flag;
}

export interface EvalReadyWhy {
  flags: string[];
  /** Where the flags come from: the row's `quality` column, or the verdict columns. */
  source: 'quality' | 'verdicts';
  /** The flags in words, or a sentence saying the row records none. */
  text: string;
}

/** Why `eval_ready` is false, or null when it is true or unknown. */
export function evalReadyWhy(
  r: { eval_ready: boolean | null; exclusion_reason: string | null; eligibility_verdict: unknown; solvability_verdict: unknown; llm_usage: unknown },
  quality: unknown,
): EvalReadyWhy | null {
  if (r.eval_ready !== false) return null;
  const recorded = qualityFlags(quality);
  const flags = recorded ?? derivedFlags(r);
  const source = recorded ? 'quality' : 'verdicts';
  const words = flags.map(flagMeaning);
  // Excluded chains are not judged: the exclusion, not a judge, is why nothing was answered.
  if (r.exclusion_reason && r.eligibility_verdict === null) words.unshift(`excluded (${r.exclusion_reason}) before it was judged`);
  const text = words.length ? words.join('; ') : 'eval_ready is false but the row records no unmet condition (emit the dataset again)';
  return { flags, source, text };
}
