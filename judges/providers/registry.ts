import PQueue from 'p-queue';
import type { Config, Secrets } from '../../core/foundation/config.ts';
import type { Logger } from '../../core/foundation/log.ts';
import { FAIRNESS_RULE_SETS } from '../fairness/index.ts';
import type { JudgeProvider } from '../types.ts';
import { cachedProvider } from './cache.ts';
import { llmSettings } from './config.ts';
import { openaiProvider } from './openai.ts';
import { rulesProvider } from './rules.ts';

export interface Providers {
  /** Every judge and writer but fairness. */
  main: JudgeProvider;
  /** Two independent fairness judges: both must pass. */
  fairness: [JudgeProvider, JudgeProvider];
}

export interface ProvidersOptions {
  /** Directory of the on-disk answer cache; `null`: no cache (every ask is sent). */
  cacheDir: string | null;
  /** Where the LLM providers say that they fell back to JSON mode. */
  log?: Logger;
}

/**
 * The rules provider offline; an OpenAI-compatible endpoint when FORESIGHT_LLM_BASE_URL is set. The
 * endpoint's providers share one queue, so at most config.judge.concurrency requests are in flight
 * across all models, and their answers are cached under `cacheDir` (rules answers are not: they are free).
 */
export function makeProviders(config: Config, secrets: Pick<Secrets, 'llmApiKey'>, opts: ProvidersOptions): Providers {
  if (config.judge.provider === 'openai') {
    const llm = llmSettings(config.judge, secrets.llmApiKey);
    if (llm) {
      const queue = new PQueue({ concurrency: config.judge.concurrency });
      const make = (model: string): JudgeProvider => {
        const provider = openaiProvider({ baseURL: llm.baseURL, apiKey: llm.apiKey, model, queue, ...(opts.log ? { log: opts.log } : {}) });
        return opts.cacheDir ? cachedProvider(provider, opts.cacheDir) : provider;
      };
      return { main: make(llm.judgeModel), fairness: [make(llm.fairnessModels[0]), make(llm.fairnessModels[1])] };
    }
  }
  const [a = 'identifiers', b = 'overlap'] = FAIRNESS_RULE_SETS;
  return { main: rulesProvider('default'), fairness: [rulesProvider(a), rulesProvider(b)] };
}
