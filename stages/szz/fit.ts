/**
 * Fitting foresight's SZZ parameters on fixes whose inducing commits are known: the history horizon
 * (from blame-only attributions over the whole history) and the ranker's weights (from the wider
 * attribution's candidates). Pure functions; what they are fitted on is the caller's (repo-fit.ts).
 */
import { FEATURES, type CandidateFeatures, type RankerWeights } from './rank.ts';

export const YEAR = 365 * 86400;

/** The horizons tried, shortest first; null is the whole history (no horizon). */
export const HORIZONS: ReadonlyArray<number | null> = [1, 2, 3, 4, 5, 7, 10].map((y) => y * YEAR).concat([null] as never[]);

/**
 * Own fixes a repository needs before its own figures choose a parameter: below it a fitted value
 * swings with one or two fixes (30 fixes: one fix moves F1 by about 0.03).
 */
export const ENOUGH = 30;

/** One fix as blame over the whole history saw it: its parent's time, the commits blamed, highest score first. */
export interface HorizonCase {
  baseTime: number;
  commits: ReadonlyArray<{ sha: string; time: number }>;
  inducing: readonly string[];
}

export interface Prf {
  precision: number;
  recall: number;
  f1: number;
}

export function prf(tp: number, predictions: number, pairs: number): Prf {
  const precision = predictions ? tp / predictions : 0;
  const recall = pairs ? tp / pairs : 0;
  return { precision, recall, f1: precision + recall ? (2 * precision * recall) / (precision + recall) : 0 };
}

/** The top commit blame names within `horizon` of the fix's parent (what `git blame --since` would leave first), or none. */
export function topWithin(c: HorizonCase, horizon: number | null): string | null {
  const since = horizon === null ? -Infinity : c.baseTime - horizon;
  return c.commits.find((x) => x.time >= since)?.sha ?? null;
}

/** Top-1 scores: each fix's one prediction (or none) against its inducing commits. */
function scoreTop<T extends { inducing: readonly string[] }>(fixes: readonly T[], top: (fix: T) => string | null): Prf {
  let tp = 0;
  let predictions = 0;
  let pairs = 0;
  for (const x of fixes) {
    pairs += x.inducing.length;
    const sha = top(x);
    if (!sha) continue;
    predictions++;
    if (x.inducing.includes(sha)) tp++;
  }
  return prf(tp, predictions, pairs);
}

/** Top-1 scores of blame-only attribution with a horizon, every fix's top predicted. */
export function scoreHorizon(cases: readonly HorizonCase[], horizon: number | null): Prf {
  return scoreTop(cases, (c) => topWithin(c, horizon));
}

export interface HorizonFit {
  /** Seconds, or null: the whole history. */
  horizon: number | null;
  /** 'own': chosen on the repository's own fixes; 'too_few': fewer than ENOUGH, so none. */
  basis: 'own' | 'too_few';
  fixes: number;
  /** F1 on those fixes with the chosen horizon and with none. */
  f1: number;
  f1Without: number;
}

/**
 * The horizon whose blame-only F1 on the fixes is highest; on a tie the shorter (cheaper: blame stops
 * earlier). The whole history is among the choices, so the choice is never worse on the fixes it was
 * chosen on. Fewer than ENOUGH fixes: no horizon.
 */
export function fitHorizon(cases: readonly HorizonCase[]): HorizonFit {
  const without = scoreHorizon(cases, null).f1;
  if (cases.length < ENOUGH) return { horizon: null, basis: 'too_few', fixes: cases.length, f1: without, f1Without: without };
  let best = { horizon: null as number | null, f1: -1 };
  for (const h of HORIZONS) {
    const f1 = scoreHorizon(cases, h).f1;
    if (f1 > best.f1 + 1e-9) best = { horizon: h, f1 };
  }
  return { horizon: best.horizon, basis: 'own', fixes: cases.length, f1: best.f1, f1Without: without };
}

/** One fix as the wider attribution saw it: every candidate with its features. */
export interface RankCase {
  fix: string;
  inducing: string[];
  candidates: Array<{ sha: string; features: CandidateFeatures }>;
}

const dot = (w: Record<string, number>, f: CandidateFeatures): number => FEATURES.reduce((z, k) => z + w[k]! * (f[k] ?? 0), 0);

/** Listwise logistic fit (gradient ascent on the log-likelihood that a fix's inducer is its top), L2 0.01; `drop`'s weights stay 0. */
export function fit(fixes: readonly RankCase[], iterations = 4000, rate = 0.5, drop: ReadonlySet<string> = new Set()): Record<keyof CandidateFeatures, number> {
  const w = Object.fromEntries(FEATURES.map((k) => [k, 0])) as Record<keyof CandidateFeatures, number>;
  const usable = fixes.filter((x) => x.candidates.some((c) => x.inducing.includes(c.sha)));
  if (!usable.length) return w;
  for (let it = 0; it < iterations; it++) {
    const grad = Object.fromEntries(FEATURES.map((k) => [k, -0.01 * w[k]])) as Record<string, number>;
    for (const x of usable) {
      const z = x.candidates.map((c) => dot(w, c.features));
      const m = Math.max(...z);
      const e = z.map((v) => Math.exp(v - m));
      const sum = e.reduce((a, b) => a + b, 0);
      const pos = x.candidates.map((c) => x.inducing.includes(c.sha));
      const nPos = pos.filter(Boolean).length;
      x.candidates.forEach((c, i) => {
        const target = pos[i] ? 1 / nPos : 0;
        for (const k of FEATURES) grad[k]! += (target - e[i]! / sum) * (c.features[k] ?? 0);
      });
    }
    for (const k of FEATURES) if (!drop.has(k)) w[k] += (rate * grad[k]!) / usable.length;
  }
  return w;
}

/** The weights, and the bias that makes the fitted fixes' top-1 F1 best (the lowest score still worth predicting). */
export function fitWithBias(fixes: readonly RankCase[], drop: ReadonlySet<string> = new Set()): RankerWeights {
  const w = fit(fixes, undefined, undefined, drop);
  let best = { bias: 0, f1: -1 };
  for (let b = -10; b <= 10; b += 0.25) {
    const s = scoreTop1(fixes, { bias: b, w });
    if (s.f1 > best.f1 + 1e-9) best = { bias: b, f1: s.f1 };
  }
  return { bias: best.bias, w };
}

/**
 * Each fix's prediction by weights fitted on the other folds (k folds round robin in `fixes`' order):
 * what a repository's own weights predict for a fix they were not fitted on.
 */
export function crossPredict(fixes: readonly RankCase[], k: number, drop: ReadonlySet<string> = new Set()): Map<string, string | null> {
  const out = new Map<string, string | null>();
  for (let fold = 0; fold < k; fold++) {
    const weights = fitWithBias(fixes.filter((_, i) => i % k !== fold), drop);
    fixes.forEach((x, i) => {
      if (i % k === fold) out.set(x.fix, predictTop(x, weights));
    });
  }
  return out;
}

/** k-fold cross-validation inside the fitted fixes: pooled top-1 scores of the held folds. */
export function crossValidate(fixes: readonly RankCase[], k: number, drop: ReadonlySet<string> = new Set()): Prf {
  const predicted = crossPredict(fixes, k, drop);
  return scoreTop(fixes, (x) => predicted.get(x.fix) ?? null);
}

/** The top candidate when its score clears the bias (z ≥ 0, a score ≥ 0.5), else none. */
export function predictTop(x: RankCase, weights: RankerWeights): string | null {
  let top: { sha: string; z: number } | null = null;
  for (const c of x.candidates) {
    const z = weights.bias + dot(weights.w, c.features);
    if (!top || z > top.z) top = { sha: c.sha, z };
  }
  return top && top.z >= 0 ? top.sha : null;
}

/** Top-1 precision, recall and F1 when a fix's top candidate is predicted only if its score clears `bias`. */
export function scoreTop1(fixes: readonly RankCase[], weights: RankerWeights): Prf {
  return scoreTop(fixes, (x) => predictTop(x, weights));
}
