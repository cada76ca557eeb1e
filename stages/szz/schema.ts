import { z } from 'zod';
import { PullRequestSchema } from '../../pipeline/chain.ts';
import { CandidateSchema } from '../discover/schema.ts';

export const MiningCategorySchema = z.enum(['cross_reference', 'szz']);

/** One PR that blame attributes some of PR2's fixed lines to. */
export const BlameCandidateSchema = z.object({
  pr: z.number().int().positive(),
  /** Weighted count of fixed lines attributed to it (modified/deleted lines 1, anchors of pure additions 0.5). */
  score: z.number(),
  lines: z.array(z.object({ file: z.string(), line: z.number().int(), sha: z.string() })),
});

export const SzzEvidenceSchema = z.object({
  pickedBy: z.enum(['reference_confirmed_by_blame', 'reference', 'blame', 'revert_target']),
  candidates: z.array(BlameCandidateSchema),
  /** Blamed lines (weighted) that belong to no PR (direct commits) or to commits outside the history. */
  unattributedScore: z.number(),
  /** Lines blamed in total (after dropping blank and comment lines). */
  blamedLines: z.number().int(),
  addOnly: z.boolean(),
});
export type SzzEvidence = z.infer<typeof SzzEvidenceSchema>;

/** A chain: PR2 with the PR1 it is attributed to. */
export const ChainSchema = CandidateSchema.extend({
  pr1: PullRequestSchema,
  mining_category: MiningCategorySchema,
  szz: SzzEvidenceSchema,
});
export type Chain = z.infer<typeof ChainSchema>;
