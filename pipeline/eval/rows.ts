/**
 * The rows `foresight eval` grades: `<dataset>/jsonl/<split>.jsonl` of an emitted dataset. List fields
 * are JSON-encoded strings (the dataset card); `grading_bundle` is a JSON string (core/env/container/grade.ts).
 * In `verified` only gradeable rows carry what grading needs; the others are listed and skipped.
 */
import { join } from 'node:path';
import { z } from 'zod';
import { backends, DEFAULT_BACKEND, GradingBundleSchema, runners } from '../../core/env/index.ts';
import { parseLine, readJsonLines } from './read-jsonl.ts';

export const SPLITS = ['test', 'verified'] as const;
export type Split = (typeof SPLITS)[number];

/** A JSON-encoded value inside a string column, checked with `schema`. */
function jsonString<T extends z.ZodType>(schema: T) {
  return z.string().transform((s, ctx): z.infer<T> => {
    let raw: unknown;
    try {
      raw = JSON.parse(s);
    } catch {
      ctx.addIssue({ code: 'custom', message: 'is not a JSON-encoded value' });
      return z.NEVER;
    }
    const parsed = schema.safeParse(raw);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      ctx.addIssue({ code: 'custom', message: `${issue?.path.join('.') || 'value'}: ${issue?.message}` });
      return z.NEVER;
    }
    return parsed.data;
  });
}

const TestList = jsonString(z.array(z.string()));

export const EvalRowSchema = z.object({
  instance_id: z.string().min(1),
  docker_image: z.string().min(1),
  runner: z.string().refine((r) => runners.has(r), { message: `must be one of: ${[...runners.keys()].join(', ')}` }),
  base_commit: z.string().regex(/^[0-9a-f]{40}$/, 'must be a 40-hex sha'),
  patch: z.string(),
  FAIL_TO_PASS: TestList,
  PASS_TO_PASS: TestList,
  ANTICIPATION_FAIL_TO_PASS: TestList,
  grading_bundle: jsonString(GradingBundleSchema),
  /** The database backend the row was validated on: its service runs next to the eval image (absent in older datasets: sqlite). */
  db_backend: z.string().refine((b) => backends.has(b), { message: `must be one of: ${[...backends.keys()].join(', ')}` }).default(DEFAULT_BACKEND),
});
export type EvalRow = z.infer<typeof EvalRowSchema>;

export interface DatasetRows {
  path: string;
  /** The rows to grade. */
  rows: EvalRow[];
  /** Rows of `verified` that are not gradeable: never graded. */
  notGradeable: string[];
  /** Every instance id of the split (a prediction naming another is an error). */
  ids: Set<string>;
}

const REMEDY = 'emit the dataset again (foresight emit --force) with a foresight that writes eval rows';

/** The split's JSONL file of an emitted dataset. */
export function splitPath(dataset: string, split: Split): string {
  return join(dataset, 'jsonl', `${split}.jsonl`);
}

export async function readRows(dataset: string, split: Split): Promise<DatasetRows> {
  const path = splitPath(dataset, split);
  const rows: EvalRow[] = [];
  const notGradeable: string[] = [];
  const ids = new Set<string>();
  for (const l of await readJsonLines(path, `the ${split} split`, `pass --dataset <the emitted dataset folder> (it holds jsonl/${split}.jsonl)`)) {
    const id = parseLine(z.object({ instance_id: z.string().min(1), gradeable: z.boolean().optional() }), l, path, REMEDY);
    ids.add(id.instance_id);
    if (split === 'verified' && id.gradeable !== true) {
      notGradeable.push(id.instance_id);
      continue;
    }
    rows.push(parseLine(EvalRowSchema, l, path, REMEDY));
  }
  return { path, rows, notGradeable, ids };
}
