/**
 * One chain's extraction (stages/extract's per-chain step): the four commits, each PR's diff split into
 * source and tests, the test files to run, and PR1's statement from PR1 alone. Shared by extract and by
 * validate's attribution, which re-extracts a chain when the bisection moves it to another PR1.
 */
import { changeLabel } from '../foundation/model/change.ts';
import type { Chain } from '../foundation/model/chain.ts';
import { pr1OwnMaterial, rawStatement } from '../foundation/model/discussion.ts';
import type { ExtractedChain } from '../foundation/model/extracted.ts';
import type { ContextCollector } from './context.ts';
import { isQuotedPath } from '../foundation/git.ts';
import { splitPatch } from './split-patch.ts';

const DAY_MS = 86_400_000;

/** `instance_id`'s prefix: the repository's name without its owner. */
export function repoShortName(repo: string): string {
  return repo.split('/').pop()!;
}

function noTests(label: string, unreferenced: readonly string[]): string {
  const shown = unreferenced.slice(0, 3).join(', ') + (unreferenced.length > 3 ? ` and ${unreferenced.length - 3} more` : '');
  return unreferenced.length ? `${label} touched no test file (no test module reads its data files ${shown})` : `${label} touched no test file`;
}

/** Extract one chain; `complete` is false when a discussion source failed. */
export async function extractChain(c: Chain, opts: { clone: string; repoName: string; discussion: ContextCollector }): Promise<{ chain: ExtractedChain; complete: boolean }> {
  const [p1, p2] = await Promise.all([splitPatch(opts.clone, c.pr1.baseSha, c.pr1.mergeSha), splitPatch(opts.clone, c.pr2.baseSha, c.pr2.mergeSha)]);
  let excluded = c.excluded;
  if (!excluded && !p1.testFiles.length) excluded = { reason: 'pr1_no_tests', detail: noTests(changeLabel(c.pr1), p1.dataConsumers.unreferenced), stage: 'extract' };
  if (!excluded && !p2.testFiles.length) excluded = { reason: 'pr2_no_tests', detail: noTests(changeLabel(c.pr2), p2.dataConsumers.unreferenced), stage: 'extract' };
  // A test id names its file: one whose name is not UTF-8 has no id a dataset row can hold.
  for (const [pr, files] of [[c.pr1, p1.testFiles], [c.pr2, p2.testFiles]] as const) {
    const odd = files.find(isQuotedPath);
    if (!excluded && odd !== undefined) excluded = { reason: 'test_path_not_utf8', detail: `${changeLabel(pr)}'s test file ${odd} has a name that is not UTF-8`, stage: 'extract' };
  }
  // Discussion costs requests: only for chains that can still enter the dataset.
  const talk = excluded ? { pr_comments: null, linked_issues: null, complete: true } : await opts.discussion.collect(c.pr1, c.pr2);
  const statement = rawStatement(c.pr1, pr1OwnMaterial({ pr1: c.pr1, ...talk }));
  const chain: ExtractedChain = {
    ...c,
    excluded,
    instance_id: `${opts.repoName}__${c.pr1.number ?? c.pr1.id}-${c.pr2.number ?? c.pr2.id}`,
    pr1_base: c.pr1.baseSha,
    pr1_head: c.pr1.mergeSha,
    pr2_base: c.pr2.baseSha,
    pr2_head: c.pr2.mergeSha,
    patch: p1.source,
    test_patch: p1.tests,
    anticipation_patch: p2.source,
    anticipation_test_patch: p2.tests,
    pr1_test_files: p1.testFiles,
    anticipation_test_files: p2.testFiles,
    data_consumers: { pr1: p1.dataConsumers, pr2: p2.dataConsumers },
    pr1_overlay_files: p1.overlayFiles,
    anticipation_overlay_files: p2.overlayFiles,
    problem_statement: statement,
    problem_statement_raw: statement,
    pr2_problem_statement_raw: rawStatement(c.pr2),
    created_at: c.pr1.mergedAt,
    pr2_created_at: c.pr2.mergedAt,
    gap_days: Math.round((Date.parse(c.pr2.mergedAt) - Date.parse(c.pr1.mergedAt)) / DAY_MS),
    pr_comments: talk.pr_comments,
    linked_issues: talk.linked_issues,
  };
  return { chain, complete: talk.complete };
}
