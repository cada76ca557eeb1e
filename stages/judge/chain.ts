import { errorMessage } from '../../core/foundation/errors.ts';
import type { Exclusion } from '../../core/foundation/model/change.ts';
import type { JudgeFailureSchema, RepairRound, Verdicts } from '../../core/foundation/model/judged.ts';
import type { ValidatedChain } from '../../core/foundation/model/validated.ts';
import type { Fairness, Statement } from '../../core/foundation/model/verdicts.ts';
import { UnusableAnswerError } from '../../judges/errors.ts';
import { leakedTokens } from '../../judges/leak.ts';
import type { Providers } from '../../judges/providers/registry.ts';
import type { AnswerCost } from '../../judges/providers/usage.ts';
import { JUDGES } from '../../judges/registry.ts';
import type { Judge, JudgeInput, JudgeProvider, Usage } from '../../judges/types.ts';
import type { z } from 'zod';
import { judgeInput } from './input.ts';

/** A verdict as recorded: the answer plus who gave it, its prompt version, its gate and its cost. */
export type Asked<V> = V & {
  provider: string;
  model: string;
  version: string;
  pass: boolean;
  usage: Usage;
  calls: number;
  cached: boolean;
};

export interface ChainJudgement {
  verdicts: Verdicts;
  /** The final PR1 statement (the raw one unless a repair was accepted). */
  problemStatement: string;
  pr1Repaired: boolean;
  pr2Statement: string | null;
  pr2Repaired: boolean;
  excluded: Exclusion | null;
  /** Every answer's model and usage (cost accounting). */
  answers: AnswerCost[];
}

/** Asks judges for one chain, keeping unusable answers as failures instead of failing the run. */
class Session {
  readonly failures: Array<z.infer<typeof JudgeFailureSchema>> = [];
  readonly answers: ChainJudgement['answers'] = [];

  async ask<V>(judge: Judge<V>, provider: JudgeProvider, input: JudgeInput): Promise<Asked<V> | null> {
    try {
      const a = await provider.ask(judge, input);
      if (!a) return null;
      this.answers.push({ model: provider.model, usage: a.usage, calls: a.calls, cached: a.cached });
      return { ...a.value, provider: provider.name, model: provider.model, version: judge.version, pass: judge.passes(a.value), usage: a.usage, calls: a.calls, cached: a.cached };
    } catch (err) {
      if (!(err instanceof UnusableAnswerError)) throw err;
      this.failures.push({ judge: judge.name, model: provider.model, message: errorMessage(err) });
      return null;
    }
  }
}

const fairnessFeedback = (f: ReadonlyArray<Asked<Fairness> | null>): string[] =>
  f.filter((v): v is Asked<Fairness> => v !== null && !v.pass).map((v) => `A fairness reviewer objected: ${v.reason}`);

/**
 * Judge one chain: eligibility and (for PR1s chosen by blame) attribution first; a chain that fails them
 * costs nothing more. Then, at once: PR1's statement (solvability; a B2 statement is repaired from PR1's own
 * material and re-judged by solvability, both fairness judges and the leak detector, up to `maxRepairs`
 * rounds), PR2's statement (synthesised, judged, repaired until its tests are derivable), and the labels.
 */
export async function judgeChain(c: ValidatedChain, providers: Providers, maxRepairs: number): Promise<ChainJudgement> {
  const s = new Session();
  const input = judgeInput(c);
  const [eligibility, attribution] = await Promise.all([
    s.ask(JUDGES.eligibility, providers.main, input),
    c.szz.pickedBy === 'blame' ? s.ask(JUDGES.attribution, providers.main, input) : Promise.resolve(null),
  ]);
  const verdicts: Verdicts = {
    judged_by: providers.main.name === 'rules' ? 'rules' : 'llm',
    eligibility,
    attribution,
    fairness: [],
    solvability_original: null,
    solvability: null,
    pr2_solvability: null,
    labels: null,
    leaks: [],
    repairs: { pr1: [], pr2: [] },
    failures: s.failures,
  };
  const base = { verdicts, problemStatement: c.problem_statement, pr1Repaired: false, pr2Statement: null, pr2Repaired: false, answers: s.answers };
  const early = gateExclusion(verdicts, c.szz.pickedBy === 'blame');
  if (early) return { ...base, excluded: early };

  const [pr1, pr2, labels] = await Promise.all([
    pr1Statement(s, providers, input, maxRepairs),
    pr2Statement(s, providers, input, maxRepairs),
    s.ask(JUDGES.labels, providers.main, input),
  ]);
  Object.assign(verdicts, {
    fairness: pr1.fairness.filter((f) => f !== null),
    solvability_original: pr1.original,
    solvability: pr1.final,
    pr2_solvability: pr2.verdict,
    labels,
    leaks: pr1.leaks,
    repairs: { pr1: pr1.rounds, pr2: pr2.rounds },
  } satisfies Partial<Verdicts>);
  const excluded =
    gateExclusion(verdicts, c.szz.pickedBy === 'blame') ??
    (pr1.leaks.length
      ? { reason: 'unfair_statement', detail: `the statement names what only PR2 has: ${pr1.leaks.join(', ')}`, stage: 'judge' }
      : null) ??
    (pr2.verdict && !pr2.verdict.pass ? { reason: 'pr2_spec_unsolvable', detail: `${pr2.verdict.code}: ${pr2.verdict.reason}`, stage: 'judge' } : null);
  return {
    ...base,
    problemStatement: pr1.statement,
    pr1Repaired: pr1.repaired,
    pr2Statement: pr2.statement,
    pr2Repaired: pr2.repaired,
    excluded,
  };
}

/** The first failed gate: eligibility, attribution, fairness; a gate an LLM could not answer excludes too (judge_failed). */
function gateExclusion(v: Verdicts, attributionAsked: boolean): Exclusion | null {
  if (v.eligibility && !v.eligibility.pass) return { reason: 'ineligible', detail: `${v.eligibility.verdict}: ${v.eligibility.reason}`, stage: 'judge' };
  if (v.attribution && !v.attribution.pass) return { reason: 'unattributed', detail: `${v.attribution.code}: ${v.attribution.reason}`, stage: 'judge' };
  const unfair = v.fairness.find((f) => !f.pass);
  if (unfair) return { reason: 'unfair_statement', detail: `${unfair.provider}/${unfair.model}: ${unfair.reason}`, stage: 'judge' };
  const missing = (!v.eligibility ? ['eligibility'] : []).concat(attributionAsked && !v.attribution ? ['attribution'] : []);
  if (v.failures.length && (missing.length || v.failures.some((f) => f.judge === 'fairness'))) {
    return { reason: 'judge_failed', detail: v.failures.map((f) => `${f.judge} (${f.model}): ${f.message}`).join('; '), stage: 'judge' };
  }
  return null;
}

async function pr1Statement(s: Session, providers: Providers, input: JudgeInput, maxRepairs: number) {
  const [fa, fb] = providers.fairness;
  const judgeStatement = (statement: string, statementOrigin: JudgeInput['statementOrigin']) => {
    const at = { ...input, problemStatement: statement, statementOrigin };
    return Promise.all([
      s.ask(JUDGES.solvability, providers.main, at),
      s.ask(JUDGES.fairness, fa, at),
      s.ask(JUDGES.fairness, fb, at),
    ]);
  };
  const raw = input.problemStatement;
  const [original, ...rawFairness] = await judgeStatement(raw, 'raw');
  const out = { statement: raw, original, final: original, fairness: rawFairness, repaired: false, rounds: [] as RepairRound[], leaks: leakedTokens(raw, input) };
  if (original?.code !== 'B2') return out;

  let current = raw;
  let feedback = [`The statement was rated B2 (under-specified): ${original.reason}`, ...fairnessFeedback(rawFairness)].join('\n');
  for (let round = 1; round <= maxRepairs; round++) {
    const writer = await s.ask(JUDGES.pr1_repair, providers.main, { ...input, problemStatement: current, feedback });
    if (!writer || !writer.pass) break;
    const candidate = writer.statement.trim();
    const leaks = leakedTokens(candidate, input);
    const [solv, ...fair] = await judgeStatement(candidate, 'written');
    const fairOk = fair.every((f) => f?.pass === true);
    const accepted = solv?.code === 'A' && solv.clarity_score <= 1 && fairOk && leaks.length === 0;
    out.rounds.push({
      round, statement: candidate, writer: writer as Asked<Statement>, code: solv?.code ?? null, clarity_score: solv?.clarity_score ?? null,
      fair: fairOk, leaks, accepted,
    });
    if (accepted) return { ...out, statement: candidate, final: solv, fairness: fair, repaired: true, leaks };
    feedback = [
      solv && solv.code !== 'A' ? `Still rated ${solv.code}: ${solv.reason}` : null,
      solv && solv.clarity_score > 1 ? `Clarity ${solv.clarity_score} of 3 (0 is best): ${solv.reason}` : null,
      ...fairnessFeedback(fair),
      leaks.length ? `It names things the change's own material never mentions; remove them: ${leaks.join(', ')}` : null,
    ].filter(Boolean).join('\n');
    current = candidate;
  }
  return out;
}

async function pr2Statement(s: Session, providers: Providers, input: JudgeInput, maxRepairs: number) {
  const rounds: RepairRound[] = [];
  const first = await s.ask(JUDGES.pr2_statement, providers.main, input);
  if (!first || !first.pass) return { statement: null, verdict: null, repaired: false, rounds };
  const statement = first.statement.trim();
  const verdict = await s.ask(JUDGES.pr2_solvability, providers.main, { ...input, pr2Statement: statement });
  const out = { statement, verdict, repaired: false, rounds };
  // B5 (the fix bundles unrelated changes the tests need) is not a statement problem: no rewrite can help.
  if (!verdict || verdict.code === 'A' || verdict.code === 'B5') return out;

  let current = statement;
  let feedback = `Rated ${verdict.code}: ${verdict.reason}`;
  for (let round = 1; round <= maxRepairs; round++) {
    const writer = await s.ask(JUDGES.pr2_statement, providers.main, { ...input, pr2Statement: current, feedback });
    if (!writer || !writer.pass) break;
    const candidate = writer.statement.trim();
    const judged = await s.ask(JUDGES.pr2_solvability, providers.main, { ...input, pr2Statement: candidate });
    const accepted = judged?.code === 'A';
    rounds.push({ round, statement: candidate, writer: writer as Asked<Statement>, code: judged?.code ?? null, clarity_score: null, fair: null, leaks: [], accepted });
    if (accepted) return { statement: candidate, verdict: judged, repaired: true, rounds };
    if (judged) feedback = `Rated ${judged.code}: ${judged.reason}`;
    current = candidate;
  }
  return out;
}
