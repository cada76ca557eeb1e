import { z } from 'zod';
import { CommentSchema, LinkedIssueSchema } from './candidate.ts';
import { ChainSchema } from './chain.ts';

const Role = { role: z.enum(['fixer', 'introducer']) };

/** The test modules a PR's data files (fixtures, golden files, snapshots) selected: each with what it reads and why. */
export const DataConsumersSchema = z.object({
  consumers: z.array(z.object({ module: z.string(), files: z.array(z.string()), reason: z.string() })),
  /** Data files the PR changed that no test module references: they select nothing. */
  unreferenced: z.array(z.string()),
  /** Set when more modules read the data than are run. */
  capped: z.object({ found: z.number(), kept: z.number() }).nullable(),
});
const none = (): z.infer<typeof DataConsumersSchema> => ({ consumers: [], unreferenced: [], capped: null });

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
  /** Test files PR1 touched that exist at pr1_head, and the modules reading its data files: run to score X. */
  pr1_test_files: z.array(z.string()),
  /** Test files PR2 touched that exist at pr2_head, and the modules reading its data files: run to score Y. */
  anticipation_test_files: z.array(z.string()),
  /**
   * The modules among the test files that run because they read a PR's data files (not touched by it), per PR.
   * Artifacts written before the search read as none found: their test files hold no such module.
   */
  data_consumers: z.object({ pr1: DataConsumersSchema, pr2: DataConsumersSchema }).default(() => ({ pr1: none(), pr2: none() })),
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
