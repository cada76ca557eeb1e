import type { PullRequest } from '../../pipeline/chain.ts';
import type { StageDef } from '../../pipeline/stage.ts';
import { CandidateSchema, type Candidate } from '../discover/schema.ts';
import { commitToPr, gitSource } from '../discover/sources/git/index.ts';
import { blameFix, pickIntroducer } from './attribute.ts';
import { ChainSchema, type Chain } from './schema.ts';

/**
 * szz: for each fix candidate, blame the lines PR2 fixed at PR2's parent, map the blamed commits to
 * PRs, rank them, and pick PR1 (an explicit reference wins; blame confirms or supplies it).
 */
export const szzStage: StageDef<Candidate, Chain> = {
  name: 'szz',
  code: ['stages/szz', 'stages/discover/sources', 'pipeline/files.ts', 'pipeline/git.ts'],
  config: (cfg) => ({ szz: cfg.szz, branch: cfg.discover.branch }),
  input: CandidateSchema,
  output: ChainSchema,
  async run(candidates, ctx) {
    const { prs: list } = await gitSource.discover({ clone: ctx.repo.clone, branch: ctx.config.discover.branch, log: ctx.log });
    const prs = new Map<number, PullRequest>(list.map((p) => [p.number, p]));
    const prOfCommit = commitToPr(list);
    const results = await ctx.forEach(
      candidates,
      { id: (c) => `#${c.pr2.number}`, label: 'blaming fixes', concurrency: ctx.config.szz.concurrency },
      async (cand): Promise<Chain | { dropped: true; pr2: number }> => {
        if (cand.excluded) {
          // Reverts: PR1 is what was reverted; nothing to blame.
          const target = cand.references.find((r) => r.pr !== null && prs.has(r.pr));
          if (!target?.pr) return { dropped: true, pr2: cand.pr2.number };
          return {
            ...cand,
            pr1: prs.get(target.pr)!,
            mining_category: 'cross_reference',
            szz: { pickedBy: 'revert_target', candidates: [], unattributedScore: 0, blamedLines: 0, addOnly: false },
          };
        }
        const evidence = await blameFix(ctx.repo.clone, cand.pr2, prOfCommit);
        const picked = pickIntroducer(cand, evidence, prs);
        if (!picked) {
          ctx.log.debug(`#${cand.pr2.number}: no introducing PR found`, { blamedLines: evidence.blamedLines });
          return { dropped: true, pr2: cand.pr2.number };
        }
        return { ...cand, ...picked };
      },
    );
    const chains = results.filter((r): r is Chain => !('dropped' in r));
    return {
      items: chains,
      stats: {
        candidates: candidates.length,
        chains: chains.length,
        no_introducer: candidates.length - chains.length,
        by_szz: chains.filter((c) => c.mining_category === 'szz').length,
        by_reference: chains.filter((c) => c.mining_category === 'cross_reference').length,
      },
    };
  },
};
