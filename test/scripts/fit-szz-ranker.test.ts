/** The ranker fit (scripts/fit-szz-ranker.ts) on candidate lists whose inducer only one feature tells apart. */
import { describe, expect, it } from 'vitest';
import { crossValidate, fit, scoreTop1 } from '../../scripts/fit-szz-ranker.ts';
import { FEATURES, type CandidateFeatures } from '../../stages/szz/rank.ts';

const zero = Object.fromEntries(FEATURES.map((k) => [k, 0])) as unknown as CandidateFeatures;

/** Fix i: three candidates with equal blame; the inducer alone shares the fix's names, a decoy is newer. */
function fixes(n: number) {
  return Array.from({ length: n }, (_, i) => ({
    fix: `f${i}`,
    inducing: [`i${i}`],
    candidates: [
      { sha: `d${i}`, features: { ...zero, blame: 0.5, age: 1, tokens: 0.1 } },
      { sha: `i${i}`, features: { ...zero, blame: 0.5, age: 3, tokens: 0.9 } },
      { sha: `e${i}`, features: { ...zero, blame: 0.5, age: 2, tokens: 0.2 } },
    ],
  }));
}

describe('fit-szz-ranker', () => {
  it('learns_the_feature_that_names_the_inducer_and_ranks_it_first', () => {
    const data = fixes(20);
    const w = fit(data, 400, 0.5);
    expect(w.tokens).toBeGreaterThan(0);
    expect(scoreTop1(data, { bias: 1e6, w })).toEqual({ precision: 1, recall: 1, f1: 1 });
    // Unfitted weights tie every candidate: the first listed (a decoy) wins, nothing is right.
    expect(scoreTop1(data, { bias: 1e6, w: { ...w, tokens: 0, age: 0 } }).f1).toBe(0);
  });

  it('a_high_bias_threshold_predicts_nothing', () => {
    const data = fixes(5);
    const w = fit(data, 200, 0.5);
    expect(scoreTop1(data, { bias: -1e6, w })).toEqual({ precision: 0, recall: 0, f1: 0 });
  });

  it('cross_validation_scores_held_folds_and_a_dropped_feature_is_never_learned', () => {
    const data = fixes(12);
    expect(crossValidate(data, 2)).toEqual({ precision: 1, recall: 1, f1: 1 });
    // Without the two features that tell the inducer apart every candidate ties and a decoy is first.
    expect(crossValidate(data, 3, new Set(['tokens', 'age'])).f1).toBe(0);
  });
});
