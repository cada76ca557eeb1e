/**
 * Benchmark: foresight's SZZ parameters on several repositories, each scored on its own fixes whose
 * message names the commit their bug came from (stages/szz/own-oracle.ts), by commit and by change (PR):
 * blame-only (the szz stage) with no horizon, the 3-year horizon once chosen on Django, and the horizon
 * each repository chooses on its own fixes; the wider attribution (szz-eval) with Django's ranker
 * weights, with weights fitted on the other repositories (the mix an unseen repository gets), and with
 * its own weights cross-fitted (each fix predicted by weights fitted on the other folds).
 *
 *   node_modules/.bin/tsx bench/szz-repos.ts --clone /tmp/django --clone /tmp/curl --clone /tmp/git [--cache /tmp/szz-repos] [--concurrency 2] [--limit 300]
 *
 * Prints the tables and the weights fitted on all repositories pooled (rank.ts's FITTED).
 */
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import PQueue from 'p-queue';
import { git } from '../core/foundation/git.ts';
import { commitToChange, listChanges } from '../core/history/changes.ts';
import {
  attributeFix,
  crossPredict,
  ENOUGH,
  fitHorizon,
  fitWithBias,
  FEATURES,
  FITTED,
  horizonCases,
  MetaChanges,
  OWN_FIXES,
  ownOracle,
  predictTop,
  rowsByChange,
  scoreRows,
  topWithin,
  YEAR,
  type HorizonCase,
  type OracleEntry,
  type RankCase,
  type RankerWeights,
} from '../stages/szz/index.ts';

const { values } = parseArgs({ options: { clone: { type: 'string', multiple: true }, cache: { type: 'string' }, concurrency: { type: 'string' }, limit: { type: 'string' } } });
if (!values.clone?.length) throw new Error('usage: bench/szz-repos.ts --clone <clone> [--clone <clone> ...] [--cache dir] [--concurrency 2] [--limit 300]');
const concurrency = Number(values.concurrency ?? 2);
const limit = Number(values.limit ?? 300);

/** Django's weights before this benchmark (rank.ts's FITTED until then): the "fitted on one repository" baseline. */
const DJANGO: RankerWeights = {
  bias: -5,
  w: { blame: 1.188, block: 0.774, recent: -0.092, overlap: 0.664, age: 1.935, size: -0.242, age2: -2.684, fresh: 3.287, historyOnly: -2.029, tokens: 3.403, testDir: 1.515 },
};

interface RepoData {
  name: string;
  oracle: OracleEntry[];
  blame: Array<HorizonCase & { fix: string }>;
  wider: RankCase[];
  changeOf: Record<string, string>;
  seconds: { blame: number; wider: number };
}

async function collect(clone: string): Promise<RepoData> {
  const name = basename(clone);
  const file = values.cache ? join(values.cache, `${name}.json`) : null;
  if (file && existsSync(file)) return JSON.parse(await readFile(file, 'utf8')) as RepoData;
  const oracle = await ownOracle(clone, { limit });
  process.stderr.write(`${name}: ${oracle.length} own fixes\n`);
  const meta = new MetaChanges(clone);
  const t0 = performance.now();
  const blame = (await horizonCases(clone, oracle, meta, concurrency)) as Array<HorizonCase & { fix: string }>;
  const t1 = performance.now();
  const queue = new PQueue({ concurrency });
  const wider: RankCase[] = [];
  await Promise.all(
    oracle.map((e) =>
      queue.add(async () => {
        const base = (await git(clone, ['rev-parse', '--verify', '--quiet', '--end-of-options', `${e.fix}^1`]).catch(() => '')).trim();
        if (!base) return;
        const att = await attributeFix(clone, { baseSha: base, mergeSha: e.fix }, { variant: 'foresight', meta, wider: true, horizon: null });
        wider.push({ fix: e.fix, inducing: e.inducing, candidates: att.commits.map((c) => ({ sha: c.sha, features: c.features! })) });
      }),
    ),
  );
  const t2 = performance.now();
  const order = new Map(oracle.map((e, i) => [e.fix, i]));
  wider.sort((a, b) => order.get(a.fix)! - order.get(b.fix)!);
  const { changes } = await listChanges(clone, { branch: 'HEAD', units: 'auto', tracker: 'auto' });
  const data: RepoData = { name, oracle, blame, wider, changeOf: Object.fromEntries(commitToChange(changes)), seconds: { blame: (t1 - t0) / 1000, wider: (t2 - t1) / 1000 } };
  if (file) {
    await mkdir(values.cache!, { recursive: true });
    await writeFile(file, JSON.stringify(data));
  }
  return data;
}

const repos: RepoData[] = [];
for (const c of values.clone) repos.push(await collect(resolve(c)));

const f = (n: number): string => n.toFixed(3);
const yearsOf = (h: number | null): string => (h === null ? 'whole history' : `${h / YEAR} y`);

/** Commit- and change-level scores of one prediction per fix. */
function score(r: RepoData, predicted: Map<string, string | null>): { commit: ReturnType<typeof scoreRows>; change: ReturnType<typeof scoreRows> } {
  const rows = r.oracle.map((e) => ({ predicted: predicted.get(e.fix) ? [predicted.get(e.fix)!] : [], inducing: e.inducing }));
  const changeOf = new Map(Object.entries(r.changeOf));
  return { commit: scoreRows('foresight', rows, 0), change: scoreRows('foresight', rowsByChange(rows, changeOf), 0) };
}

const line = (repo: string, variant: string, s: ReturnType<typeof score>, n: number): string =>
  `| ${repo} | ${variant} | ${n} | ${f(s.commit.precision)} | ${f(s.commit.recall)} | **${f(s.commit.f1)}** | ${f(s.change.precision)} | ${f(s.change.recall)} | **${f(s.change.f1)}** |`;

console.log('### Blame-only (the szz stage): the horizon\n');
console.log('| repository | horizon | fixes | P | R | F1 | P (PR) | R (PR) | F1 (PR) |');
console.log('|---|---|---|---|---|---|---|---|---|');
const horizonFits: string[] = [];
for (const r of repos) {
  const top = (h: number | null): Map<string, string | null> => new Map(r.blame.map((c) => [c.fix, topWithin(c, h)]));
  // What the stage chooses: its newest OWN_FIXES own fixes (the oracle is newest first).
  const stageFit = fitHorizon(r.blame.slice(0, OWN_FIXES));
  // Out of sample: chosen on the older half, scored on the newer half.
  const half = Math.floor(r.blame.length / 2);
  const older = fitHorizon(r.blame.slice(half));
  const newer = new Set(r.blame.slice(0, half).map((c) => c.fix));
  const newerData: RepoData = { ...r, oracle: r.oracle.filter((e) => newer.has(e.fix)) };
  const n = r.oracle.length;
  console.log(line(r.name, 'whole history (no horizon)', score(r, top(null)), n));
  console.log(line(r.name, '3 y (chosen on Django, the old default)', score(r, top(3 * YEAR)), n));
  console.log(line(r.name, `own: ${yearsOf(stageFit.horizon)} (chosen on the newest ${stageFit.fixes}; ${stageFit.basis})`, score(r, top(stageFit.horizon)), n));
  console.log(line(r.name, 'newer half, whole history', score(newerData, top(null)), newerData.oracle.length));
  console.log(line(r.name, `newer half, ${yearsOf(older.horizon)} (chosen on the older half; ${older.basis})`, score(newerData, top(older.horizon)), newerData.oracle.length));
  horizonFits.push(`${r.name}: stage fit ${yearsOf(stageFit.horizon)} on ${stageFit.fixes} (F1 ${f(stageFit.f1)} vs ${f(stageFit.f1Without)}); older-half fit ${yearsOf(older.horizon)}; blame ${r.seconds.blame.toFixed(1)} s, wider ${r.seconds.wider.toFixed(1)} s`);
}
console.log('\n' + horizonFits.join('\n') + '\n');

console.log('### Wider attribution (szz-eval): the ranker weights, whole history\n');
console.log('| repository | weights | fixes | P | R | F1 | P (PR) | R (PR) | F1 (PR) |');
console.log('|---|---|---|---|---|---|---|---|---|');
for (const r of repos) {
  const n = r.oracle.length;
  const by = (w: RankerWeights): Map<string, string | null> => new Map(r.wider.map((x) => [x.fix, predictTop(x, w)]));
  const usable = r.wider.filter((x) => x.candidates.some((c) => x.inducing.includes(c.sha))).length;
  const others = repos.filter((o) => o !== r).flatMap((o) => o.wider);
  console.log(line(r.name, 'none: blame-only top, whole history', score(r, new Map(r.blame.map((c) => [c.fix, topWithin(c, null)]))), n));
  console.log(line(r.name, "Django's (the old default)", score(r, by(DJANGO)), n));
  if (others.length) console.log(line(r.name, 'mix of the other repositories', score(r, by(fitWithBias(others))), n));
  console.log(line(r.name, `own, 5-fold cross-fitted (${usable} usable${usable < ENOUGH ? ', fewer than ENOUGH: mix used' : ''})`, score(r, crossPredict(r.wider, 5)), n));
  console.log(line(r.name, 'rank.ts FITTED now', score(r, by(FITTED)), n));
}
const pooled = fitWithBias(repos.flatMap((r) => r.wider));
const round = (n: number): number => Math.round(n * 1000) / 1000;
console.log(`\nweights fitted on all ${repos.length} repositories pooled: ${JSON.stringify({ bias: pooled.bias, w: Object.fromEntries(FEATURES.map((k) => [k, round(pooled.w[k])])) })}`);
