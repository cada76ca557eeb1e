/**
 * Ranking SZZ candidates found in more places than the fixed lines' blame: a logistic score over a few
 * features. The weights are fitted by scripts/fit-szz-ranker.ts on the Django oracle's fixes before
 * 2022-01-01 only (the later ones are held out); see bench/README.md.
 */

/** What is known of one candidate commit for one fix. */
export interface CandidateFeatures {
  /** Share of the fixed lines' blame weight that lands on it (0..1). */
  blame: number;
  /** Share of the lines of the blocks around the fix (enclosing functions, neighbours) blamed to it (0..1). */
  block: number;
  /** 1 / (1 + its rank) in the newest history of the fixed files, newest first (0 when not among them). */
  recent: number;
  /** Share of the fixed files it changed (0..1). */
  overlap: number;
  /** log(1 + days from it to the fix's parent). */
  age: number;
  /** log(1 + files it changed). */
  size: number;
  /** (age)^2 / 10: with `age` and `fresh`, the odds rise then fall with age. */
  age2: number;
  /** 1 when made within 3 days before the fix's parent. */
  fresh: number;
  /** 1 when found only in the files' history, no line around the fix blamed to it. */
  historyOnly: number;
  /** Share of the names (identifiers) on the fix's changed lines that its own changed lines in those files hold. */
  tokens: number;
  /** Share of the directories of the fix's test files in which it changed a file (the tests of the code it brought). */
  testDir: number;
}

export const FEATURES = ['blame', 'block', 'recent', 'overlap', 'age', 'size', 'age2', 'fresh', 'historyOnly', 'tokens', 'testDir'] as const satisfies ReadonlyArray<keyof CandidateFeatures>;

export interface RankerWeights {
  bias: number;
  w: Record<keyof CandidateFeatures, number>;
}

/**
 * Fitted on the tuning part of the Django oracle (262 fixes before 2022-01-01) by
 * scripts/fit-szz-ranker.ts. The bias puts a score of 0.5 where predicting the top candidate stops paying for F1.
 */
export const FITTED: RankerWeights = {
  bias: -5,
  w: { blame: 1.188, block: 0.774, recent: -0.092, overlap: 0.664, age: 1.935, size: -0.242, age2: -2.684, fresh: 3.287, historyOnly: -2.029, tokens: 3.403, testDir: 1.515 },
};

/**
 * A top candidate scoring at least this is worth predicting (szz-eval). The szz stage does not rank this way: on
 * full Django wider costs 2.3x blame-only (within the horizon) for +0.003 / +0.017 F1 of its top pick (bench/README.md).
 */
export const CONFIDENT = 0.5;

export function rankScore(f: CandidateFeatures, weights: RankerWeights = FITTED): number {
  let z = weights.bias;
  for (const k of FEATURES) z += weights.w[k] * f[k];
  return 1 / (1 + Math.exp(-z));
}

const KEYWORDS = new Set('self cls def return None True False elif else for while import from class not and or with try except raise pass lambda yield assert the this function const let var new null true false'.split(' '));

/** The names (identifiers of 3+ characters, keywords aside) on the changed lines of a unified diff. */
export function changedNames(diff: string): Set<string> {
  const out = new Set<string>();
  for (const l of diff.split('\n')) {
    if (!(l.startsWith('+') || l.startsWith('-')) || l.startsWith('+++ ') || l.startsWith('--- ')) continue;
    for (const m of l.slice(1).matchAll(/[A-Za-z_][A-Za-z0-9_]{2,}/g)) if (!KEYWORDS.has(m[0])) out.add(m[0]);
  }
  return out;
}
