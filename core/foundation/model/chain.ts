import { z } from 'zod';
import { PullRequestSchema } from './change.ts';
import { CandidateSchema } from './candidate.ts';

/** Which source found the chain (not a bug type). */
export const MiningCategorySchema = z.enum(['cross_reference', 'szz', 'advisory']);

/** One change that blame attributes some of PR2's fixed lines to. */
export const BlameCandidateSchema = z.object({
  /** PullRequest.id of the change. */
  change: z.string(),
  /** Weighted count of fixed lines attributed to it (see stages/szz/attribute.ts). */
  score: z.number(),
  lines: z.array(z.object({ file: z.string(), line: z.number().int(), sha: z.string() })),
});

export const SzzEvidenceSchema = z.object({
  pickedBy: z.enum(['reference_confirmed_by_blame', 'reference', 'blame', 'revert_target']),
  candidates: z.array(BlameCandidateSchema),
  /** Blamed lines (weighted) that belong to no change (commits outside the listed changes). */
  unattributedScore: z.number(),
  /** Lines blamed in total (after dropping blank and comment lines). */
  blamedLines: z.number().int(),
  addOnly: z.boolean(),
  /** Weighted lines dropped because their commit came after the defect was reported. */
  filteredByTime: z.number(),
  /** Meta-changes blame looked through. */
  metaSkipped: z.array(z.object({ sha: z.string(), reason: z.string() })),
});
export type SzzEvidence = z.infer<typeof SzzEvidenceSchema>;

/** A chain: PR2 with the PR1 it is attributed to. */
export const ChainSchema = CandidateSchema.extend({
  pr1: PullRequestSchema,
  mining_category: MiningCategorySchema,
  szz: SzzEvidenceSchema,
});
export type Chain = z.infer<typeof ChainSchema>;
