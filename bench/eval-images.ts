/**
 * Benchmark: eval images (tier 3) of an emitted dataset's `test` rows, each built fresh with the full
 * history and with a depth-1 store (build seconds, goal ≤ 10 s per image; size added over the env
 * image), and the gold check in each: the row's own patch graded as `foresight eval --gold` grades it
 * (X must be 100 %, Y 0 %, no PASS_TO_PASS regression). No ratio: the env image's own build is not
 * part of this run, so the seconds are absolute.
 *
 *   make bench-eval-images DATASET=data/<owner>__<name>/emit/hf CLONE=/path/to/clone
 */
import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { loadConfig } from '../core/foundation/config.ts';
import { ForesightError } from '../core/foundation/errors.ts';
import {
  connectDocker,
  ensureEvalImage,
  EVAL_HISTORIES,
  getRunner,
  gradeInstance,
  gradeLimits,
  loadRecipe,
  type EvalHistory,
  type EvalImageResult,
} from '../core/env/index.ts';
import { goldPredictions, GOLD_MODEL, instanceReport, readRows, type InstanceReport } from '../pipeline/eval/index.ts';
import { parseLine, readJsonLines } from '../pipeline/eval/read-jsonl.ts';
import { goldProblem } from '../stages/emit/index.ts';

const { values } = parseArgs({ options: { dataset: { type: 'string' }, clone: { type: 'string' }, keep: { type: 'boolean', default: false } } });
if (!values.dataset || !values.clone) {
  throw new ForesightError('bench/eval-images.ts needs --dataset and --clone', {
    remedy: 'make bench-eval-images DATASET=data/<owner>__<name>/emit/hf CLONE=/path/to/the/clone the dataset was mined from',
  });
}
const dataset = resolve(values.dataset);
const clone = resolve(values.clone);
const config = loadConfig();
const docker = connectDocker(config.docker.host);
const limits = gradeLimits(config.validate);
const ac = new AbortController();
// An interrupted grading removes its container (gradeInstance and ensureEvalImage honour the signal).
for (const sig of ['SIGINT', 'SIGTERM'] as const) process.once(sig, () => ac.abort(new Error(`interrupted by ${sig}`)));

// A test row lacks what its build needs (the PR1 era's env image, the head the recipe is read at): its verified row has it.
const VerifiedSchema = z.object({ instance_id: z.string(), repo: z.string(), pr1_head_sha: z.string(), env_image_pr1: z.string() });
const verifiedPath = join(dataset, 'jsonl', 'verified.jsonl');
const remedy = 'pass --dataset <the emitted dataset folder> (data/<owner>__<name>/emit/hf)';
const verified = new Map(
  (await readJsonLines(verifiedPath, 'the verified config', remedy)).map((l) => {
    const v = parseLine(VerifiedSchema, l, verifiedPath, remedy);
    return [v.instance_id, v] as const;
  }),
);
const { rows } = await readRows(dataset, 'test');
const gold = goldPredictions(rows);

/** The eval image built fresh: a tag left from an earlier build is removed first (its env image stays). */
async function freshBuild(opts: Parameters<typeof ensureEvalImage>[0]): Promise<Extract<EvalImageResult, { kind: 'ready' }>> {
  let res = await ensureEvalImage(opts);
  if (res.kind === 'ready' && !res.built) {
    await docker.getImage(res.image).remove();
    res = await ensureEvalImage(opts);
  }
  if (res.kind === 'failed') throw new ForesightError(`${res.image}: build failed: ${res.detail.trim().split('\n').pop()}`, { remedy: `read ${res.log}` });
  if (!res.built) throw new ForesightError(`${res.image} was reused after its tag was removed`, { remedy: 'another process is building eval images: rerun when it is done' });
  return res;
}

/** The build log's own summary line: commits, objects and KiB of /testbed/.git. */
async function storeLine(logPath: string | null): Promise<string> {
  const text = logPath ? await readFile(logPath, 'utf8').catch(() => '') : '';
  const m = /\[foresight\] (\d+) commit\(s\), (\d+) objects, (\d+) KiB of git store/.exec(text);
  return m ? `${m[1]} commit${m[1] === '1' ? '' : 's'}, ${(Number(m[3]) / 1024).toFixed(1)} MiB` : '?';
}

interface Measure {
  image: string;
  seconds: number;
  addedMB: number;
  store: string;
  gold: InstanceReport;
  gate: string | null;
}

const fmtScore = (s: InstanceReport['x']): string => (s.kind === 'scored' ? `${s.passed}/${s.total}` : s.kind);
const pct = (v: number | null): string => (v === null ? '-' : `${Math.round(v * 100)}%`);
const results: Array<{ id: string; env: string; same: boolean; m: Record<EvalHistory, Measure> }> = [];
const built: string[] = [];

console.log(`dataset: ${dataset} (${rows.length} test rows); clone: ${clone}; grading limits: ${JSON.stringify(limits)}`);
for (const row of rows) {
  const v = verified.get(row.instance_id);
  if (!v) throw new ForesightError(`${row.instance_id} is in test.jsonl but not in verified.jsonl`, { remedy: 'emit the dataset again (foresight emit --force)' });
  const envImage = v.env_image_pr1 || config.validate.image;
  if (!envImage) throw new ForesightError(`${row.instance_id} names no env image (env_image_pr1)`, { remedy: 'set FORESIGHT_IMAGE to the image validation used' });
  // As emit does: the PR1 era's recipe, whose test environment is baked into the image.
  const { recipe } = await loadRecipe(v.repo, clone, v.pr1_head_sha);
  const runner = getRunner(row.runner);
  const m = {} as Record<EvalHistory, Measure>;
  for (const history of EVAL_HISTORIES) {
    const res = await freshBuild({
      docker, clone, envImage, baseCommit: row.base_commit, runner, history, testEnv: recipe.env, signal: ac.signal, lockDir: config.images.lockDir,
    });
    built.push(res.image);
    const graded = await gradeInstance({
      docker, image: res.image, runner, patch: gold.get(row.instance_id)!.model_patch, bundle: row.grading_bundle,
      f2p: row.FAIL_TO_PASS, p2p: row.PASS_TO_PASS, anti: row.ANTICIPATION_FAIL_TO_PASS, limits, signal: ac.signal,
    });
    const rep = instanceReport(row.instance_id, GOLD_MODEL, graded);
    m[history] = { image: res.image, seconds: res.durationMs / 1000, addedMB: res.addedBytes / 1e6, store: await storeLine(res.log), gold: rep, gate: goldProblem(graded)?.detail ?? null };
    console.log(
      `${row.instance_id} ${history}: ${res.image} built in ${m[history].seconds.toFixed(1)} s, +${m[history].addedMB.toFixed(1)} MB (${m[history].store}); ` +
        `gold X ${pct(rep.X)} (${fmtScore(rep.x)}), Y ${pct(rep.Y)} (${fmtScore(rep.y)}), P2P regressions ${rep.p2p_regressions?.length ?? '-'}: ${m[history].gate ?? 'gate passed'}`,
    );
  }
  results.push({ id: row.instance_id, env: envImage, same: m.full.image === row.docker_image, m });
}

// Markdown, as bench/README.md records it.
const gateCell = (x: Measure): string => `${pct(x.gold.X)} / ${pct(x.gold.Y)} (${fmtScore(x.gold.x)}, ${fmtScore(x.gold.y)}), P2P reg. ${x.gold.p2p_regressions?.length ?? '-'}${x.gate ? ' **FAILED**' : ''}`;
console.log('\n| instance_id | env image | build s (full / depth1) | added MB (full / depth1) | .git (full / depth1) | gold X / Y, full | gold X / Y, depth1 | row names the full image |');
console.log('|---|---|---|---|---|---|---|---|');
for (const r of results) {
  const { full, depth1 } = r.m;
  console.log(
    `| ${r.id} | ${r.env} | ${full.seconds.toFixed(1)} / ${depth1.seconds.toFixed(1)} | ${full.addedMB.toFixed(1)} / ${depth1.addedMB.toFixed(1)} | ${full.store} / ${depth1.store} | ${gateCell(full)} | ${gateCell(depth1)} | ${r.same ? 'yes' : 'no'} |`,
  );
}
const all = results.flatMap((r) => EVAL_HISTORIES.map((h) => r.m[h]));
const over = all.filter((x) => x.seconds > 10).length;
const failed = results.filter((r) => EVAL_HISTORIES.some((h) => r.m[h].gate));
console.log(`\n${all.length} images built; goal <= 10 s per image: ${all.length - over}/${all.length} met (slowest ${Math.max(0, ...all.map((x) => x.seconds)).toFixed(1)} s)`);
console.log(`gold gate: ${results.length - failed.length}/${results.length} rows pass in both history modes`);
for (const r of failed) for (const h of EVAL_HISTORIES) if (r.m[h].gate) console.log(`  ${r.id} (${h}): ${r.m[h].gate}`);

// The depth-1 images name no row (a dataset emitted with depth1 would build its own): not kept unless asked.
if (!values.keep) {
  const names = new Set(rows.map((r) => r.docker_image));
  for (const image of built.filter((i) => !names.has(i))) await docker.getImage(image).remove().catch(() => undefined);
}
if (failed.length) process.exitCode = 1;
