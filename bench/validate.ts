/**
 * Benchmark: validate's repeat strategies in one run, on the same extracted chains: `all`
 * (every state `runs` times, the old strategy), `candidates` (each state once, then only the tests that
 * can still be in a set; the default) and `gated` (the same, no repeat for an excluded chain). Per strategy: median wall seconds per validated chain, state runs
 * and runner starts per chain (a runner that runs repeats as passes of one process starts fewer times),
 * wall against in-container time; then whether the sets agree.
 *
 *   make bench-validate [CLONE=/path/to/clone REPO=owner/name]   (default: the generated demo)
 *   node_modules/.bin/tsx bench/validate.ts --clone ~/src/django --repo django/django --since 2023-05-01 --until 2023-08-01 [--jobs 1] [--strategies candidates,gated,all] [--data /tmp/dir]
 *
 * Before any strategy is timed, one untimed validate pass (every state once) builds the window's env
 * images: every strategy then runs on equal terms, and the images built per chain are reported apart.
 */
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { stageDir } from '../core/foundation/artifacts.ts';
import { loadConfig } from '../core/foundation/config.ts';
import { runnerExecCounts } from '../core/env/index.ts';
import { runPipeline } from '../pipeline/pipeline.ts';
import { mineWindow } from './window.ts';

const { values } = parseArgs({
  options: {
    clone: { type: 'string' },
    repo: { type: 'string' },
    jobs: { type: 'string' },
    since: { type: 'string' },
    until: { type: 'string' },
    keep: { type: 'boolean' },
    // Where the mined data and each pass's rows go (kept); default: a temporary directory, removed unless --keep.
    data: { type: 'string' },
    // e.g. `--strategies candidates` to skip the others on a long window (`all` is the baseline of the ratios).
    strategies: { type: 'string', default: 'candidates,gated,all' },
  },
});
const STRATEGIES = ['candidates', 'gated', 'all'] as const;
type Strategy = (typeof STRATEGIES)[number];
const wanted = values.strategies.split(',').map((s) => s.trim());
const unknown = wanted.filter((s) => !(STRATEGIES as readonly string[]).includes(s));
if (unknown.length || wanted.length === 0) {
  console.error(`bench-validate: unknown strategy ${unknown.join(', ') || '(none)'}; pass --strategies with some of ${STRATEGIES.join(', ')}`);
  process.exit(2);
}
const work = values.data ? resolve(values.data) : await mkdtemp(join(tmpdir(), 'foresight-bench-validate-'));
if (values.data) await mkdir(work, { recursive: true });
const { repo, clone, dataRoot, log, env } = await mineWindow({
  work,
  clone: values.clone, repo: values.repo, since: values.since, until: values.until,
  env: values.jobs ? { FORESIGHT_JOBS: values.jobs } : {},
});
const base = { dataRoot, repo: { name: repo, clone }, log };

type Row = { instance_id: string; cost: { execMs: number; wallMs: number; containerStarts: number } | null; excluded: { reason: string } | null } & Record<string, unknown>;
const SETS = ['FAIL_TO_PASS', 'PASS_TO_PASS', 'p2p_excluded_gold_fail', 'PR2_FAIL_TO_PASS', 'PR2_PASS_TO_PASS', 'ANTICIPATION_FAIL_TO_PASS'];
const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? 0 : s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

// Untimed: every state once, which builds every env image the window needs.
const warm = loadConfig({ ...env, FORESIGHT_RUNS: '1', FORESIGHT_REPEAT: 'candidates' });
const w0 = performance.now();
await runPipeline({ ...base, config: warm, only: 'validate', force: true });
const warmStats = (JSON.parse(await readFile(join(stageDir(dataRoot, repo, 'validate'), 'manifest.json'), 'utf8')) as { stats: Record<string, number> }).stats;
const warmRows = (await readFile(join(stageDir(dataRoot, repo, 'validate'), 'items.jsonl'), 'utf8')).trim().split('\n').filter(Boolean).map((l) => JSON.parse(l) as Row);
const warmValidated = Math.max(1, warmRows.filter((r) => r.cost !== null).length);
const warmUp = { wallS: (performance.now() - w0) / 1000, images: warmStats.images_built ?? 0, perChain: (warmStats.images_built ?? 0) / warmValidated };

async function pass(repeat: Strategy) {
  const config = loadConfig({ ...env, FORESIGHT_REPEAT: repeat });
  const before = { ...runnerExecCounts };
  const t0 = performance.now();
  await runPipeline({ ...base, config, only: 'validate', force: true });
  const wall = performance.now() - t0;
  const starts = runnerExecCounts.starts - before.starts;
  const dir = stageDir(dataRoot, repo, 'validate');
  const { stats } = JSON.parse(await readFile(join(dir, 'manifest.json'), 'utf8')) as { stats: Record<string, number> };
  const rows = (await readFile(join(dir, 'items.jsonl'), 'utf8')).trim().split('\n').filter(Boolean).map((l) => JSON.parse(l) as Row);
  const validated = rows.filter((r) => r.cost !== null);
  const n = Math.max(1, validated.length);
  return {
    repeat,
    runs: config.validate.runs,
    jobs: config.validate.jobs,
    chains: rows.length,
    validated: validated.length,
    gradeable: stats.gradeable ?? 0,
    wallS: wall / 1000,
    medianChainS: median(validated.map((r) => r.cost!.wallMs)) / 1000,
    medianExecS: median(validated.map((r) => r.cost!.execMs)) / 1000,
    stateRunsPerChain: (stats.state_runs ?? 0) / n,
    // Counted in this process: zero when chains ran on a queue's workers.
    runnerStartsPerChain: starts / n,
    imagesPerChain: (stats.images_built ?? 0) / n,
    ratio: wall / Math.max(1, stats.exec_ms ?? 1),
    rows: new Map(rows.map((r) => [r.instance_id, r])),
  };
}

const passes: Array<Awaited<ReturnType<typeof pass>>> = [];
for (const st of STRATEGIES) if (wanted.includes(st)) passes.push(await pass(st));
const old = passes.find((p) => p.repeat === 'all') ?? null;
const first = passes[0]!;
console.log(`repository: ${repo}${values.since || values.until ? ` (fixes ${values.since ?? '…'} to ${values.until ?? '…'})` : ''}; chains: ${first.chains}, validated in containers: ${first.validated}; runs: ${first.runs}; jobs: ${first.jobs}`);
console.log(`env images built before timing: ${warmUp.images} (${warmUp.perChain.toFixed(2)}/chain), in an untimed pass of every state once (${warmUp.wallS.toFixed(1)} s)`);
console.log('| strategy | median s/chain | median in-container s/chain | state runs/chain | runner starts/chain | images built/chain | validate wall | wall/in-container | gradeable |');
console.log('|---|---|---|---|---|---|---|---|---|');
for (const p of [...passes].reverse()) {
  const name = { all: `all (${p.runs} runs everywhere, the old strategy)`, candidates: 'candidates (the new default)', gated: 'gated (candidates; no repeat of an excluded chain)' }[p.repeat];
  console.log(`| ${name} | ${p.medianChainS.toFixed(1)} | ${p.medianExecS.toFixed(1)} | ${p.stateRunsPerChain.toFixed(1)} | ${p.runnerStartsPerChain.toFixed(1)} | ${p.imagesPerChain.toFixed(2)} | ${p.wallS.toFixed(1)} s | ${p.ratio.toFixed(2)} | ${p.gradeable} |`);
}
const others = passes.filter((p) => p.repeat !== 'all');
if (old) for (const p of others) console.log(`median wall per chain, ${p.repeat}: ${(p.medianChainS / Math.max(0.001, old.medianChainS)).toFixed(2)}× the old strategy's`);
// The sets must agree, except where a flaky test happened to run uniformly in one pass (random by nature);
// gated's excluded rows rest on fewer runs, so only its exclusions and its test rows are compared.
for (const p of old ? others : []) {
  const differ: string[] = [];
  for (const [id, a] of old!.rows) {
    const b = p.rows.get(id);
    const setsCompared = p.repeat === 'candidates' || a.excluded === null;
    const same = b !== undefined && (a.excluded === null) === (b.excluded === null) && (!setsCompared || (SETS.every((s) => JSON.stringify(a[s]) === JSON.stringify(b[s])) && a.excluded?.reason === b.excluded?.reason));
    if (!same) differ.push(id);
  }
  const flaky = [...new Set([...old!.rows.values(), ...p.rows.values()].flatMap((r) => r.flaky_tests as string[]))];
  console.log(`${p.repeat} against all: ${p.repeat === 'gated' ? 'exclusions, and the sets of rows not excluded,' : 'sets and exclusion reasons'} identical for ${old!.rows.size - differ.length}/${old!.rows.size} chains${differ.length ? ` (differ: ${differ.join(', ')}; flaky tests seen: ${flaky.join(', ') || 'none'})` : ''}`);
}
if (values.keep || values.data) console.log(`artifacts kept in ${work}`);
else await rm(work, { recursive: true, force: true });
