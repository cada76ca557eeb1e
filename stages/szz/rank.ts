/**
 * Ranking SZZ candidates found in more places than the fixed lines' blame: a logistic score over a few
 * features. The default weights are fitted on a mix of repositories (bench/szz-repos.ts); szz-eval fits
 * a repository's own when its oracle has enough fixes (evaluate.ts); see bench/README.md.
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
 * Fitted on Django, curl and git pooled (the 596 newest fixes of theirs whose message names the inducing
 * commit, bench/szz-repos.ts), so that no single repository's fit is everyone's default. The bias puts a
 * score of 0.5 where predicting the top candidate stops paying for F1 on them.
 */
export const FITTED: RankerWeights = {
  bias: -1.5,
  w: { blame: 1.09, block: -0.981, recent: -0.03, overlap: 0.289, age: 1.021, size: -0.083, age2: -1.831, fresh: 0.399, historyOnly: -2.203, tokens: 3.971, testDir: 1.829 },
};

/**
 * A top candidate scoring at least this is worth predicting (szz-eval). The szz stage does not rank this way: on
 * full Django wider costs 2.3x blame-only (within a horizon) for +0.003 / +0.017 F1 of its top pick (bench/README.md).
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
