import { z } from 'zod';
import {
  AttributionSchema,
  EligibilitySchema,
  FairnessSchema,
  LabelsSchema,
  Pr2SolvabilitySchema,
  SolvabilitySchema,
  SpecCodeSchema,
  StatementSchema,
} from './verdicts.ts';
import { ValidatedChainSchema } from './validated.ts';

export const UsageSchema = z.object({ prompt_tokens: z.number().int().nonnegative(), completion_tokens: z.number().int().nonnegative() });

/** Who answered, with which prompt version, whether it let the chain through, and what it cost. */
const Asked = {
  provider: z.string(),
  model: z.string(),
  version: z.string(),
  pass: z.boolean(),
  usage: UsageSchema,
  /** Requests sent for this answer in the run that made it (0 when it came from the answer cache). */
  calls: z.number().int().nonnegative(),
  cached: z.boolean(),
};
const asked = <T extends z.ZodRawShape>(s: z.ZodObject<T>) => s.extend(Asked);

/** One round of spec-repair: the candidate statement and what the re-judging said. */
export const RepairRoundSchema = z.object({
  round: z.number().int().positive(),
  statement: z.string(),
  writer: asked(StatementSchema),
  code: SpecCodeSchema.nullable(),
  clarity_score: z.number().int().nullable(),
  /** Both fairness judges passed (PR1 rounds); null for PR2 rounds. */
  fair: z.boolean().nullable(),
  /** Tokens the leak detector found (PR1 rounds). */
  leaks: z.array(z.string()),
  accepted: z.boolean(),
});
export type RepairRound = z.infer<typeof RepairRoundSchema>;

/** An answer a model could not give in a usable form (refused, or broke the schema twice): not evidence. */
export const JudgeFailureSchema = z.object({ judge: z.string(), model: z.string(), message: z.string() });

export const VerdictsSchema = z.object({
  /** 'rules' (offline: columns rules cannot judge stay null) or 'llm'. */
  judged_by: z.enum(['rules', 'llm']),
  eligibility: asked(EligibilitySchema).nullable(),
  /** Asked when PR1 was chosen by blame (szz and advisory chains alike), not by a human cross-reference. */
  attribution: asked(AttributionSchema).nullable(),
  /** Two independent judges on two distinct models, on the final PR1 statement; both must pass. */
  fairness: z.array(asked(FairnessSchema)),
  /** PR1's raw statement, and the final one (the same verdict when no repair was accepted). */
  solvability_original: asked(SolvabilitySchema).nullable(),
  solvability: asked(SolvabilitySchema).nullable(),
  pr2_solvability: asked(Pr2SolvabilitySchema).nullable(),
  labels: asked(LabelsSchema).nullable(),
  /** The leak detector on the final PR1 statement. */
  leaks: z.array(z.string()),
  repairs: z.object({ pr1: z.array(RepairRoundSchema), pr2: z.array(RepairRoundSchema) }),
  failures: z.array(JudgeFailureSchema),
});
export type Verdicts = z.infer<typeof VerdictsSchema>;

/** The card's judgement columns, derived from the verdicts (null where nothing judged them). */
export const JudgementSchema = z.object({
  pr1_code: SpecCodeSchema.nullable(),
  pr1_code_original: SpecCodeSchema.nullable(),
  pr1_spec_repaired: z.boolean(),
  clarity_score: z.number().int().min(0).max(3).nullable(),
  pr1_task_type: z.enum(['bug', 'feature', 'mixed']).nullable(),
  pr2_problem_statement: z.string().nullable(),
  pr2_spec_code: SpecCodeSchema.nullable(),
  pr2_spec_repaired: z.boolean(),
  severity: z.enum(['major', 'minor', 'not_a_bug']).nullable(),
  failure_mode: z.enum(['silent', 'loud', 'none']).nullable(),
  trigger_path: z.enum(['default', 'opt-in']).nullable(),
  mechanism: z.string().nullable(),
  difficulty: z.enum(['easy', 'medium', 'hard']).nullable(),
  pr1_difficulty: z.enum(['easy', 'medium', 'hard']).nullable(),
  security: z.boolean().nullable(),
  /** Bug target ∧ clarity ∈ {0, 1} ∧ pr1_code = A; false whenever any of them was not judged. */
  eval_ready: z.boolean(),
  /** Why the row is not eval_ready (empty when it is), e.g. ["clarity_2", "pr1_code_B1", "not_judged"]. */
  quality_flags: z.array(z.string()),
});
export type Judgement = z.infer<typeof JudgementSchema>;

/** What the chain's judging cost: summed over its answers (cached answers count their original tokens). */
export const ChainUsageSchema = UsageSchema.extend({
  calls: z.number().int().nonnegative(),
  cached: z.number().int().nonnegative(),
  usd: z.number().nonnegative().nullable(),
});
export type ChainUsage = z.infer<typeof ChainUsageSchema>;

/** `problem_statement` is the final PR1 statement (repaired when a repair was accepted). */
export const JudgedChainSchema = ValidatedChainSchema.extend({
  verdicts: VerdictsSchema,
  judgement: JudgementSchema,
  usage: ChainUsageSchema,
});
export type JudgedChain = z.infer<typeof JudgedChainSchema>;
