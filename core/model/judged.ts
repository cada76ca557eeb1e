import { z } from 'zod';
import { AttributionSchema, EligibilitySchema, FairnessSchema } from './verdicts.ts';
import { ValidatedChainSchema } from './validated.ts';

const Source = { provider: z.string(), model: z.string(), pass: z.boolean() };

export const VerdictsSchema = z.object({
  eligibility: EligibilitySchema.extend(Source).nullable(),
  /** Asked only when PR1 was found by blame rather than a human cross-reference. */
  attribution: AttributionSchema.extend(Source).nullable(),
  /** Two independent judges; both must pass. */
  fairness: z.array(FairnessSchema.extend(Source)),
});
export type Verdicts = z.infer<typeof VerdictsSchema>;

export const JudgedChainSchema = ValidatedChainSchema.extend({ verdicts: VerdictsSchema });
export type JudgedChain = z.infer<typeof JudgedChainSchema>;
