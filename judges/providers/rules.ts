import type { JudgeProvider } from '../types.ts';

/**
 * Offline, deterministic provider: each judge's own rules; `ruleSet` picks one of its independent rule sets.
 * Costs nothing, so its answers are never cached; `null` when the judge's rules cannot decide.
 */
export function rulesProvider(ruleSet = 'default'): JudgeProvider {
  return {
    name: 'rules',
    model: ruleSet,
    async ask(judge, input) {
      const value = judge.rules(input, ruleSet);
      if (value === null) return null;
      return { value: judge.schema.parse(value), usage: { prompt_tokens: 0, completion_tokens: 0 }, calls: 0, cached: false };
    },
  };
}
