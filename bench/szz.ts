/**
 * Benchmark: discover + szz on a repository's full history, against a plain B-SZZ baseline and
 * foresight's earlier blame-only attribution (whole history), run in the same process on the same
 * candidates. Optionally scores B-SZZ and foresight on an oracle (scripts/build-szz-oracle.ts).
 *
 *   make bench-szz CLONE=/path/to/clone [REPO=owner/name] [ORACLE=oracle.jsonl]
 *   (without CLONE: the generated demo repository)
 */
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
import { attributeFix, evaluateSzz, formatScores, readOracle, MetaChanges } from '../stages/szz/index.ts';

const { values } = parseArgs({ options: { clone: { type: 'string' }, repo: { type: 'string' }, oracle: { type: 'string' }, concurrency: { type: 'string' } } });
const work = await mkdtemp(join(tmpdir(), 'foresight-bench-'));
const clone = values.clone ? resolve(values.clone) : join(work, 'demo');
if (!values.clone) await makeDemoRepo(clone);
const repo = values.repo ?? (values.clone ? 'bench/repo' : 'demo/minilib');
const concurrency = Number(values.concurrency ?? 4);
const log = createLogger({ level: 'warn' });
const config = loadConfig({ ...process.env, FORESIGHT_OFFLINE: '1', FORESIGHT_SZZ_CONCURRENCY: String(concurrency) });

const t0 = performance.now();
await runPipeline({ dataRoot: join(work, 'data'), repo: { name: repo, clone }, config, log, only: 'discover' });
const t1 = performance.now();
await runPipeline({ dataRoot: join(work, 'data'), repo: { name: repo, clone }, config, log, only: 'szz' });
const t2 = performance.now();

// Baseline: plain B-SZZ (every deleted line, plain blame) on the same candidates, same concurrency.
const candidates = (await readJsonl(join(stageDir(join(work, 'data'), repo, 'discover'), 'items.jsonl'), CandidateSchema)).filter((c) => !c.excluded);
const queue = new PQueue({ concurrency });
const t3 = performance.now();
await Promise.all(candidates.map((c) => queue.add(() => attributeFix(clone, c.pr2, { variant: 'b-szz' }))));
const t4 = performance.now();

// What the szz stage ran before it ranked (blame of the fixed lines only, the whole history), for the ratio.
const meta = new MetaChanges(clone);
const t5 = performance.now();
await Promise.all(candidates.map((c) => queue.add(() => attributeFix(clone, c.pr2, { variant: 'foresight', meta, reportedAt: c.reportedAt, horizon: null }))));
const t6 = performance.now();

const s = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;
const ours = t2 - t0;
const baseline = t4 - t3;
console.log(`repository: ${repo} (${clone})`);
console.log(`candidates blamed: ${candidates.length}, concurrency ${concurrency}`);
console.log(`foresight discover: ${s(t1 - t0)}, szz: ${s(t2 - t1)}, discover+szz: ${s(ours)}`);
console.log(`B-SZZ baseline (blame only, same candidates): ${s(baseline)}`);
console.log(`ratio foresight discover+szz / B-SZZ: ${(ours / baseline).toFixed(2)}`);
console.log(`foresight blame-only, whole history (the szz stage before the horizon; same candidates): ${s(t6 - t5)}; szz stage / it: ${((t2 - t1) / (t6 - t5)).toFixed(2)}`);
if (values.oracle) {
  const oracle = await readOracle(values.oracle);
  const evals = [];
  for (const variant of ['b-szz', 'foresight'] as const) evals.push(await evaluateSzz({ clone, oracle, variant, concurrency }));
  console.log(formatScores(evals));
  console.log(`F1 ratio foresight / B-SZZ: ${(evals[1]!.all.f1 / Math.max(1e-9, evals[0]!.all.f1)).toFixed(2)}`);
}
await rm(work, { recursive: true, force: true });
