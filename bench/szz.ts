/**
 * Benchmark: discover + szz on a repository's history, against a plain B-SZZ baseline run in the same
 * process on the same candidates, then the stage's per-fix work alone (attributeFix as the stage calls
 * it, within the horizon the stage chose). Each is timed in wall seconds and in CPU seconds (git's
 * processes and this one: what the machine's other load does not change). Optionally scores B-SZZ and
 * foresight on an oracle (scripts/build-szz-oracle.ts).
 *
 *   make bench-szz CLONE=/path/to/clone [REPO=owner/name] [ORACLE=oracle.jsonl]
 *   node_modules/.bin/tsx bench/szz.ts --clone /path/to/clone --repo owner/name --since 2023-01-01   # fixes of a window only
 *   (without a clone: the generated demo repository)
 */
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import PQueue from 'p-queue';
import { readJsonl, stageDir } from '../core/foundation/artifacts.ts';
import { loadConfig } from '../core/foundation/config.ts';
import { createLogger } from '../core/foundation/log.ts';
import { runPipeline } from '../pipeline/pipeline.ts';
import { makeDemoRepo } from '../pipeline/demo/make-demo-repo.ts';
import { CandidateSchema } from '../core/foundation/model/candidate.ts';
import { attributeFix, evaluateSzz, FixDiffs, fitRepository, formatScores, readOracle, MetaChanges, YEAR } from '../stages/szz/index.ts';
import { repoDataDir } from '../core/foundation/artifacts.ts';

const { values } = parseArgs({ options: { clone: { type: 'string' }, repo: { type: 'string' }, oracle: { type: 'string' }, concurrency: { type: 'string' }, since: { type: 'string' }, rounds: { type: 'string' } } });
const work = await mkdtemp(join(tmpdir(), 'foresight-bench-'));
const clone = values.clone ? resolve(values.clone) : join(work, 'demo');
if (!values.clone) await makeDemoRepo(clone);
const repo = values.repo ?? (values.clone ? 'bench/repo' : 'demo/minilib');
const concurrency = Number(values.concurrency ?? 4);
// The demo's few fixes take milliseconds: B-SZZ and the per-fix work run in turns, often enough to time.
const rounds = Number(values.rounds ?? (values.clone ? 1 : 25));
const log = createLogger({ level: 'warn' });
const config = loadConfig({ ...process.env, FORESIGHT_OFFLINE: '1', FORESIGHT_SZZ_CONCURRENCY: String(concurrency), ...(values.since ? { FORESIGHT_SINCE: values.since } : {}) });

/** CPU milliseconds of this process and of its waited-for children (git), from /proc: the machine's other load leaves it alone. */
function cpuMs(): number {
  const f = readFileSync('/proc/self/stat', 'utf8').split(') ')[1]!.split(' ');
  const u = process.cpuUsage();
  // Fields 16 and 17 of stat (cutime, cstime), in clock ticks of 10 ms.
  return (Number(f[13]) + Number(f[14])) * 10 + (u.user + u.system) / 1000;
}

const data = join(work, 'data');
const t0 = performance.now();
await runPipeline({ dataRoot: data, repo: { name: repo, clone }, config, log, only: 'discover' });
const t1 = performance.now();
const c1 = cpuMs();
await runPipeline({ dataRoot: data, repo: { name: repo, clone }, config, log, only: 'szz' });
const t2 = performance.now();
const c2 = cpuMs();

// Baseline: plain B-SZZ (every deleted line, plain blame) on the same candidates, same concurrency.
const candidates = (await readJsonl(join(stageDir(data, repo, 'discover'), 'items.jsonl'), CandidateSchema)).filter((c) => !c.excluded);
const queue = new PQueue({ concurrency });
const meta = new MetaChanges(clone);
const fit = await fitRepository(clone, { meta, cacheDir: repoDataDir(data, repo) });
await meta.classify(''); // the commit facts, read once per stage run: setup, not per fix
// The stage's per-fix work alone: its attribution of each candidate within the horizon it chose (cached by the stage run).
const timed = async (work: () => Promise<unknown>): Promise<{ wall: number; cpu: number }> => {
  const w = performance.now();
  const c = cpuMs();
  await work();
  return { wall: performance.now() - w, cpu: cpuMs() - c };
};
const bszz = { wall: 0, cpu: 0 };
const ours = { wall: 0, cpu: 0 };
for (let r = 0; r < rounds; r++) {
  const b = await timed(() => Promise.all(candidates.map((c) => queue.add(() => attributeFix(clone, c.pr2, { variant: 'b-szz' })))));
  // The stage reads its fixes' diffs in batches (FixDiffs): that read is timed here too.
  const f = await timed(() => {
    const diffs = new FixDiffs(clone, candidates.map((c) => c.pr2));
    return Promise.all(candidates.map((c) => queue.add(() => attributeFix(clone, c.pr2, { variant: 'foresight', meta, reportedAt: c.reportedAt, horizon: fit.horizon.horizon, diffs }))));
  });
  bszz.wall += b.wall / rounds;
  bszz.cpu += b.cpu / rounds;
  ours.wall += f.wall / rounds;
  ours.cpu += f.cpu / rounds;
}
const [t3, t4, c3, c4] = [0, bszz.wall, 0, bszz.cpu];
const [t5, t6, c5, c6] = [0, ours.wall, 0, ours.cpu];

const s = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;
const n = Math.max(1, candidates.length);
const perFix = (ms: number): string => `${(ms / n).toFixed(1)} ms`;
const h = fit.horizon;
console.log(`repository: ${repo} (${clone})${values.since ? `, fixes since ${values.since}` : ''}`);
console.log(`candidates blamed: ${candidates.length}, concurrency ${concurrency}; B-SZZ and the per-fix work: mean of ${rounds} round(s) in turns`);
console.log(`horizon: ${h.horizon === null ? 'whole history' : `${h.horizon / YEAR} years`} (${h.basis}, ${h.fixes} own fixes)`);
console.log(`| run | wall | CPU | CPU per fix |`);
console.log(`|---|---|---|---|`);
console.log(`| foresight discover | ${s(t1 - t0)} | | |`);
console.log(`| foresight szz stage (history, commit facts, horizon fit, blame) | ${s(t2 - t1)} | ${s(c2 - c1)} | ${perFix(c2 - c1)} |`);
console.log(`| B-SZZ baseline, same candidates | ${s(t4 - t3)} | ${s(c4 - c3)} | ${perFix(c4 - c3)} |`);
console.log(`| foresight per-fix work alone (the stage's attribution, same candidates) | ${s(t6 - t5)} | ${s(c6 - c5)} | ${perFix(c6 - c5)} |`);
console.log(`ratio szz stage / B-SZZ: wall ${((t2 - t1) / (t4 - t3)).toFixed(2)}, CPU ${((c2 - c1) / (c4 - c3)).toFixed(2)}`);
console.log(`ratio foresight per fix / B-SZZ per fix: wall ${((t6 - t5) / (t4 - t3)).toFixed(2)}, CPU ${((c6 - c5) / (c4 - c3)).toFixed(2)}`);
console.log(`ratio discover+szz / B-SZZ (wall): ${((t2 - t0) / (t4 - t3)).toFixed(2)}`);
if (values.oracle) {
  const oracle = await readOracle(values.oracle);
  const evals = [];
  for (const variant of ['b-szz', 'foresight'] as const) evals.push(await evaluateSzz({ clone, oracle, variant, concurrency }));
  console.log(formatScores(evals));
  console.log(`F1 ratio foresight / B-SZZ: ${(evals[1]!.all.f1 / Math.max(1e-9, evals[0]!.all.f1)).toFixed(2)}`);
}
await rm(work, { recursive: true, force: true });
