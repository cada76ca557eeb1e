import type { JudgeProvider } from '../types.ts';

/** Offline, deterministic provider: each judge's own rules; `ruleSet` picks one of its independent rule sets. */
export function rulesProvider(ruleSet = 'default'): JudgeProvider {
  return {
    name: 'rules',
    model: ruleSet,
    async ask(judge, input) {
      return judge.schema.parse(judge.rules(input, ruleSet));
    },
  };
}
