/** JSONL read line by line for `foresight eval`: every error names the file and the line. */
import { readFile } from 'node:fs/promises';
import type { z } from 'zod';
import { ForesightError } from '../../core/foundation/errors.ts';

export interface JsonlLine {
  /** 1-based line number in the file. */
  line: number;
  value: unknown;
}

/** The non-empty lines of `path` as JSON values; `what` names the file in errors ("predictions"). */
export async function readJsonLines(path: string, what: string, remedy: string): Promise<JsonlLine[]> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw new ForesightError(`${what} file ${path} cannot be read: ${(err as Error).message}`, { remedy, cause: err });
  }
  return jsonLines(text, path, remedy);
}

/** The non-empty lines of `text` (read from `path`) as JSON values. */
export function jsonLines(text: string, path: string, remedy: string): JsonlLine[] {
  const out: JsonlLine[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const raw = lines[i]!;
    if (!raw.trim()) continue;
    try {
      out.push({ line: i + 1, value: JSON.parse(raw) });
    } catch (err) {
      throw new ForesightError(`${path}:${i + 1} is not valid JSON (${(err as Error).message})`, { remedy, cause: err });
    }
  }
  return out;
}

/** `value` parsed with `schema`, or an error naming file, line and the first issue's field. */
export function parseLine<T>(schema: z.ZodType<T>, l: JsonlLine, path: string, remedy: string): T {
  const parsed = schema.safeParse(l.value);
  if (parsed.success) return parsed.data;
  throw new ForesightError(`${path}:${l.line}: ${firstIssue(parsed.error)}`, { remedy });
}

/** The first issue of a failed parse, prefixed with its field when it has one. */
export function firstIssue(error: z.ZodError): string {
  const issue = error.issues[0];
  const field = issue?.path.length ? `${issue.path.join('.')}: ` : '';
  return `${field}${issue?.message ?? 'invalid'}`;
}
