/**
 * Fit the weights of foresight's SZZ ranker (stages/szz/rank.ts) on an oracle's fixes: collect every
 * candidate the wider attribution finds with its features, then fit a listwise (softmax per fix)
 * logistic model whose top candidate should be an inducing commit (the fit itself: stages/szz/fit.ts).
 * Prints one repository's weights and its tuning top-1 scores; rank.ts's FITTED is fitted on several
 * repositories pooled (bench/szz-repos.ts), and szz-eval fits an oracle's own by cross-fitting. Run it
 * on the tuning part only (the held-out part is scored by `foresight szz-eval`, never fitted on):
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
import { attributeFix, crossValidate, fit, fitWithBias, readOracle, scoreTop1, MetaChanges, FEATURES, type RankCase } from '../stages/szz/index.ts';

export async function collect(clone: string, oraclePath: string, concurrency = 2): Promise<RankCase[]> {
  const oracle = await readOracle(oraclePath);
  const meta = new MetaChanges(clone);
  const queue = new PQueue({ concurrency });
  const out: RankCase[] = [];
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

export { crossValidate, fit, fitWithBias, scoreTop1 };

if (import.meta.url === `file://${process.argv[1]}`) {
  const { positionals, values } = parseArgs({ allowPositionals: true, options: { cache: { type: 'string' }, cv: { type: 'string' }, drop: { type: 'string' } } });
  const [clone, oraclePath] = positionals;
  if (!clone || !oraclePath) {
    process.stderr.write('usage: fit-szz-ranker.ts <clone> <tuning.jsonl> [--cache features.json] [--cv k] [--drop f,g]\n');
    process.exit(2);
  }
  let fixes: RankCase[];
  if (values.cache && existsSync(values.cache)) fixes = JSON.parse(await readFile(values.cache, 'utf8')) as RankCase[];
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
