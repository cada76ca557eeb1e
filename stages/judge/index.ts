import { join } from 'node:path';
import type { StageDef } from '../../core/foundation/stage.ts';
import { ValidatedChainSchema, type ValidatedChain } from '../../core/foundation/model/validated.ts';
import { JudgedChainSchema, type JudgedChain, type Verdicts } from '../../core/foundation/model/judged.ts';
import { makeProviders } from '../../judges/providers/registry.ts';
import { sumAnswers, UsageTotals } from '../../judges/providers/usage.ts';
import { judgeChain } from './chain.ts';
import { deriveJudgement } from './derive.ts';

export { judgeInput } from './input.ts';

const UNJUDGED: Verdicts = {
  judged_by: 'rules', eligibility: null, attribution: null, fairness: [], solvability_original: null, solvability: null,
  pr2_solvability: null, labels: null, leaks: [], repairs: { pr1: [], pr2: [] }, failures: [],
};

/**
 * judge: the LLM judges (or the offline rules) on every chain still in the running: eligibility,
 * attribution, PR1's statement (solvability, spec-repair, two fairness judges, the leak detector), PR2's
 * statement and the labels. Chains already excluded are not sent to a judge, so a model is paid only for
 * chains that could enter the dataset; answers are cached on disk (data/<repo>/llm-cache), so a rerun
 * whose prompts are unchanged makes no call.
 */
export const judgeStage: StageDef<ValidatedChain, JudgedChain> = {
  name: 'judge',
  entry: import.meta.url,
  // How many requests are in flight changes no verdict: not in the key.
  config: (cfg) => ({ ...cfg.judge, concurrency: null }),
  input: ValidatedChainSchema,
  output: JudgedChainSchema,
  async run(chains, ctx) {
    const providers = makeProviders(ctx.config, ctx.secrets, { cacheDir: join(ctx.repoDir, 'llm-cache'), log: ctx.log });
    ctx.log.info(`judging with ${providers.main.name}/${providers.main.model}; fairness: ${providers.fairness.map((p) => `${p.name}/${p.model}`).join(' + ')}`);
    const { maxRepairs, prices } = ctx.config.judge;
    const items = await ctx.forEach(chains, { id: (c) => c.instance_id, label: 'judging chains', concurrency: 4 }, async (c): Promise<JudgedChain> => {
      if (c.excluded) {
        const none = { verdicts: UNJUDGED, problemStatement: c.problem_statement, pr1Repaired: false, pr2Statement: null, pr2Repaired: false, excluded: c.excluded, answers: [] };
        return { ...c, verdicts: UNJUDGED, judgement: deriveJudgement(none), usage: sumAnswers([], prices) };
      }
      const j = await judgeChain(c, providers, maxRepairs);
      return { ...c, problem_statement: j.problemStatement, excluded: j.excluded, verdicts: j.verdicts, judgement: deriveJudgement(j), usage: sumAnswers(j.answers, prices) };
    });

    const totals = new UsageTotals(prices);
    for (const i of items) totals.addChain(i.usage);
    const stats: Record<string, number> = {
      chains: items.length,
      passed: items.filter((i) => !i.excluded).length,
      eval_ready: items.filter((i) => !i.excluded && i.judgement.eval_ready).length,
      pr1_repaired: items.filter((i) => i.judgement.pr1_spec_repaired).length,
      ...totals.stats(),
    };
    for (const i of items) if (i.excluded?.stage === 'judge') stats[`excluded_${i.excluded.reason}`] = (stats[`excluded_${i.excluded.reason}`] ?? 0) + 1;
    ctx.log.info(`LLM usage: ${totals.summary()}`);
    return { items, stats };
  },
};
