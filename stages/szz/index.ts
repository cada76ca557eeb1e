import { z } from 'zod';
import type { PullRequest } from '../../core/foundation/model/change.ts';
import { git } from '../../core/foundation/git.ts';
import type { StageDef } from '../../core/foundation/stage.ts';
import { CandidateSchema, type Candidate } from '../../core/foundation/model/candidate.ts';
import { commitToChange, listChanges } from '../../core/history/changes.ts';
import { attributeFix } from './attribute.ts';
import { FixDiffs } from './diff-lines.ts';
import { MetaChanges } from './meta.ts';
import { ENOUGH, YEAR, type HorizonFit } from './fit.ts';
import { pickIntroducer, toEvidence } from './pick.ts';
import { fitRepository } from './repo-fit.ts';
import { ChainSchema, type Chain } from '../../core/foundation/model/chain.ts';

/** A candidate for which no introducing change was found: kept in the checkpoint so it is not redone. */
const ItemResultSchema = z.union([ChainSchema, z.object({ dropped: z.string() })]);

const NO_BLAME = { candidates: [], unattributedScore: 0, blamedLines: 0, addOnly: false, filteredByTime: 0, metaSkipped: [] };

/**
 * szz: for each fix candidate, blame the lines PR2 fixed at PR2's parent (stages/szz/attribute.ts),
 * fold the blamed commits into changes, rank them, and pick PR1 (an explicit reference wins; blame
 * confirms or supplies it).
 */
export const szzStage: StageDef<Candidate, Chain> = {
  name: 'szz',
  entry: import.meta.url,
  // How many blame jobs run at once changes no result: not in the key.
  config: (cfg) => ({ szz: { ...cfg.szz, concurrency: null }, discover: cfg.discover }),
  input: CandidateSchema,
  output: ChainSchema,
  async run(candidates, ctx) {
    const { changes: list } = await listChanges(ctx.repo.clone, ctx.config.discover);
    const changes = new Map<string, PullRequest>(list.map((p) => [p.id, p]));
    const changeOf = commitToChange(list);
    const meta = new MetaChanges(ctx.repo.clone);
    // Blame walks history commit by commit: a commit-graph with changed-path filters makes it several times faster.
    await git(ctx.repo.clone, ['commit-graph', 'write', '--reachable', '--changed-paths']).catch((err: unknown) =>
      ctx.log.warn(`could not write a commit-graph (blame will be slower): ${(err as Error).message}`),
    );
    // The history horizon comes from this repository's own "regression in <sha>" fixes, or there is none.
    const fit = await fitRepository(ctx.repo.clone, { meta, cacheDir: ctx.repoDir, concurrency: ctx.config.szz.concurrency, log: ctx.log });
    const horizon = fit.horizon.horizon;
    ctx.log.info(describeHorizon(fit.horizon));
    const diffs = new FixDiffs(ctx.repo.clone, candidates.filter((c) => !c.excluded).map((c) => c.pr2));
    const results = await ctx.forEach(
      candidates,
      { id: (c) => c.pr2.id, label: 'blaming fixes', concurrency: ctx.config.szz.concurrency, schema: ItemResultSchema },
      async (cand): Promise<Chain | { dropped: string }> => {
        if (cand.excluded) {
          // A revert stays a (excluded) chain with what it reverted as PR1; other exclusions end here.
          const target = cand.signals.includes('revert') ? cand.references.find((r) => r.target !== null && changes.has(r.target)) : undefined;
          if (!target?.target) return { dropped: cand.pr2.id };
          return { ...cand, pr1: changes.get(target.target)!, mining_category: 'cross_reference', szz: { ...NO_BLAME, pickedBy: 'revert_target' } };
        }
        const att = await attributeFix(ctx.repo.clone, cand.pr2, { variant: 'foresight', meta, reportedAt: cand.reportedAt, horizon, diffs });
        const picked = pickIntroducer(cand, toEvidence(att, changeOf, cand.pr2.id), changes);
        if (!picked) return { dropped: cand.pr2.id };
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
        by_advisory: chains.filter((c) => c.mining_category === 'advisory').length,
        // The horizon (absent: the whole history) and how many own fixes named their inducer.
        ...(horizon === null ? {} : { horizon_years: horizon / YEAR }),
        own_oracle_fixes: fit.horizon.fixes,
      },
    };
  },
};

/** One line saying which horizon blame uses and why. */
export function describeHorizon(h: HorizonFit): string {
  if (h.basis === 'too_few') return `szz: blaming the whole history: ${h.fixes} fixes name their inducing commit, a horizon needs ${ENOUGH}`;
  const what = h.horizon === null ? 'the whole history' : `a ${h.horizon / YEAR}-year horizon`;
  return `szz: blaming ${what}, chosen on ${h.fixes} of the repository's own fixes (blame-only F1 ${h.f1.toFixed(3)}, whole history ${h.f1Without.toFixed(3)})`;
}

export { evaluateSzz, formatScores, predictFix, readOracle, rowsByChange, scoreRows, type FixPrediction, type OracleEntry, type Scores } from './evaluate.ts';
export { MetaChanges } from './meta.ts';
export { pickIntroducer, toEvidence } from './pick.ts';
export { attributeFix, type SzzVariant } from './attribute.ts';
export { FixDiffs } from './diff-lines.ts';
export { crossPredict, crossValidate, ENOUGH, fit, fitHorizon, fitWithBias, HORIZONS, predictTop, scoreHorizon, scoreTop1, topWithin, YEAR, type HorizonCase, type HorizonFit, type RankCase } from './fit.ts';
export { namedInducers, ownOracle } from './own-oracle.ts';
export { fitRepository, horizonCases, OWN_FIXES, type RepositoryFit } from './repo-fit.ts';
export { CONFIDENT, FEATURES, FITTED, type CandidateFeatures, type RankerWeights } from './rank.ts';
