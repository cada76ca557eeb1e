import PQueue from 'p-queue';
import { z } from 'zod';
import { readFile } from 'node:fs/promises';
import { ForesightError } from '../../core/foundation/errors.ts';
import { git, revParse } from '../../core/foundation/git.ts';
import { attributeFix, selectFiles, type SzzVariant } from './attribute.ts';
import { fixedLines } from './diff-lines.ts';
import { MetaChanges } from './meta.ts';
import { crossPredict, ENOUGH, type RankCase } from './fit.ts';
import { CONFIDENT, type CandidateFeatures, type RankerWeights } from './rank.ts';

/**
 * A commit as an oracle names it: an object name, full or abbreviated. Nothing else reaches git from
 * an oracle file, so no value of it can be read as an option ("--output=FILE" would write that file).
 */
const ObjectName = z.string().regex(/^[0-9a-f]{7,40}$/, 'must be a commit sha (7 to 40 lowercase hex digits)');

/** One line of an oracle: a fix commit and the commit(s) known to have induced the bug. */
export const OracleEntrySchema = z.object({ fix: ObjectName, inducing: z.array(ObjectName).min(1) });
export type OracleEntry = z.infer<typeof OracleEntrySchema>;

export interface Scores {
  variant: SzzVariant;
  fixes: number;
  predictions: number;
  truePositives: number;
  /** Oracle pairs (fix, inducing) in total. */
  oraclePairs: number;
  precision: number;
  recall: number;
  f1: number;
  secondsPerFix: number;
}

export interface Evaluation {
  all: Scores;
  /** Fixes whose source diff deletes or modifies no line (plain SZZ has nothing to blame). */
  addOnly: Scores;
  /** foresight: every fix's top candidate predicted, however low its score (what the szz stage picks). */
  allTop?: Scores;
  /**
   * All fixes scored by change: a predicted commit counts when it belongs to a change (PR) that holds an
   * inducing commit, which is what a chain needs (its PR1 is a change); given a commit -> change map.
   */
  byChange?: Scores;
  /**
   * foresight: what predicted. 'own': weights cross-fitted on this oracle's other fixes (at least ENOUGH of
   * them with their inducer among the candidates), chosen because on these fixes they scored at least
   * blame's top; 'blame': blame's top (too few fixes, or the ranker did not beat it); 'mix': rank.ts's
   * weights (FITTED, fitted on a mix of repositories), asked for. F1 of the cross-fitted ranker and of blame's top.
   */
  ranker?: { basis: 'own' | 'blame' | 'mix'; fixes: number; f1Own: number | null; f1Blame: number };
}

/** The candidate with the largest share of the fixed lines' blame (on a tie the newer): what blame alone would predict. */
export function blameTop(c: RankCase): string | null {
  let top: RankCase['candidates'][number] | null = null;
  for (const x of c.candidates) {
    if (x.features.blame <= 0) continue;
    if (!top || x.features.blame > top.features.blame || (x.features.blame === top.features.blame && x.features.age < top.features.age)) top = x;
  }
  return top?.sha ?? null;
}

function scorePredicted(rows: ReadonlyArray<{ fix: string; inducing: string[] }>, predicted: ReadonlyMap<string, string | null>): number {
  return scoreRows('foresight', rows.map((r) => ({ predicted: predicted.get(r.fix) ? [predicted.get(r.fix)!] : [], inducing: r.inducing })), 0).f1;
}

/** Folds of the own-weights cross-fit: each fix is predicted by weights fitted on the other 4/5. */
const OWN_FOLDS = 5;

/** Rows with their commits replaced by the changes holding them (each change once; a commit of no change stands for itself). */
export function rowsByChange<R extends { predicted: string[]; inducing: string[] }>(rows: readonly R[], changeOf: ReadonlyMap<string, string>): R[] {
  const of = (shas: string[]): string[] => [...new Set(shas.map((s) => changeOf.get(s) ?? s))];
  return rows.map((r) => ({ ...r, predicted: of(r.predicted), inducing: of(r.inducing) }));
}

export function scoreRows(variant: SzzVariant, rows: Array<{ predicted: string[]; inducing: string[] }>, seconds: number): Scores {
  let tp = 0;
  let predictions = 0;
  let oraclePairs = 0;
  for (const r of rows) {
    predictions += r.predicted.length;
    oraclePairs += r.inducing.length;
    tp += r.predicted.filter((p) => r.inducing.includes(p)).length;
  }
  const precision = predictions ? tp / predictions : 0;
  const recall = oraclePairs ? tp / oraclePairs : 0;
  const f1 = precision + recall ? (2 * precision * recall) / (precision + recall) : 0;
  return { variant, fixes: rows.length, predictions, truePositives: tp, oraclePairs, precision, recall, f1, secondsPerFix: rows.length ? seconds / rows.length : 0 };
}

/** One oracle fix as an SZZ variant sees it: what it predicts, its top and ranked candidates, the oracle's commits in full. */
export interface FixPrediction {
  predicted: string[];
  top: string[];
  /** Every commit the attribution ranked, best first (the bounds an execution search starts from). */
  candidates: string[];
  inducing: string[];
  addOnly: boolean;
  /** foresight: every candidate with what ranked it (for weights fitted on other fixes). */
  ranked: Array<{ sha: string; features: CandidateFeatures }>;
}

/** Predict one oracle fix's inducing commits from code history alone (the wider attribution; the fix's message is never read). */
export async function predictFix(
  clone: string,
  e: OracleEntry,
  opts: { variant: SzzVariant; meta: MetaChanges; horizon?: number | null; weights?: RankerWeights },
): Promise<FixPrediction> {
  // --end-of-options here and in every git call below: entries passed in directly skip readOracle's checks.
  const base = (await git(clone, ['rev-parse', '--verify', '--end-of-options', `${e.fix}^1`])).trim();
  const att = await attributeFix(clone, { baseSha: base, mergeSha: e.fix }, { variant: opts.variant, meta: opts.meta, wider: true, horizon: opts.horizon, weights: opts.weights });
  const top = att.commits.slice(0, 1).map((c) => c.sha);
  // foresight predicts its top candidate when the ranker is confident enough; B-SZZ every blamed commit.
  const predicted = opts.variant === 'b-szz' ? att.commits.map((c) => c.sha) : att.commits[0] && att.commits[0].score >= CONFIDENT ? top : [];
  // One definition of "add-only" for every variant, so the subsets compare the same fixes.
  const addOnly = selectFiles(await fixedLines(clone, base, e.fix), 'foresight').every((f) => f.removed.length === 0);
  // Predictions are full shas: an abbreviated oracle entry is compared by the commit it names.
  const inducing = await Promise.all(e.inducing.map((s) => revParse(clone, s).catch(() => s)));
  const ranked = opts.variant === 'foresight' ? att.commits.flatMap((c) => (c.features ? [{ sha: c.sha, features: c.features }] : [])) : [];
  return { predicted, top, candidates: att.commits.map((c) => c.sha), inducing, addOnly, ranked };
}

/**
 * Predict the inducing commits of each oracle fix from code history alone (the fix's message is
 * never read) and score them: B-SZZ predicts every blamed commit, foresight (the wider attribution,
 * rank.ts) its top-ranked one when the ranker is confident, and `allTop` scores its top whatever the score.
 * foresight's weights are the oracle's own when at least ENOUGH of its fixes have their inducer among
 * the candidates (each fix predicted by weights fitted on the other folds, never on itself) and they score
 * at least blame's top on those fixes; otherwise foresight predicts blame's top (`ranker` says which).
 */
export async function evaluateSzz(opts: {
  clone: string;
  oracle: readonly OracleEntry[];
  variant: SzzVariant;
  concurrency?: number;
  onProgress?: (done: number, total: number) => void;
  /** Commit -> the change holding it (core/history commitToChange): adds the scores by change. */
  changeOf?: ReadonlyMap<string, string>;
  /** foresight: the history horizon (seconds; null or absent: the whole history). */
  horizon?: number | null;
  /** foresight: 'own' (default) cross-fits weights on the oracle when it has enough fixes (else blame's top); 'mix' keeps rank.ts's. */
  weights?: 'own' | 'mix';
}): Promise<Evaluation> {
  const meta = new MetaChanges(opts.clone);
  const queue = new PQueue({ concurrency: opts.concurrency ?? 2 });
  const rows: Array<FixPrediction & { fix: string }> = [];
  let done = 0;
  const started = Date.now();
  await Promise.all(
    opts.oracle.map((e) =>
      queue.add(async () => {
        rows.push({ fix: e.fix, ...(await predictFix(opts.clone, e, { variant: opts.variant, meta, horizon: opts.horizon })) });
        opts.onProgress?.(++done, opts.oracle.length);
      }),
    ),
  );
  // Rows in the oracle's order: the folds must not depend on which blame finished first.
  const order = new Map(opts.oracle.map((e, i) => [e.fix, i]));
  rows.sort((a, b) => order.get(a.fix)! - order.get(b.fix)!);
  let ranker: Evaluation['ranker'];
  if (opts.variant === 'foresight') {
    const cases: RankCase[] = rows.map((r) => ({ fix: r.fix, inducing: r.inducing, candidates: r.ranked }));
    const usable = cases.filter((c) => c.candidates.some((x) => c.inducing.includes(x.sha))).length;
    if ((opts.weights ?? 'own') === 'own') {
      const blame = new Map(cases.map((c) => [c.fix, blameTop(c)]));
      const own = usable >= ENOUGH ? crossPredict(cases, OWN_FOLDS) : null;
      const f1Blame = scorePredicted(rows, blame);
      const f1Own = own ? scorePredicted(rows, own) : null;
      // The ranker predicts only where it beat blame's own top on these fixes; else blame's top is the prediction.
      const use = own && f1Own !== null && f1Own >= f1Blame ? own : blame;
      for (const r of rows) {
        const p = use.get(r.fix);
        r.predicted = p ? [p] : [];
      }
      ranker = { basis: use === own ? 'own' : 'blame', fixes: usable, f1Own, f1Blame };
    } else ranker = { basis: 'mix', fixes: usable, f1Own: null, f1Blame: scorePredicted(rows, new Map(cases.map((c) => [c.fix, blameTop(c)]))) };
  }
  const seconds = (Date.now() - started) / 1000;
  const addOnly = rows.filter((r) => r.addOnly);
  const all = scoreRows(opts.variant, rows, seconds);
  const addOnlyScores = scoreRows(opts.variant, addOnly, (seconds * addOnly.length) / Math.max(1, rows.length));
  const byChange = opts.changeOf ? { byChange: scoreRows(opts.variant, rowsByChange(rows, opts.changeOf), seconds) } : {};
  if (opts.variant === 'b-szz') return { all, addOnly: addOnlyScores, ...byChange };
  return { all, addOnly: addOnlyScores, allTop: scoreRows(opts.variant, rows.map((r) => ({ ...r, predicted: r.top })), seconds), ...byChange, ranker };
}

/** Read a JSONL oracle, refusing the first line that is not `{"fix": <sha>, "inducing": [<sha>, ...]}`. */
export async function readOracle(path: string): Promise<OracleEntry[]> {
  const remedy = 'write one {"fix": "<sha>", "inducing": ["<sha>", ...]} object per line (scripts/build-szz-oracle.ts does)';
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw new ForesightError(`cannot read the oracle ${path}: ${(err as Error).message}`, { remedy: 'pass --oracle the path of a JSONL oracle file', cause: err });
  }
  const out: OracleEntry[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    if (!lines[i]!.trim()) continue;
    let raw: unknown;
    try {
      raw = JSON.parse(lines[i]!);
    } catch (err) {
      throw new ForesightError(`oracle ${path}:${i + 1} is not valid JSON`, { remedy, cause: err });
    }
    const parsed = OracleEntrySchema.safeParse(raw);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new ForesightError(`oracle ${path}:${i + 1}: ${issue?.path.join('.') || 'entry'} ${issue?.message}`, { remedy });
    }
    out.push(parsed.data);
  }
  return out;
}

export function formatScores(evals: readonly Evaluation[]): string {
  const head = ['variant', 'subset', 'fixes', 'precision', 'recall', 'F1', 's/fix'];
  const label = { all: 'all fixes', addOnly: 'add-only fixes', allTop: 'all fixes, top always', byChange: 'all fixes, by change (PR)' } as const;
  const rows = evals.flatMap((e) =>
    (['all', 'addOnly', 'allTop', 'byChange'] as const).flatMap((k) => {
      const s = e[k];
      if (!s) return [];
      return [[s.variant, label[k], String(s.fixes), s.precision.toFixed(3), s.recall.toFixed(3), s.f1.toFixed(3), s.secondsPerFix.toFixed(3)]];
    }),
  );
  const w = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const fmt = (r: string[]): string => r.map((c, i) => c.padEnd(w[i]!)).join('  ');
  return [fmt(head), fmt(w.map((n) => '-'.repeat(n))), ...rows.map(fmt)].join('\n');
}
