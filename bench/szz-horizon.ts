/**
 * Benchmark: foresight's SZZ with and without a 3-year history horizon (the one chosen on Django),
 * blame-only and wider, on the same oracle fixes in one run: F1 and seconds for each.
 *
 *   node_modules/.bin/tsx bench/szz-horizon.ts --clone /tmp/django --oracle tune.jsonl --oracle held.jsonl [--concurrency 2] [--rounds 2]
 *
 * Blame-only predicts every fix's top candidate (what the szz stage picked before it ranked); wider
 * predicts its top when the ranker is confident (CONFIDENT, as szz-eval) and "top always" every top.
 * With --rounds 2 the variants run again in reverse order and each time is the mean of its two runs
 * (the machine's load drifts; the scores are the same every run).
 */
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import PQueue from 'p-queue';
import { git, revParse } from '../core/foundation/git.ts';
import { attributeFix, YEAR, readOracle, scoreRows, type OracleEntry, MetaChanges, CONFIDENT } from '../stages/szz/index.ts';

const { values } = parseArgs({ options: { clone: { type: 'string' }, oracle: { type: 'string', multiple: true }, concurrency: { type: 'string' }, rounds: { type: 'string' } } });
if (!values.clone || !values.oracle?.length) throw new Error('usage: bench/szz-horizon.ts --clone <clone> --oracle <jsonl> [--oracle <jsonl>] [--concurrency 2] [--rounds 1|2]');
const clone = resolve(values.clone);
// The horizon once chosen on Django and used everywhere; repositories now choose their own (stages/szz/repo-fit.ts).
const HORIZON = 3 * YEAR;
const concurrency = Number(values.concurrency ?? 2);
const rounds = Number(values.rounds ?? 1);

interface Variant {
  name: string;
  wider: boolean;
  horizon: number | null;
}
const VARIANTS: Variant[] = [
  { name: 'blame-only, all history', wider: false, horizon: null },
  { name: 'blame-only, horizon', wider: false, horizon: HORIZON },
  { name: 'wider, all history', wider: true, horizon: null },
  { name: 'wider, horizon', wider: true, horizon: HORIZON },
];

interface Row {
  part: string;
  top: string[];
  confident: string[];
  inducing: string[];
}

async function run(oracle: Array<OracleEntry & { part: string }>, v: Variant): Promise<{ rows: Row[]; seconds: number }> {
  const meta = new MetaChanges(clone);
  const queue = new PQueue({ concurrency });
  const rows: Row[] = [];
  const t0 = performance.now();
  await Promise.all(
    oracle.map((e) =>
      queue.add(async () => {
        const base = (await git(clone, ['rev-parse', '--verify', '--end-of-options', `${e.fix}^1`])).trim();
        const att = await attributeFix(clone, { baseSha: base, mergeSha: e.fix }, { variant: 'foresight', meta, wider: v.wider, horizon: v.horizon });
        const top = att.commits.slice(0, 1).map((c) => c.sha);
        const inducing = await Promise.all(e.inducing.map((s) => revParse(clone, s).catch(() => s)));
        rows.push({ part: e.part, top, confident: att.commits[0] && att.commits[0].score >= CONFIDENT ? top : [], inducing });
      }),
    ),
  );
  return { rows, seconds: (performance.now() - t0) / 1000 };
}

const parts = await Promise.all(values.oracle.map(async (p) => ({ path: p, oracle: await readOracle(p) })));
const all = parts.flatMap((p) => p.oracle.map((e) => ({ ...e, part: p.path })));
const results = new Map<string, { rows: Row[]; seconds: number[] }>();
const order = rounds >= 2 ? [...VARIANTS, ...[...VARIANTS].reverse()] : VARIANTS;
for (const v of order) {
  const r = await run(all, v);
  const prev = results.get(v.name);
  if (prev) prev.seconds.push(r.seconds);
  else results.set(v.name, { rows: r.rows, seconds: [r.seconds] });
  process.stderr.write(`${v.name}: ${r.seconds.toFixed(1)} s\n`);
}

// Fixes whose inducing commit is within the horizon of their parent.
let within = 0;
let pairs = 0;
for (const e of all) {
  const baseTime = Number((await git(clone, ['show', '-s', '--format=%ct', '--end-of-options', `${e.fix}^1`])).trim());
  for (const s of e.inducing) {
    const t = Number((await git(clone, ['show', '-s', '--format=%ct', '--end-of-options', s])).trim());
    pairs++;
    if (baseTime - t <= HORIZON) within++;
  }
}

const f = (n: number): string => n.toFixed(3);
console.log(`clone ${clone}, ${all.length} fixes, concurrency ${concurrency}, rounds ${rounds}; inducing commits within the horizon: ${within}/${pairs}`);
console.log('| part | variant | predicts | fixes | precision | recall | F1 | seconds (all parts) |');
console.log('|---|---|---|---|---|---|---|---|');
for (const p of parts) {
  for (const v of VARIANTS) {
    const r = results.get(v.name)!;
    const mine = r.rows.filter((row) => row.part === p.path);
    const secs = (r.seconds.reduce((a, b) => a + b, 0) / r.seconds.length).toFixed(1);
    const modes: Array<[string, (row: Row) => string[]]> = v.wider ? [['confident', (row) => row.confident], ['top always', (row) => row.top]] : [['top always', (row) => row.top]];
    for (const [mode, pick] of modes) {
      const s = scoreRows('foresight', mine.map((row) => ({ predicted: pick(row), inducing: row.inducing })), 0);
      console.log(`| ${p.path} | ${v.name} | ${mode} | ${s.fixes} | ${f(s.precision)} | ${f(s.recall)} | ${f(s.f1)} | ${secs} |`);
    }
  }
}

