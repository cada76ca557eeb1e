import type { StageDef } from '../../core/foundation/stage.ts';
import { ChainSchema, type Chain } from '../../core/foundation/model/chain.ts';
import { extractChain, repoShortName } from '../../core/extract/chain.ts';
import { ExtractedChainSchema, type ExtractedChain } from '../../core/foundation/model/extracted.ts';
import { sourceSettings } from '../../core/sources/registry.ts';
import { contextCollector } from '../../core/extract/context.ts';

/** A PR's diff split into source and tests (its test files as extract finds them: modules and collected data files). */
export { splitPatch, type SplitPatch } from '../../core/extract/split-patch.ts';

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
    const repoName = repoShortName(ctx.repo.name);
    const discussion = contextCollector({
      repo: ctx.repo.name, clone: ctx.repo.clone, repoDir: ctx.repoDir, tracker: chains[0]?.tracker ?? 'github',
      offline: ctx.config.discover.offline, log: ctx.log, settings: sourceSettings(ctx.config, ctx.secrets),
    });
    let complete = true;
    const items = await ctx.forEach(chains, { id: (c) => `${c.pr1.id}-${c.pr2.id}`, label: 'extracting' }, async (c) => {
      const out = await extractChain(c, { clone: ctx.repo.clone, repoName, discussion });
      complete &&= out.complete;
      return out.chain;
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
