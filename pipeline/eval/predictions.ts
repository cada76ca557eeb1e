/**
 * An agent's predictions in the SWE-bench format (JSONL or one JSON list of `instance_id`,
 * `model_name_or_path`, `model_patch`), or the gold ones (each row's own `patch`, PR1's source diff).
 */
import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import { ForesightError } from '../../core/foundation/errors.ts';
import { firstIssue, jsonLines } from './read-jsonl.ts';
import type { EvalRow } from './rows.ts';

export const PredictionSchema = z.object({
  instance_id: z.string().min(1),
  model_name_or_path: z.string().min(1),
  /** SWE-bench writes null (or omits it) when the agent produced no patch: an empty prediction. */
  model_patch: z
    .string()
    .nullish()
    .transform((p) => p ?? ''),
});
export type Prediction = z.infer<typeof PredictionSchema>;

/** The model name of `--gold` predictions. */
export const GOLD_MODEL = 'gold';

const REMEDY = 'fix the line: one JSON object per line with instance_id, model_name_or_path and model_patch (SWE-bench format)';
const LIST_REMEDY = 'fix the element: a JSON list of objects with instance_id, model_name_or_path and model_patch (SWE-bench format)';
const FILE_REMEDY = 'pass --predictions with the path of a SWE-bench predictions file (JSONL, or one JSON list)';

/** One prediction as found in the file: `at` prefixes its errors, `name` is how another entry refers to it. */
interface Entry {
  at: string;
  name: string;
  value: unknown;
}

/**
 * The predictions of `path`, by instance id. SWE-bench takes JSONL or one JSON list of the same objects,
 * so a file starting with `[` is read as a list (errors name the 0-based element, as indexing it would),
 * anything else as JSONL (errors name the line). A duplicate id names both entries.
 */
export async function readPredictions(path: string): Promise<Map<string, Prediction>> {
  const text = await readText(path);
  const list = text.trimStart().startsWith('[');
  const remedy = list ? LIST_REMEDY : REMEDY;
  const entries: Entry[] = list
    ? listEntries(text, path)
    : jsonLines(text, path, REMEDY).map((l) => ({ at: `${path}:${l.line}`, name: `line ${l.line}`, value: l.value }));
  const out = new Map<string, Prediction & { name: string }>();
  for (const e of entries) {
    const parsed = PredictionSchema.safeParse(e.value);
    if (!parsed.success) {
      const what = list ? ' is not a SWE-bench prediction:' : ':';
      throw new ForesightError(`${e.at}${what} ${firstIssue(parsed.error)}`, { remedy });
    }
    const p = parsed.data;
    const seen = out.get(p.instance_id);
    if (seen) {
      throw new ForesightError(`${e.at}: instance ${p.instance_id} was already predicted on ${seen.name}`, {
        remedy: 'keep one prediction per instance_id',
      });
    }
    out.set(p.instance_id, { ...p, name: e.name });
  }
  if (out.size === 0) throw new ForesightError(`${path} holds no prediction`, { remedy });
  return new Map([...out].map(([id, { name: _name, ...p }]) => [id, p]));
}

/** The file's text; a path that is missing or unreadable is the user's to fix, not a JSON problem. */
async function readText(path: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'does not exist' : `cannot be read (${code ?? (err as Error).message})`;
    throw new ForesightError(`predictions file ${path} ${why}`, { remedy: FILE_REMEDY, cause: err });
  }
}

/** The elements of a file holding one JSON list (possibly pretty-printed over many lines). */
function listEntries(text: string, path: string): Entry[] {
  // Valid JSON starting with [ is always a list.
  let value: unknown[];
  try {
    value = JSON.parse(text) as unknown[];
  } catch (err) {
    throw new ForesightError(`${path} starts with [ but is not a valid JSON list (${(err as Error).message})`, { remedy: LIST_REMEDY, cause: err });
  }
  return value.map((v, i) => ({ at: `${path}: element ${i}`, name: `element ${i}`, value: v }));
}

/** Each row's own patch as its prediction. */
export function goldPredictions(rows: readonly EvalRow[]): Map<string, Prediction> {
  return new Map(rows.map((r) => [r.instance_id, { instance_id: r.instance_id, model_name_or_path: GOLD_MODEL, model_patch: r.patch }]));
}
