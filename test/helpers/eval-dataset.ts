import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type Docker from 'dockerode';
import type { GradingBundle } from '../../core/env/index.ts';
import { defaultConfig } from '../../core/foundation/config.ts';
import { silentLogger } from '../../core/foundation/log.ts';
import { gradeLimits, type EvalOptions } from '../../pipeline/eval/index.ts';

/** Hand-made dataset folders for `foresight eval`'s tests: rows as emit writes them, in jsonl/<split>.jsonl. */
export const SHA = 'a'.repeat(40);

export const jsonl = (rows: readonly unknown[]): string => rows.map((r) => JSON.stringify(r)).join('\n') + '\n';
export const emptyBundle: GradingBundle = { version: 1, x: { files: [], run: [] }, y: { files: [], run: [] } };

/** A row as emit writes it (list fields and the bundle JSON-encoded), with the fields eval reads. */
export function row(id: string, over: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    instance_id: id,
    repo: 'test/evaltiny',
    docker_image: 'foresight-eval:none',
    runner: 'pytest',
    base_commit: SHA,
    patch: '',
    FAIL_TO_PASS: JSON.stringify(['tests/test_a.py::test_a']),
    PASS_TO_PASS: JSON.stringify([]),
    ANTICIPATION_FAIL_TO_PASS: JSON.stringify(['tests/test_b.py::test_b']),
    pr1_test_files: JSON.stringify(['tests/test_a.py']),
    anticipation_test_files: JSON.stringify(['tests/test_b.py']),
    grading_bundle: JSON.stringify(emptyBundle),
    ...over,
  };
}

/** `<root>/<name>` holding jsonl/<split>.jsonl for each split given. */
export async function datasetIn(root: string, name: string, splits: { test?: unknown[]; verified?: unknown[] }): Promise<string> {
  const dir = path.join(root, name);
  await mkdir(path.join(dir, 'jsonl'), { recursive: true });
  for (const [split, rows] of Object.entries(splits)) await writeFile(path.join(dir, 'jsonl', `${split}.jsonl`), jsonl(rows));
  return dir;
}

export function evalOptsWith(docker: Docker, dataset: string, predictions: EvalOptions['predictions'], over: Partial<EvalOptions> = {}): EvalOptions {
  return { dataset, split: 'test', predictions, jobs: 2, docker, limits: gradeLimits(defaultConfig().validate), log: silentLogger, signal: new AbortController().signal, ...over };
}
