import { describe, expect, it } from 'vitest';
import { costUsd, sumAnswers, UsageTotals } from '../../judges/providers/usage.ts';

const prices = { 'judge-m': { prompt: 0.15, completion: 0.6 }, 'fair-a': { prompt: 1, completion: 2 } };
const u = (prompt_tokens: number, completion_tokens: number) => ({ prompt_tokens, completion_tokens });

describe('costUsd', () => {
  it('prices prompt and completion tokens per million', () => {
    expect(costUsd(u(1_000_000, 0), 'judge-m', prices)).toBeCloseTo(0.15);
    expect(costUsd(u(2_000, 500), 'judge-m', prices)).toBeCloseTo((2_000 * 0.15 + 500 * 0.6) / 1e6);
    expect(costUsd(u(0, 0), 'fair-a', prices)).toBe(0);
  });

  it('is null for a model without a price (unknown, not free)', () => {
    expect(costUsd(u(1000, 10), 'fair-b', prices)).toBeNull();
  });
});

describe('UsageTotals', () => {
  it('sums answers per chain and per model, cached answers at their original cost, and names unpriced models', () => {
    const t = new UsageTotals(prices);
    t.add('c1', { model: 'judge-m', usage: u(10_000, 1_000), calls: 2, cached: false });
    t.add('c1', { model: 'fair-b', usage: u(3_000, 100), calls: 1, cached: false });
    t.add('c2', { model: 'judge-m', usage: u(5_000, 500), calls: 0, cached: true });
    t.add('c2', { model: 'default', usage: u(0, 0), calls: 0, cached: false }); // a rules answer: free, no price needed

    const judgeUsd = (15_000 * 0.15 + 1_500 * 0.6) / 1e6;
    expect(t.total()).toEqual({ prompt_tokens: 18_000, completion_tokens: 1_600, calls: 3, cached: 1, usd: expect.closeTo(judgeUsd, 12) });
    expect(t.chain('c1')).toEqual({ prompt_tokens: 13_000, completion_tokens: 1_100, calls: 3, cached: 0, usd: expect.closeTo((10_000 * 0.15 + 1_000 * 0.6) / 1e6, 12) });
    expect(t.chain('c2')).toMatchObject({ calls: 0, cached: 1, prompt_tokens: 5_000 });
    expect(t.models()['fair-b']).toEqual({ prompt_tokens: 3_000, completion_tokens: 100, calls: 1, cached: 0, usd: null });
    expect(t.unpriced()).toEqual(['fair-b']);

    expect(t.summary()).toBe('3 calls, 1 cached answer, 18,000 prompt + 1,600 completion tokens, $0.00315 (no price for fair-b, not counted; set FORESIGHT_LLM_PRICES)');
    expect(t.stats()).toEqual({ llm_calls: 3, llm_cached_answers: 1, llm_prompt_tokens: 18_000, llm_completion_tokens: 1_600, llm_usd: Number(judgeUsd.toPrecision(4)) });
  });

  it('without any price the cost is unknown, and says how to set one', () => {
    const t = new UsageTotals({});
    t.addAnswers('c1', [{ model: 'm', usage: u(100, 10), calls: 1, cached: false }]);
    expect(t.total().usd).toBeNull();
    expect(t.summary()).toBe('1 call, 0 cached answers, 100 prompt + 10 completion tokens, cost unknown (no price for m; set FORESIGHT_LLM_PRICES)');
    expect(t.stats()).not.toHaveProperty('llm_usd');
  });

  it('rules only: no tokens, no cost clause', () => {
    const t = new UsageTotals(prices);
    t.addAnswers('c1', [{ model: 'default', usage: u(0, 0), calls: 0, cached: false }]);
    expect(t.summary()).toBe('0 calls, 0 cached answers, 0 prompt + 0 completion tokens');
  });

  it('adds chains summed elsewhere (read back from a checkpoint) to the totals', () => {
    const answers = [
      { model: 'judge-m', usage: u(1_000_000, 0), calls: 1, cached: false },
      { model: 'fair-a', usage: u(0, 1_000_000), calls: 1, cached: true },
    ];
    const chain = sumAnswers(answers, prices);
    expect(chain).toEqual({ prompt_tokens: 1_000_000, completion_tokens: 1_000_000, calls: 2, cached: 1, usd: expect.closeTo(2.15, 12) });
    const t = new UsageTotals(prices);
    t.addChain(chain, 'c1');
    t.addChain(sumAnswers([], prices));
    expect(t.total()).toEqual(chain);
    expect(t.chain('c1')).toEqual(chain);
    expect(t.summary()).toBe('2 calls, 1 cached answer, 1,000,000 prompt + 1,000,000 completion tokens, $2.15');
  });
});
