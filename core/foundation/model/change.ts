import { z } from 'zod';
import { STAGES } from '../stage.ts';

/**
 * Why a chain is not gradeable. The dataset card's names first, then precise ones (README lists all).
 * Environment failures are kept apart from chain failures.
 */
export const EXCLUSION_REASONS = {
  // environment broke: says nothing about the chain
  env_failed_pr1: 'a PR1-era state (S1 or S2) did not produce test outcomes',
  env_failed_pr2: 'a PR2-era state (S3, S4 or S5) did not produce test outcomes',
  // chain failed
  pr1_base_crash: "the test runner crashes at pr1_base with PR1's test files overlaid (they need code PR1 adds to load)",
  pr2_base_crash: "the test runner crashes at pr2_base with PR2's test files overlaid (they need code PR2 adds to load)",
  no_pr1_failure: "PR1's own tests do not fail at pr1_base",
  pr1_f2p_zero: 'tests fail at pr1_base but none of them passes at pr1_head, so there is no PR1 fail->pass set',
  pr1_p2p_empty: 'no PR1 test passes both before and after PR1, so there is no PASS_TO_PASS set',
  pr1_no_tests: 'PR1 touched no test file',
  pr2_no_tests: 'PR2 touched no test file',
  test_path_not_utf8: "a test file the PR's tests run from has a name that is not UTF-8: its test ids cannot be stored as text",
  pr2_not_fail_to_pass: "PR2's tests do not fail at pr2_base and pass at pr2_head",
  pr1_tests_skipped: "PR1's candidate tests are skipped here (they need something this environment lacks, e.g. another database backend)",
  pr2_tests_skipped: "PR2's candidate tests are skipped here (they need something this environment lacks, e.g. another database backend)",
  anticipation_empty: "PR2's fail->pass tests already pass at pr1_head: PR1 did not miss them",
  anticipation_not_gradeable: "PR2's tests cannot be imported at pr1_head because of commits between PR1 and PR2",
  ineligible: 'PR2 is not a bug fix (a feature, a revert or not a bug)',
  unattributed: 'PR1 did not introduce the defect PR2 fixed',
  defect_predates_pr1: "the defect is older than PR1: PR2's source change applied at pr1_base makes PR2's anticipation tests pass there, and they fail there without it",
  unfair_statement: "PR1's statement leaks the future fix or prescribes the mechanism (a fairness judge, or the leak detector naming the leaked tokens)",
  pr2_spec_unsolvable: "PR2's synthesised statement does not let its held-out tests be derived (pr2_spec_code is not A after repair)",
  judge_failed: 'a judge gave no usable answer for this chain (refused, or broke its schema twice): nothing was decided',
  eval_image_failed: 'the eval image (the repository at base_commit over the PR1-era environment) could not be built',
  gold_check_failed: "graded in its eval image with PR1's own patch, the row does not score X = 100%, Y = 0% without PASS_TO_PASS regressions",
  sets_changed: "a published row validated again for a later release: its FAIL_TO_PASS, PASS_TO_PASS or ANTICIPATION_FAIL_TO_PASS are no longer the published ones",
} as const;
export type ExclusionReason = keyof typeof EXCLUSION_REASONS;
export const ExclusionReasonSchema = z.enum(Object.keys(EXCLUSION_REASONS) as [ExclusionReason, ...ExclusionReason[]]);

export const ExclusionSchema = z.object({
  reason: ExclusionReasonSchema,
  /** One line saying what was seen. */
  detail: z.string(),
  stage: z.enum(STAGES),
});
export type Exclusion = z.infer<typeof ExclusionSchema>;

/**
 * A merged change as seen in the mainline history: a pull request, or, in a repository whose history
 * records no PRs (Django's), a mainline commit.
 */
export const PullRequestSchema = z.object({
  /** Key of the change: the PR number as a string, or the commit's 10-character sha for a commit. */
  id: z.string(),
  /** The PR number; null for a direct commit used as a change. */
  number: z.number().int().positive().nullable(),
  title: z.string(),
  body: z.string(),
  author: z.string(),
  mergedAt: z.string(),
  /** The commit on the mainline that merged the PR (squash commit or merge commit). */
  mergeSha: z.string(),
  /** First parent of mergeSha. */
  baseSha: z.string(),
  /** squash/merge: a GitHub PR; commit: a mainline commit standing for itself. */
  style: z.enum(['squash', 'merge', 'commit']),
  /** The PR's own commits (for a squash, the squash commit). */
  commits: z.array(z.string()),
});
export type PullRequest = z.infer<typeof PullRequestSchema>;

/** How a change is named to people: "PR #12" or "commit 0123456789". */
export function changeLabel(c: Pick<PullRequest, 'id' | 'number'>): string {
  return c.number !== null ? `PR #${c.number}` : `commit ${c.id}`;
}

/** The id of a commit used as a change. */
export function commitChangeId(sha: string): string {
  return sha.slice(0, 10);
}
