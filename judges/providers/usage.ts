import type { Config } from '../../core/foundation/config.ts';
import type { Usage } from '../types.ts';

/** USD per million tokens, per model (config.judge.prices, env FORESIGHT_LLM_PRICES). */
export type Prices = Config['judge']['prices'];

/** One answer's cost as a chain records it. */
export interface AnswerCost {
  model: string;
  usage: Usage;
  /** Requests sent for it (0 when cached or rules). */
  calls: number;
  cached: boolean;
}

/** Answers summed: the shape of a judged chain's `usage` (core/foundation/model/judged.ts ChainUsage). */
export interface UsageSummary extends Usage {
  calls: number;
  /** Answers served from the answer cache (their tokens are what they cost when bought). */
  cached: number;
  /** `null` when no answer in the sum has a price. */
  usd: number | null;
}

/** What `usage` cost on `model`; `null` when the table has no price for it. */
export function costUsd(usage: Usage, model: string, prices: Prices): number | null {
  const price = prices[model];
  if (!price) return null;
  return (usage.prompt_tokens * price.prompt + usage.completion_tokens * price.completion) / 1_000_000;
}

export function emptySummary(): UsageSummary {
  return { prompt_tokens: 0, completion_tokens: 0, calls: 0, cached: 0, usd: null };
}

function addTo(sum: UsageSummary, part: UsageSummary): void {
  sum.prompt_tokens += part.prompt_tokens;
  sum.completion_tokens += part.completion_tokens;
  sum.calls += part.calls;
  sum.cached += part.cached;
  if (part.usd !== null) sum.usd = (sum.usd ?? 0) + part.usd;
}

function summaryOf(answer: AnswerCost, prices: Prices): UsageSummary {
  return { ...answer.usage, calls: answer.calls, cached: answer.cached ? 1 : 0, usd: costUsd(answer.usage, answer.model, prices) };
}

/** A chain's answers summed and priced. */
export function sumAnswers(answers: readonly AnswerCost[], prices: Prices): UsageSummary {
  const sum = emptySummary();
  for (const a of answers) addTo(sum, summaryOf(a, prices));
  return sum;
}

/**
 * Usage over a run: per chain, per model and in total, for the stage's stats and its closing log line.
 * Cached answers count the tokens they cost when they were bought (so a rerun reports the same cost),
 * and are counted apart so the line also says what this run actually sent.
 */
export class UsageTotals {
  private readonly all = emptySummary();
  private readonly byChain = new Map<string, UsageSummary>();
  private readonly byModel = new Map<string, UsageSummary>();
  /** Models that used tokens but have no price. */
  private readonly noPrice = new Set<string>();

  constructor(private readonly prices: Prices) {}

  /** One answer of one chain. */
  add(chain: string, answer: AnswerCost): void {
    const part = summaryOf(answer, this.prices);
    if (part.usd === null && part.prompt_tokens + part.completion_tokens > 0) this.noPrice.add(answer.model);
    addTo(this.all, part);
    addTo(this.entry(this.byChain, chain), part);
    addTo(this.entry(this.byModel, answer.model), part);
  }

  addAnswers(chain: string, answers: readonly AnswerCost[]): void {
    this.entry(this.byChain, chain);
    for (const a of answers) this.add(chain, a);
  }

  /** A chain already summed (e.g. read back from a checkpoint): it counts in the totals, not per model. */
  addChain(usage: UsageSummary, chain?: string): void {
    addTo(this.all, usage);
    if (chain !== undefined) addTo(this.entry(this.byChain, chain), usage);
  }

  total(): UsageSummary {
    return { ...this.all };
  }

  chain(id: string): UsageSummary | undefined {
    const s = this.byChain.get(id);
    return s && { ...s };
  }

  models(): Record<string, UsageSummary> {
    return Object.fromEntries([...this.byModel].map(([m, s]) => [m, { ...s }]));
  }

  /** Models that used tokens and have no price in the table. */
  unpriced(): string[] {
    return [...this.noPrice].sort();
  }

  /** Numbers for the stage's stats. */
  stats(): Record<string, number> {
    const { calls, cached, prompt_tokens, completion_tokens, usd } = this.all;
    return {
      llm_calls: calls,
      llm_cached_answers: cached,
      llm_prompt_tokens: prompt_tokens,
      llm_completion_tokens: completion_tokens,
      ...(usd === null ? {} : { llm_usd: round(usd) }),
    };
  }

  /** One line, e.g. `12 calls, 3 cached answers, 10,234 prompt + 1,200 completion tokens, $0.0123 (no price for fair-b)`. */
  summary(): string {
    const { calls, cached, prompt_tokens, completion_tokens, usd } = this.all;
    const n = (x: number) => x.toLocaleString('en-US');
    const parts = [
      `${n(calls)} call${calls === 1 ? '' : 's'}`,
      `${n(cached)} cached answer${cached === 1 ? '' : 's'}`,
      `${n(prompt_tokens)} prompt + ${n(completion_tokens)} completion tokens`,
    ];
    const noPrice = this.unpriced();
    const hint = 'set FORESIGHT_LLM_PRICES';
    if (prompt_tokens + completion_tokens > 0) {
      if (usd === null) parts.push(`cost unknown (${noPrice.length ? `no price for ${noPrice.join(', ')}` : 'no price'}; ${hint})`);
      else parts.push(`$${round(usd)}${noPrice.length ? ` (no price for ${noPrice.join(', ')}, not counted; ${hint})` : ''}`);
    }
    return parts.join(', ');
  }

  private entry(map: Map<string, UsageSummary>, key: string): UsageSummary {
    let s = map.get(key);
    if (!s) map.set(key, (s = emptySummary()));
    return s;
  }
}

/** Four significant digits: enough for a cost line, no float noise. */
function round(usd: number): number {
  return usd === 0 ? 0 : Number(usd.toPrecision(4));
}
