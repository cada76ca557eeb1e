import { changeLabel } from '../../core/model/change.ts';
import type { StageDef } from '../../core/stage.ts';
import { ChainSchema, type Chain } from '../../core/model/chain.ts';
import { pr1OwnMaterial, rawStatement } from '../../core/model/discussion.ts';
import { ExtractedChainSchema, type ExtractedChain } from '../../core/model/extracted.ts';
import { sourceSettings } from '../../core/sources/registry.ts';
import { contextCollector } from './context.ts';
import { splitPatch } from './split-patch.ts';

/** A PR's diff split into source and tests (its test files as extract finds them: modules and collected data files). */
export { splitPatch, type SplitPatch } from './split-patch.ts';

const DAY_MS = 86_400_000;

/**
 * extract: the four commits of each chain (mainline view: base = first parent of the merged commit),
 * each PR's diff split into source and tests, the test files to run, and PR1's statement — built
 * from PR1 alone (its title, body and the issue or ticket it closes, from before it merged), so
 * nothing of PR2 can reach it.
 */
export const extractStage: StageDef<Chain, ExtractedChain> = {
  name: 'extract',
  entry: import.meta.url,
  config: (cfg) => ({ offline: cfg.discover.offline, sources: cfg.sources }),
  input: ChainSchema,
  output: ExtractedChainSchema,
  async run(chains, ctx) {
    const repoName = ctx.repo.name.split('/').pop()!;
    const discussion = contextCollector({
      repo: ctx.repo.name, clone: ctx.repo.clone, repoDir: ctx.repoDir, tracker: chains[0]?.tracker ?? 'github',
      offline: ctx.config.discover.offline, log: ctx.log, settings: sourceSettings(ctx.config, ctx.secrets),
    });
    let complete = true;
    const items = await ctx.forEach(chains, { id: (c) => `${c.pr1.id}-${c.pr2.id}`, label: 'extracting' }, async (c) => {
      const [p1, p2] = await Promise.all([
        splitPatch(ctx.repo.clone, c.pr1.baseSha, c.pr1.mergeSha),
        splitPatch(ctx.repo.clone, c.pr2.baseSha, c.pr2.mergeSha),
      ]);
      let excluded = c.excluded;
      if (!excluded && !p1.testFiles.length) excluded = { reason: 'pr1_no_tests', detail: `${changeLabel(c.pr1)} touched no test file`, stage: 'extract' };
      if (!excluded && !p2.testFiles.length) excluded = { reason: 'pr2_no_tests', detail: `${changeLabel(c.pr2)} touched no test file`, stage: 'extract' };
      // Discussion costs requests: only for chains that can still enter the dataset.
      const talk = excluded ? { pr_comments: null, linked_issues: null, complete: true } : await discussion.collect(c.pr1, c.pr2);
      complete &&= talk.complete;
      const statement = rawStatement(c.pr1, pr1OwnMaterial({ pr1: c.pr1, ...talk }));
      const out: ExtractedChain = {
        ...c,
        excluded,
        instance_id: `${repoName}__${c.pr1.number ?? c.pr1.id}-${c.pr2.number ?? c.pr2.id}`,
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
      return out;
    });
    return {
      items,
      complete,
      stats: {
        chains: items.length,
        excluded: items.filter((i) => i.excluded).length,
        with_discussion: items.filter((i) => i.pr_comments?.length).length,
      },
    };
  },
};
