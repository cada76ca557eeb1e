import { describe, expect, it } from 'vitest';
import { ForesightError } from '../../../core/foundation/errors.ts';
import { UnusableAnswerError } from '../../../judges/errors.ts';
import { makeProviders } from '../../../judges/providers/registry.ts';
import type { Providers } from '../../../judges/providers/registry.ts';
import type { Judge, JudgeInput, JudgeName, JudgeProvider } from '../../../judges/types.ts';
import { defaultConfig, NO_SECRETS } from '../../../core/foundation/config.ts';
import { judgeChain } from '../../../stages/judge/chain.ts';
import { deriveJudgement } from '../../../stages/judge/derive.ts';
import { sumAnswers } from '../../../judges/providers/usage.ts';
import { validatedChain } from '../../helpers/chain-fixture.ts';

type Script = Partial<Record<JudgeName, (input: JudgeInput, prompt: string) => unknown>>;

/** A provider answering from a script, recording every rendered prompt (as a model would receive it). */
function scripted(model: string, script: Script, seen: Array<{ judge: JudgeName; prompt: string }>): JudgeProvider {
  return {
    name: 'scripted',
    model,
    async ask<V>(judge: Judge<V>, input: JudgeInput) {
      const { system, user } = judge.prompt(input);
      seen.push({ judge: judge.name, prompt: `${system}\n${user}` });
      const answer = script[judge.name];
      if (!answer) throw new Error(`no scripted answer for ${judge.name}`);
      return { value: judge.schema.parse(answer(input, user)), usage: { prompt_tokens: 100, completion_tokens: 10 }, calls: 1, cached: false };
    },
  };
}

const ENRICHED = 'Add parse_duration(text) to minilib: it turns a duration such as "1h30m" or "45s" into a number of seconds and is exported from the package.';
const LABELS = {
  reason: 'uppercase units are plausible user input', impact: 'medium', reach: 'moderate', failure_mode: 'silent', trigger_path: 'default',
  mechanism: 'missed_edge_case', difficulty: 'easy', pr1_difficulty: 'easy', security: false,
};

function llm(over: Script = {}, seen: Array<{ judge: JudgeName; prompt: string }> = []): Providers {
  const script: Script = {
    eligibility: () => ({ reason: 'fixes wrong results for uppercase units', verdict: 'bug_fix' }),
    attribution: () => ({ reason: 'PR1 wrote the regex', code: 'A' }),
    solvability: (i) =>
      i.problemStatement.length < 60
        ? { reason: 'says nothing about the format or the export', code: 'B2', clarity_score: 2, task_type: 'feature' }
        : { reason: 'complete', code: 'A', clarity_score: 0, task_type: 'feature' },
    fairness: () => ({ reason: 'clean', leak: false, prescribes_mechanism: false }),
    // Round 1 plants a leak: PR2's helper and test name, which PR1's material never has.
    pr1_repair: (i) => ({
      reason: 'add the format',
      statement: i.feedback?.includes('Still') || i.feedback?.includes('remove') ? ENRICHED : `${ENRICHED} Use _normalise_unit so test_parse_uppercase_units passes.`,
    }),
    pr2_statement: (i) => ({ reason: 'r', statement: i.feedback ? 'parse_duration("2H") returns 0; unit letters must be accepted in either case ("2H" is 7200 seconds).' : 'Uppercase units are wrong.' }),
    pr2_solvability: (i) => (i.pr2Statement!.includes('7200') ? { reason: 'derivable', code: 'A' } : { reason: 'no expected value', code: 'B2' }),
    labels: () => LABELS,
    ...over,
  };
  return { main: scripted('judge-m', script, seen), fairness: [scripted('fair-a', script, seen), scripted('fair-b', script, seen)] };
}

describe('judgeChain', () => {
  it('repairs a B2 statement from PR1 alone: a round that leaks PR2 is caught and rejected, the next is accepted', async () => {
    const seen: Array<{ judge: JudgeName; prompt: string }> = [];
    const j = await judgeChain(validatedChain(), llm({}, seen), 3);
    expect(j.excluded).toBeNull();
    expect(j.problemStatement).toBe(ENRICHED);
    expect(j.pr1Repaired).toBe(true);
    expect(j.verdicts.repairs.pr1.map((r) => [r.round, r.accepted, r.leaks])).toEqual([
      [1, false, ['_normalise_unit', 'test_parse_uppercase_units']],
      [2, true, []],
    ]);
    // The writer of PR1's statement never sees PR2: not its diff, its tests, or its title.
    const repairPrompts = seen.filter((s) => s.judge === 'pr1_repair').map((s) => s.prompt);
    expect(repairPrompts).toHaveLength(2);
    for (const p of repairPrompts) {
      for (const pr2 of ['IGNORECASE', 'test_parse_uppercase_units()', 'ignoring uppercase units', '7200']) expect(p).not.toContain(pr2);
    }
    // The second round is told what was wrong, including the leaked names (they are PR2's, not shown to the agent).
    expect(repairPrompts[1]).toContain('_normalise_unit');

    const d = deriveJudgement(j);
    expect(d).toMatchObject({
      pr1_code: 'A', pr1_code_original: 'B2', pr1_spec_repaired: true, clarity_score: 0, pr1_task_type: 'feature',
      pr2_spec_code: 'A', pr2_spec_repaired: true, severity: 'major', failure_mode: 'silent', trigger_path: 'default',
      mechanism: 'missed_edge_case', difficulty: 'easy', pr1_difficulty: 'easy', security: false, eval_ready: true, quality_flags: [],
    });
    expect(d.pr2_problem_statement).toContain('7200');
    const usage = sumAnswers(j.answers, { 'judge-m': { prompt: 1, completion: 2 } });
    expect(usage.calls).toBe(j.answers.length);
    expect(usage.prompt_tokens).toBe(100 * j.answers.length);
    const priced = j.answers.filter((a) => a.model === 'judge-m').length;
    expect(usage.usd).toBeCloseTo(priced * (100 * 1 + 10 * 2) / 1e6, 12);
  });

  it('gives up after maxRepairs: the raw statement stays, coded B2, not eval_ready, never guessed', async () => {
    const j = await judgeChain(validatedChain(), llm({ pr1_repair: () => ({ reason: 'r', statement: 'Add parse_duration please.' }) }), 2);
    expect(j.verdicts.repairs.pr1.map((r) => r.accepted)).toEqual([false, false]);
    expect(j.problemStatement).toBe('Add parse_duration');
    expect(deriveJudgement(j)).toMatchObject({ pr1_code: 'B2', pr1_code_original: 'B2', pr1_spec_repaired: false, eval_ready: false, quality_flags: ['pr1_code_B2', 'clarity_2'] });
  });

  it("a statement naming what only PR2 has (a ticket edited after the fix) is excluded as unfair, the tokens named", async () => {
    const c = validatedChain({ problem_statement: 'Add parse_duration(text) for "1h30m" style durations; see _normalise_unit for the unit letters, in upper or lower case.' });
    const j = await judgeChain(c, llm(), 2);
    expect(j.excluded).toMatchObject({ reason: 'unfair_statement', stage: 'judge' });
    expect(j.excluded!.detail).toContain('_normalise_unit');
  });

  it('eligibility first: a feature costs no further question', async () => {
    const seen: Array<{ judge: JudgeName; prompt: string }> = [];
    const j = await judgeChain(validatedChain(), llm({ eligibility: () => ({ reason: 'adds an option', verdict: 'feature' }) }, seen), 2);
    expect(j.excluded).toMatchObject({ reason: 'ineligible' });
    expect(new Set(seen.map((s) => s.judge))).toEqual(new Set(['eligibility', 'attribution']));
  });

  it('attribution is asked whenever blame chose PR1 (advisory chains too), not when a human reference did', async () => {
    const asked = async (over: Parameters<typeof validatedChain>[0]) => {
      const seen: Array<{ judge: JudgeName; prompt: string }> = [];
      await judgeChain(validatedChain(over), llm({}, seen), 0);
      return seen.some((s) => s.judge === 'attribution');
    };
    const szz = validatedChain().szz;
    expect(await asked({ mining_category: 'advisory', szz: { ...szz, pickedBy: 'blame' } })).toBe(true);
    expect(await asked({ mining_category: 'cross_reference', szz: { ...szz, pickedBy: 'reference' } })).toBe(false);
  });

  it('a judge that gives no usable answer excludes the chain as judge_failed; an endpoint failure fails the run', async () => {
    const refused = llm({ fairness: () => { throw new UnusableAnswerError('the model refused: "no"', { remedy: 'r' }); } });
    const j = await judgeChain(validatedChain(), refused, 0);
    expect(j.excluded).toMatchObject({ reason: 'judge_failed' });
    expect(j.excluded!.detail).toContain('refused');
    const down = llm({ labels: () => { throw new ForesightError('the LLM endpoint failed (HTTP 500 after 4 attempts)', { remedy: 'r', external: true }); } });
    await expect(judgeChain(validatedChain(), down, 0)).rejects.toThrow(/HTTP 500/);
  });

  it('offline rules: a chain they cannot judge stays in, its eligibility null, not eval_ready; everything rules cannot judge stays null', async () => {
    const rules = makeProviders(defaultConfig(), NO_SECRETS, { cacheDir: null });
    // Django's own verb: nothing a rule can read says what the change is.
    const c = validatedChain();
    const j = await judgeChain({ ...c, pr2: { ...c.pr2, title: 'Refs #34925 -- Avoided altering passed by reference refresh_from_db(fields).', body: '' } }, rules, 2);
    expect(j.excluded).toBeNull();
    expect(j.verdicts.judged_by).toBe('rules');
    expect(j.verdicts.eligibility).toBeNull();
    expect(j.verdicts.fairness).toHaveLength(2);
    const d = deriveJudgement(j);
    expect(d).toMatchObject({ pr1_code: null, clarity_score: null, pr2_problem_statement: null, severity: null, security: null, eval_ready: false });
    expect(d.quality_flags).toEqual(expect.arrayContaining(['not_judged', 'target_unjudged', 'pr1_code_unjudged']));
    expect(j.problemStatement).toBe('Add parse_duration');
  });

  it('offline rules: a revert is still excluded ineligible, with the evidence', async () => {
    const c = validatedChain();
    const j = await judgeChain({ ...c, pr2: { ...c.pr2, title: 'Revert "Add parse_duration (#3)"' } }, makeProviders(defaultConfig(), NO_SECRETS, { cacheDir: null }), 2);
    expect(j.excluded).toMatchObject({ reason: 'ineligible', stage: 'judge' });
    expect(j.excluded!.detail).toMatch(/^revert: the title says it reverts: .*\(rule revert\)$/);
  });
});
