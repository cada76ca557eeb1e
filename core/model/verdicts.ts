import { z } from 'zod';

/**
 * What each judge decides, as recorded in the judged artifact. The judges (judges/) answer in these
 * shapes; the schemas live here because the artifact is shared by the judge and emit stages.
 */
export const EligibilitySchema = z.object({
  verdict: z.enum(['bug_fix', 'feature', 'revert', 'refactor', 'not_a_bug']),
  reason: z.string(),
});
export type Eligibility = z.infer<typeof EligibilitySchema>;

/** A: PR1 introduced the defect. B: the defect predates PR1. C: PR1 only moved the lines. D: unrelated. */
export const AttributionSchema = z.object({
  code: z.enum(['A', 'B', 'C', 'D']),
  reason: z.string(),
});
export type Attribution = z.infer<typeof AttributionSchema>;

export const FairnessSchema = z.object({
  leak: z.boolean(),
  prescribes_mechanism: z.boolean(),
  reason: z.string(),
});
export type Fairness = z.infer<typeof FairnessSchema>;
