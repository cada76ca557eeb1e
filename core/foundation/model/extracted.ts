import { z } from 'zod';
import { CommentSchema, LinkedIssueSchema } from './candidate.ts';
import { ChainSchema } from './chain.ts';

const Role = { role: z.enum(['fixer', 'introducer']) };

/** A chain with its four commits, split patches, test files and PR1-only statement. */
export const ExtractedChainSchema = ChainSchema.extend({
  instance_id: z.string(),
  pr1_base: z.string(),
  pr1_head: z.string(),
  pr2_base: z.string(),
  pr2_head: z.string(),
  patch: z.string(),
  test_patch: z.string(),
  anticipation_patch: z.string(),
  anticipation_test_patch: z.string(),
  /** Test files PR1 touched that exist at pr1_head: run to score X. */
  pr1_test_files: z.array(z.string()),
  /** Test files PR2 touched that exist at pr2_head: run to score Y. */
  anticipation_test_files: z.array(z.string()),
  /** Every test file each PR touched (support files too): laid over the older commits with the tests. */
  pr1_overlay_files: z.array(z.string()),
  anticipation_overlay_files: z.array(z.string()),
  /** What the agent is told: derived from PR1 alone. */
  problem_statement: z.string(),
  problem_statement_raw: z.string(),
  pr2_problem_statement_raw: z.string(),
  created_at: z.string(),
  pr2_created_at: z.string(),
  gap_days: z.number(),
  /** The discussion around both PRs; null when no source that has it could run (git-only). */
  pr_comments: z.array(CommentSchema.extend(Role)).nullable(),
  linked_issues: z.array(LinkedIssueSchema.extend(Role)).nullable(),
});
export type ExtractedChain = z.infer<typeof ExtractedChainSchema>;
