/** The rows a mined dataset emitted, and `foresight eval` of one patch (or the gold one) on one of its `test` rows. */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type Docker from 'dockerode';
import type { GradeLimits } from '../../core/env/index.ts';
import { silentLogger } from '../../core/foundation/log.ts';
import { runEval } from '../../pipeline/eval/index.ts';

export type Row = Record<string, string | number | boolean | null>;

/** The split's rows from emit's JSON lines (`<hf>/jsonl/<split>.jsonl`). */
export async function emittedRows(hf: string, split: 'test' | 'verified' | 'funnel'): Promise<Row[]> {
  return (await readFile(join(hf, 'jsonl', `${split}.jsonl`), 'utf8')).split('\n').filter(Boolean).map((l) => JSON.parse(l) as Row);
}

/** The report of `foresight eval` on the `test` split with one prediction for `id` (its file written to `scratch`), or the gold patches. */
export async function evalOne(opts: { hf: string; id: string; who: string; patch: string | 'gold'; scratch: string; docker: Docker; limits: GradeLimits }) {
  const preds = join(opts.scratch, `${opts.who}.jsonl`);
  if (opts.patch !== 'gold') await writeFile(preds, JSON.stringify({ instance_id: opts.id, model_name_or_path: opts.who, model_patch: opts.patch }) + '\n');
  const { report } = await runEval({
    dataset: opts.hf, split: 'test', predictions: opts.patch === 'gold' ? 'gold' : { path: preds }, jobs: 1, docker: opts.docker, limits: opts.limits, log: silentLogger, signal: new AbortController().signal,
  });
  return report.instances.find((i) => i.instance_id === opts.id)!;
}
