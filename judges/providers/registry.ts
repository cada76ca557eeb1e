import type { Config, Secrets } from '../../core/config.ts';
import { FAIRNESS_RULE_SETS } from '../fairness/index.ts';
import type { JudgeProvider } from '../types.ts';
import { llmSettings } from './config.ts';
import { openaiProvider } from './openai.ts';
import { rulesProvider } from './rules.ts';

export interface Providers {
  /** Eligibility and attribution. */
  main: JudgeProvider;
  /** Two independent fairness judges: both must pass. */
  fairness: [JudgeProvider, JudgeProvider];
}

/** The rules provider offline; an OpenAI-compatible endpoint when FORESIGHT_LLM_BASE_URL is set. */
export function makeProviders(config: Config, secrets: Pick<Secrets, 'llmApiKey'>): Providers {
  if (config.judge.provider === 'openai') {
    const llm = llmSettings(config.judge, secrets.llmApiKey);
    if (llm) {
      const make = (model: string): JudgeProvider => openaiProvider({ baseURL: llm.baseURL, apiKey: llm.apiKey, model });
      return { main: make(llm.judgeModel), fairness: [make(llm.fairnessModels[0]), make(llm.fairnessModels[1])] };
    }
  }
  const [a = 'identifiers', b = 'overlap'] = FAIRNESS_RULE_SETS;
  return { main: rulesProvider('default'), fairness: [rulesProvider(a), rulesProvider(b)] };
}
