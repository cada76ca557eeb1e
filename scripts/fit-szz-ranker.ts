/**
 * Fit the weights of foresight's SZZ ranker (stages/szz/rank.ts) on an oracle's fixes: collect every
 * candidate the wider attribution finds with its features, then fit a listwise (softmax per fix)
 * logistic model whose top candidate should be an inducing commit. Prints the weights for rank.ts's
 * FITTED and the tuning top-1 scores. Run it on the tuning part only (the held-out part is scored
 * by `foresight szz-eval`, never fitted on):
 *
 *   node_modules/.bin/tsx scripts/fit-szz-ranker.ts <clone> <tuning.jsonl> [--cache features.json] [--cv 2] [--drop f,g]
 *
 * --cv k scores k-fold cross-validation inside the tuning fixes (weights and bias fitted on k-1 folds,
 * scored on the last; folds round robin by fix sha), the way features are chosen; --drop leaves
 * features out of the fit (their weight stays 0) to compare.
 */
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import PQueue from 'p-queue';
import { git, revParse } from '../core/foundation/git.ts';
import { attributeFix, readOracle, MetaChanges, FEATURES, type CandidateFeatures, type RankerWeights } from '../stages/szz/index.ts';

interface Fix {
  fix: string;
  inducing: string[];
  candidates: Array<{ sha: string; features: CandidateFeatures }>;
}

export async function collect(clone: string, oraclePath: string, concurrency = 2): Promise<Fix[]> {
  const oracle = await readOracle(oraclePath);
  const meta = new MetaChanges(clone);
  const queue = new PQueue({ concurrency });
  const out: Fix[] = [];
  await Promise.all(
    oracle.map((e) =>
      queue.add(async () => {
        const base = (await git(clone, ['rev-parse', '--verify', '--end-of-options', `${e.fix}^1`])).trim();
        const att = await attributeFix(clone, { baseSha: base, mergeSha: e.fix }, { variant: 'foresight', meta, wider: true });
        const inducing = await Promise.all(e.inducing.map((s) => revParse(clone, s).catch(() => s)));
        out.push({ fix: e.fix, inducing, candidates: att.commits.map((c) => ({ sha: c.sha, features: c.features! })) });
      }),
    ),
  );
  return out.sort((a, b) => a.fix.localeCompare(b.fix));
}

const dot = (w: Record<string, number>, f: CandidateFeatures): number => FEATURES.reduce((z, k) => z + w[k]! * (f[k] ?? 0), 0);

/** Listwise logistic fit (gradient ascent on the log-likelihood that a fix's inducer is its top), L2 0.01; `drop`'s weights stay 0. */
export function fit(fixes: readonly Fix[], iterations = 4000, rate = 0.5, drop: ReadonlySet<string> = new Set()): Record<keyof CandidateFeatures, number> {
  const w = Object.fromEntries(FEATURES.map((k) => [k, 0])) as Record<keyof CandidateFeatures, number>;
  const usable = fixes.filter((x) => x.candidates.some((c) => x.inducing.includes(c.sha)));
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
export function fitWithBias(fixes: readonly Fix[], drop: ReadonlySet<string> = new Set()): RankerWeights {
  const w = fit(fixes, undefined, undefined, drop);
  let best = { bias: 0, f1: -1 };
  for (let b = -10; b <= 10; b += 0.25) {
    const s = scoreTop1(fixes, { bias: b, w });
    if (s.f1 > best.f1 + 1e-9) best = { bias: b, f1: s.f1 };
  }
  return { bias: best.bias, w };
}

/** k-fold cross-validation inside the fitted fixes (folds round robin in `fixes`' order): pooled top-1 scores of the held folds. */
export function crossValidate(fixes: readonly Fix[], k: number, drop: ReadonlySet<string> = new Set()): { precision: number; recall: number; f1: number } {
  let tp = 0;
  let predictions = 0;
  let pairs = 0;
  for (let fold = 0; fold < k; fold++) {
    const held = fixes.filter((_, i) => i % k === fold);
    const weights = fitWithBias(fixes.filter((_, i) => i % k !== fold), drop);
    const s = countTop1(held, weights);
    tp += s.tp;
    predictions += s.predictions;
    pairs += s.pairs;
  }
  return prf(tp, predictions, pairs);
}

/** Top-1 precision, recall and F1 when a fix's top candidate is predicted only if its score clears `bias`. */
export function scoreTop1(fixes: readonly Fix[], weights: RankerWeights): { precision: number; recall: number; f1: number } {
  const s = countTop1(fixes, weights);
  return prf(s.tp, s.predictions, s.pairs);
}

function prf(tp: number, predictions: number, pairs: number): { precision: number; recall: number; f1: number } {
  const precision = predictions ? tp / predictions : 0;
  const recall = pairs ? tp / pairs : 0;
  return { precision, recall, f1: precision + recall ? (2 * precision * recall) / (precision + recall) : 0 };
}

function countTop1(fixes: readonly Fix[], weights: RankerWeights): { tp: number; predictions: number; pairs: number } {
  let tp = 0;
  let predictions = 0;
  let pairs = 0;
  for (const x of fixes) {
    pairs += x.inducing.length;
    const ranked = x.candidates.map((c) => ({ sha: c.sha, z: weights.bias + dot(weights.w, c.features) })).sort((a, b) => b.z - a.z);
    const top = ranked[0];
    if (!top || top.z < 0) continue;
    predictions++;
    if (x.inducing.includes(top.sha)) tp++;
  }
  return { tp, predictions, pairs };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { positionals, values } = parseArgs({ allowPositionals: true, options: { cache: { type: 'string' }, cv: { type: 'string' }, drop: { type: 'string' } } });
  const [clone, oraclePath] = positionals;
  if (!clone || !oraclePath) {
    process.stderr.write('usage: fit-szz-ranker.ts <clone> <tuning.jsonl> [--cache features.json] [--cv k] [--drop f,g]\n');
    process.exit(2);
  }
  let fixes: Fix[];
  if (values.cache && existsSync(values.cache)) fixes = JSON.parse(await readFile(values.cache, 'utf8')) as Fix[];
  else {
    fixes = await collect(clone, oraclePath);
    if (values.cache) await writeFile(values.cache, JSON.stringify(fixes));
  }
  const found = fixes.filter((x) => x.candidates.some((c) => x.inducing.includes(c.sha))).length;
  process.stdout.write(`${fixes.length} fixes, ${fixes.reduce((n, x) => n + x.candidates.length, 0)} candidates, inducer among them for ${found}\n`);
  const drop = new Set((values.drop ?? '').split(',').filter(Boolean));
  const unknown = [...drop].filter((d) => !(FEATURES as readonly string[]).includes(d));
  if (unknown.length) {
    process.stderr.write(`--drop names no feature: ${unknown.join(', ')} (features: ${FEATURES.join(', ')})\n`);
    process.exit(2);
  }
  if (values.cv) {
    const k = Number(values.cv);
    if (!Number.isInteger(k) || k < 2) {
      process.stderr.write(`--cv must be an integer of at least 2, got ${values.cv}\n`);
      process.exit(2);
    }
    const s = crossValidate(fixes, k, drop);
    process.stdout.write(`${k}-fold cross-validation: P ${s.precision.toFixed(3)} R ${s.recall.toFixed(3)} F1 ${s.f1.toFixed(3)}\n`);
  }
  const weights = fitWithBias(fixes, drop);
  const w = weights.w;
  const round = (n: number): number => Math.round(n * 1000) / 1000;
  process.stdout.write(`weights: ${JSON.stringify({ bias: weights.bias, w: Object.fromEntries(FEATURES.map((k) => [k, round(w[k])])) })}\n`);
  const always = scoreTop1(fixes, { bias: 1e6, w });
  const s = scoreTop1(fixes, weights);
  process.stdout.write(`tuning top-1 always predicted: P ${always.precision.toFixed(3)} R ${always.recall.toFixed(3)} F1 ${always.f1.toFixed(3)}\n`);
  process.stdout.write(`tuning top-1 with the bias:   P ${s.precision.toFixed(3)} R ${s.recall.toFixed(3)} F1 ${s.f1.toFixed(3)}\n`);
}
