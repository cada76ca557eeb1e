/**
 * An agent's predictions in the SWE-bench format (JSONL: `instance_id`, `model_name_or_path`,
 * `model_patch`), or the gold ones (each row's own `patch`, PR1's source diff).
 */
import { z } from 'zod';
import { ForesightError } from '../../core/foundation/errors.ts';
import { parseLine, readJsonLines } from './read-jsonl.ts';
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

/** The predictions of `path`, by instance id; a bad line or a duplicate id names its line. */
export async function readPredictions(path: string): Promise<Map<string, Prediction>> {
  const out = new Map<string, Prediction & { line: number }>();
  for (const l of await readJsonLines(path, 'predictions', REMEDY)) {
    const p = parseLine(PredictionSchema, l, path, REMEDY);
    const seen = out.get(p.instance_id);
    if (seen) {
      throw new ForesightError(`${path}:${l.line}: instance ${p.instance_id} was already predicted on line ${seen.line}`, {
        remedy: 'keep one prediction per instance_id',
      });
    }
    out.set(p.instance_id, { ...p, line: l.line });
  }
  if (out.size === 0) throw new ForesightError(`${path} holds no prediction`, { remedy: REMEDY });
  return new Map([...out].map(([id, { line: _line, ...p }]) => [id, p]));
}

/** Each row's own patch as its prediction. */
export function goldPredictions(rows: readonly EvalRow[]): Map<string, Prediction> {
  return new Map(rows.map((r) => [r.instance_id, { instance_id: r.instance_id, model_name_or_path: GOLD_MODEL, model_patch: r.patch }]));
}
