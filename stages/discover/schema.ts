import { z } from 'zod';
import { ExclusionSchema, PullRequestSchema } from '../../pipeline/chain.ts';

/** A reference in a PR's message to earlier work. */
export const ReferenceSchema = z.object({
  kind: z.enum(['regression', 'refs', 'mention', 'revert']),
  /** The PR it resolves to (null when the referenced commit is not part of a PR). */
  pr: z.number().int().positive().nullable(),
  /** The commit named, when the reference is by sha. */
  sha: z.string().nullable(),
  /** The text that matched, for evidence. */
  text: z.string(),
  /** Which source found it (git message, GitHub timeline, Trac ...). */
  source: z.string(),
});
export type Reference = z.infer<typeof ReferenceSchema>;

/** A fix candidate: a PR2 and what points from it to earlier PRs. */
export const CandidateSchema = z.object({
  repo: z.string(),
  pr2: PullRequestSchema,
  references: z.array(ReferenceSchema),
  /** Why this PR is a candidate. */
  signals: z.array(z.enum(['fix_keywords', 'explicit_reference', 'revert'])),
  excluded: ExclusionSchema.nullable(),
});
export type Candidate = z.infer<typeof CandidateSchema>;
