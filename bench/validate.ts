/**
 * Benchmark: validate's wall time against the time spent running tests inside containers (the
 * baseline, measured in the same run; goal ≤ 1.25), container starts per chain, images built.
 *
 *   make bench-validate [CLONE=/path/to/clone REPO=owner/name]   (default: the generated demo)
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { stageDir } from '../core/artifacts.ts';
import { loadConfig } from '../core/config.ts';
import { createLogger } from '../core/log.ts';
import { runPipeline } from '../pipeline/pipeline.ts';
import { makeDemoRepo } from '../pipeline/demo/make-demo-repo.ts';
import { connectDocker } from '../core/env/index.ts';

const { values } = parseArgs({ options: { clone: { type: 'string' }, repo: { type: 'string' }, jobs: { type: 'string' } } });
const work = await mkdtemp(join(tmpdir(), 'foresight-bench-validate-'));
const clone = values.clone ? resolve(values.clone) : join(work, 'demo');
if (!values.clone) await makeDemoRepo(clone);
const repo = values.repo ?? (values.clone ? 'bench/repo' : 'demo/minilib');
const env = { ...process.env, FORESIGHT_OFFLINE: '1', ...(values.jobs ? { FORESIGHT_JOBS: values.jobs } : {}) };
const config = loadConfig(env);
const log = createLogger({ level: 'warn' });
const dataRoot = join(work, 'data');
const opts = { dataRoot, repo: { name: repo, clone }, config, log };

for (const only of ['discover', 'szz', 'extract'] as const) await runPipeline({ ...opts, only });
const docker = connectDocker();
const imagesBefore = new Set((await docker.listImages()).map((i) => i.Id));
const t0 = performance.now();
await runPipeline({ ...opts, only: 'validate', force: true });
const wall = performance.now() - t0;
const built = (await docker.listImages()).filter((i) => !imagesBefore.has(i.Id)).length;

const dir = stageDir(dataRoot, repo, 'validate');
const manifest = JSON.parse(await readFile(join(dir, 'manifest.json'), 'utf8')) as { stats: Record<string, number> };
const st = manifest.stats;
const items = (await readFile(join(dir, 'items.jsonl'), 'utf8')).trim().split('\n').map((l) => JSON.parse(l) as { cost: unknown; env_image_pr1: string | null; env_image_pr2: string | null });
const validated = items.filter((i) => i.cost !== null);
const eras = new Set(validated.flatMap((i) => [i.env_image_pr1, i.env_image_pr2]).filter(Boolean)).size;
const chainsRun = Math.max(1, validated.length);
console.log(`repository: ${repo}; chains: ${st.chains}, validated in containers: ${validated.length}, runs per state: ${config.validate.runs}, jobs: ${config.validate.jobs}`);
console.log(`distinct environment images used: ${eras} (built in this run: see below)`);
console.log(`validate wall time: ${(wall / 1000).toFixed(1)} s`);
console.log(`in-container test time (baseline): ${((st.exec_ms ?? 0) / 1000).toFixed(1)} s`);
console.log(`ratio wall / in-container (goal ≤ 1.25 at jobs=1): ${(wall / Math.max(1, st.exec_ms ?? 1)).toFixed(2)}`);
console.log(`container starts per validated chain: ${((st.container_starts ?? 0) / chainsRun).toFixed(2)}`);
console.log(`images built during the run: ${built}`);
await rm(work, { recursive: true, force: true });
