import { z } from 'zod';

/**
 * What each judge and writer answers, as recorded in the judged artifact. The judges (judges/) ask for
 * these shapes; the schemas live here because the artifact is shared by the judge and emit stages.
 * Every schema puts `reason` first: a model writes its reasoning before it commits to a code.
 */
export const EligibilitySchema = z.object({
  reason: z.string(),
  verdict: z.enum(['bug_fix', 'feature', 'revert', 'refactor', 'not_a_bug']),
});
export type Eligibility = z.infer<typeof EligibilitySchema>;

/** A: PR1 introduced the defect. B: the defect predates PR1. C: PR1 only moved the lines. D: unrelated. */
export const AttributionSchema = z.object({
  reason: z.string(),
  code: z.enum(['A', 'B', 'C', 'D']),
});
export type Attribution = z.infer<typeof AttributionSchema>;

/**
 * Solvability codes of a task statement against the tests that grade it (after SWE-rebench V2's
 * diagnostic rubric, reduced to what decides a row here):
 *   A   solvable: the statement asks for the behaviour the tests check;
 *   B1  the tests check details the statement cannot imply (exact names, messages, private interfaces);
 *   B2  under-specified: the intent is there, but behaviour the tests need is missing (repairable from the
 *       task's own material);
 *   B3  the tests check a different or broader task than the statement asks for;
 *   B4  solving needs knowledge or resources outside the statement and the repository;
 *   B5  the gold patch bundles unrelated changes the tests require.
 */
export const SPEC_CODES = ['A', 'B1', 'B2', 'B3', 'B4', 'B5'] as const;
export const SpecCodeSchema = z.enum(SPEC_CODES);

/** PR1's statement as a task: solvability, clarity (0 = crystal clear … 3 = unusable) and task type. */
export const SolvabilitySchema = z.object({
  reason: z.string(),
  code: SpecCodeSchema,
  clarity_score: z.number().int().min(0).max(3),
  task_type: z.enum(['bug', 'feature', 'mixed']),
});
export type Solvability = z.infer<typeof SolvabilitySchema>;

/** PR2's synthesised statement: can the held-out tests be derived from it? */
export const Pr2SolvabilitySchema = z.object({
  reason: z.string(),
  code: SpecCodeSchema,
});
export type Pr2Solvability = z.infer<typeof Pr2SolvabilitySchema>;

export const FairnessSchema = z.object({
  reason: z.string(),
  leak: z.boolean(),
  prescribes_mechanism: z.boolean(),
});
export type Fairness = z.infer<typeof FairnessSchema>;

export const MECHANISMS = [
  'regression',
  'missed_edge_case',
  'incomplete_implementation',
  'incorrect_logic',
  'wrong_assumption',
  'integration',
  'concurrency',
  'other',
] as const;
export const LEVELS = ['easy', 'medium', 'hard'] as const;

/**
 * Labels of the edge case PR2 fixed (an anchored rubric: each level is defined in the prompt). `severity`
 * is not asked: it is derived from impact, reach and failure_mode (judges/labels/severity.ts).
 */
export const LabelsSchema = z.object({
  reason: z.string(),
  impact: z.enum(['none', 'low', 'medium', 'high']),
  reach: z.enum(['narrow', 'moderate', 'wide']),
  failure_mode: z.enum(['silent', 'loud', 'none']),
  trigger_path: z.enum(['default', 'opt-in']),
  mechanism: z.enum(MECHANISMS),
  difficulty: z.enum(LEVELS),
  pr1_difficulty: z.enum(LEVELS),
  security: z.boolean(),
});
export type Labels = z.infer<typeof LabelsSchema>;

/** A writer's answer: a task statement. */
export const StatementSchema = z.object({
  reason: z.string(),
  statement: z.string(),
});
export type Statement = z.infer<typeof StatementSchema>;
