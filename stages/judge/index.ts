import { makeProviders } from '../../judges/providers/registry.ts';
import { JUDGES } from '../../judges/registry.ts';
import type { Judge, JudgeInput, JudgeProvider } from '../../judges/types.ts';
import { changeLabel, type Exclusion } from '../../core/model/change.ts';
import type { StageDef } from '../../core/stage.ts';
import { ValidatedChainSchema, type ValidatedChain } from '../../core/model/validated.ts';
import { JudgedChainSchema, type JudgedChain, type Verdicts } from '../../core/model/judged.ts';

export function judgeInput(c: ValidatedChain): JudgeInput {
  const fromPr1 = c.szz.candidates.find((k) => k.change === c.pr1.id)?.score ?? 0;
  const fromOthers = c.szz.candidates.filter((k) => k.change !== c.pr1.id).reduce((a, k) => a + k.score, 0) + c.szz.unattributedScore;
  return {
    instanceId: c.instance_id,
    miningCategory: c.mining_category,
    problemStatement: c.problem_statement,
    pr1: { label: changeLabel(c.pr1), title: c.pr1.title, body: c.pr1.body, patch: c.patch, testPatch: c.test_patch },
    pr2: { label: changeLabel(c.pr2), title: c.pr2.title, body: c.pr2.body, patch: c.anticipation_patch, testPatch: c.anticipation_test_patch },
    blame: { linesFromPr1: fromPr1, linesFromOthers: fromOthers, explicitReference: c.mining_category === 'cross_reference' },
  };
}

async function ask<V>(judge: Judge<V>, provider: JudgeProvider, input: JudgeInput): Promise<V & { provider: string; model: string; pass: boolean }> {
  const v = await provider.ask(judge, input);
  return { ...v, provider: provider.name, model: provider.model, pass: judge.passes(v) };
}

/** The first failed gate, in order: eligibility, attribution, fairness. */
function exclusionOf(v: Verdicts): Exclusion | null {
  if (v.eligibility && !v.eligibility.pass) return { reason: 'ineligible', detail: `${v.eligibility.verdict}: ${v.eligibility.reason}`, stage: 'judge' };
  if (v.attribution && !v.attribution.pass) return { reason: 'unattributed', detail: `${v.attribution.code}: ${v.attribution.reason}`, stage: 'judge' };
  const unfair = v.fairness.find((f) => !f.pass);
  if (unfair) return { reason: 'unfair_statement', detail: `${unfair.provider}/${unfair.model}: ${unfair.reason}`, stage: 'judge' };
  return null;
}

/**
 * judge: eligibility (is PR2 an edge-case fix?), attribution (for blame-found chains: did PR1 introduce
 * it?) and two independent fairness judges on PR1's statement. Chains already excluded are not sent
 * to a judge, so an LLM is paid only for chains that could enter the dataset.
 */
export const judgeStage: StageDef<ValidatedChain, JudgedChain> = {
  name: 'judge',
  entry: import.meta.url,
  config: (cfg) => cfg.judge,
  input: ValidatedChainSchema,
  output: JudgedChainSchema,
  async run(chains, ctx) {
    const providers = makeProviders(ctx.config, ctx.secrets);
    ctx.log.info(`judging with ${providers.main.name}/${providers.main.model}; fairness: ${providers.fairness.map((p) => `${p.name}/${p.model}`).join(' + ')}`);
    const items = await ctx.forEach(chains, { id: (c) => c.instance_id, label: 'judging chains', concurrency: 4 }, async (c): Promise<JudgedChain> => {
      if (c.excluded) return { ...c, verdicts: { eligibility: null, attribution: null, fairness: [] } };
      const input = judgeInput(c);
      const [eligibility, attribution, ...fairness] = await Promise.all([
        ask(JUDGES.eligibility, providers.main, input),
        c.mining_category === 'szz' ? ask(JUDGES.attribution, providers.main, input) : Promise.resolve(null),
        ...providers.fairness.map((p) => ask(JUDGES.fairness, p, input)),
      ]);
      const verdicts: Verdicts = { eligibility, attribution, fairness: fairness.filter((f) => f !== null) };
      const excluded = exclusionOf(verdicts);
      return { ...c, verdicts, excluded, gradeable: c.gradeable };
    });
    const stats: Record<string, number> = { chains: items.length, passed: items.filter((i) => !i.excluded).length };
    for (const i of items) if (i.excluded?.stage === 'judge') stats[`excluded_${i.excluded.reason}`] = (stats[`excluded_${i.excluded.reason}`] ?? 0) + 1;
    return { items, stats };
  },
};
