/**
 * The rows `foresight eval` grades: `<dataset>/jsonl/<split>.jsonl` of an emitted dataset. List fields
 * are JSON-encoded strings (the dataset card); `grading_bundle` is a JSON string (core/env/container/grade.ts).
 * In `verified` and `funnel` only gradeable rows carry what grading needs; the others are listed and skipped.
 */
import { join } from 'node:path';
import { z } from 'zod';
import { backends, DEFAULT_BACKEND, GradingBundleSchema, runners } from '../../core/env/index.ts';
import { ForesightError } from '../../core/foundation/errors.ts';
import { parseIsoDate } from '../../core/foundation/config.ts';
import { parseLine, readJsonLines, type JsonlLine } from './read-jsonl.ts';

export const SPLITS = ['test', 'verified', 'funnel'] as const;
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
  /** Rows of `verified` or `funnel` that are not gradeable: never graded. */
  notGradeable: string[];
  /** Every instance id of the split (a prediction naming another is an error). */
  ids: Set<string>;
  /** What `--merged-after` left out; null without it. */
  window: MergedAfter | null;
}

/** The rows `--merged-after` left out: PR1 merged before `date`. They are neither graded nor listed as not gradeable. */
export interface MergedAfter {
  /** The flag's date, an ISO instant in UTC. */
  date: string;
  /** Rows of the split before the filter. */
  of: number;
  leftOut: string[];
  /** The gradeable rows among them (their checkpointed grades are kept). */
  leftOutRows: EvalRow[];
}

const REMEDY = 'emit the dataset again (foresight emit --force) with a foresight that writes eval rows';

/** The split's JSONL file of an emitted dataset. */
export function splitPath(dataset: string, split: Split): string {
  return join(dataset, 'jsonl', `${split}.jsonl`);
}

const RowHead = z.object({ instance_id: z.string().min(1), gradeable: z.boolean().optional(), created_at: z.string().optional() });

/**
 * The split's rows; with `mergedAfter` (an ISO instant) only those whose PR1 merged on or after it. The row's
 * `created_at` is PR1's merge date (the committer date of its mainline commit, as discover reads it).
 */
export async function readRows(dataset: string, split: Split, mergedAfter: string | null = null): Promise<DatasetRows> {
  const path = splitPath(dataset, split);
  const rows: EvalRow[] = [];
  const notGradeable: string[] = [];
  const ids = new Set<string>();
  const window: MergedAfter | null = mergedAfter === null ? null : { date: mergedAfter, of: 0, leftOut: [], leftOutRows: [] };
  const from = mergedAfter === null ? 0 : Date.parse(mergedAfter);
  let newest: { at: number; shown: string; id: string } | null = null;
  for (const l of await readJsonLines(path, `the ${split} split`, `pass --dataset <the emitted dataset folder> (it holds jsonl/${split}.jsonl)`)) {
    const head = parseLine(RowHead, l, path, REMEDY);
    ids.add(head.instance_id);
    const gradeable = split === 'test' || head.gradeable === true;
    if (window) {
      window.of++;
      const at = mergeTime(head.created_at, l, path);
      if (!newest || at > newest.at) newest = { at, shown: head.created_at!, id: head.instance_id };
      if (at < from) {
        window.leftOut.push(head.instance_id);
        if (gradeable) window.leftOutRows.push(parseLine(EvalRowSchema, l, path, REMEDY));
        continue;
      }
    }
    if (!gradeable) {
      notGradeable.push(head.instance_id);
      continue;
    }
    rows.push(parseLine(EvalRowSchema, l, path, REMEDY));
  }
  if (window && window.leftOut.length === window.of) {
    const day = newest ? new Date(newest.at).toISOString().slice(0, 10) : null;
    throw new ForesightError(
      `--merged-after ${shownDate(window.date)} leaves no row of the ${split} split: ${newest ? `its newest PR1 merged ${newest.shown} (${newest.id})` : `${path} holds no row`}`,
      { remedy: day ? `pass --merged-after ${day} or earlier, or leave the flag out to grade every row` : REMEDY },
    );
  }
  return { path, rows, notGradeable, ids, window };
}

/** A row's PR1 merge date as epoch ms, read as the flag is (a date-time without offset is UTC). */
function mergeTime(createdAt: string | undefined, l: JsonlLine, path: string): number {
  if (createdAt === undefined) {
    throw new ForesightError(`${path}:${l.line}: no created_at (PR1's merge date), which --merged-after reads`, { remedy: `${REMEDY}, or leave --merged-after out` });
  }
  try {
    return Date.parse(parseIsoDate({ name: 'created_at', flag: false }, createdAt));
  } catch {
    throw new ForesightError(`${path}:${l.line}: created_at ${JSON.stringify(createdAt)} is not an ISO date, which --merged-after needs`, { remedy: `${REMEDY}, or leave --merged-after out` });
  }
}

/** A `--merged-after` instant as the user most likely typed it: the day alone at midnight UTC. */
export function shownDate(iso: string): string {
  return iso.endsWith('T00:00:00.000Z') ? iso.slice(0, 10) : iso;
}
