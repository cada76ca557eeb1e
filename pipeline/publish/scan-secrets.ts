import { createReadStream } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { containsSecret, redact } from '../../core/foundation/secrets.ts';
import type { DatasetFile } from './select-files.ts';

/**
 * The gate's third check: no registered secret (HF_TOKEN, GITHUB_TOKEN, the LLM key, URL credentials)
 * in what goes up, looked for twice: in each file's bytes (the card, the plots, parquet metadata) and
 * in every decoded cell (parquet pages are compressed, so a token in a cell is not in the bytes).
 * A finding names the place and the secret's name, never its value.
 */
export interface SecretFinding {
  /** `README.md line 12`, or `config funnel, split funnel, row minilib__4-11, column patch`. */
  where: string;
  /** The secret's label, e.g. `<HF_TOKEN>`. */
  secret: string;
}

/** The label `redact` puts where `text` holds a secret. */
function labelIn(text: string): string {
  const before = new Set(text.match(/<[^<>\n]{1,80}>/g) ?? []);
  const after = redact(text).match(/<[^<>\n]{1,80}>/g) ?? [];
  return after.find((l) => !before.has(l)) ?? 'a registered secret';
}

/** The first secret in a file's bytes (UTF-8; bytes that are not text cannot hide an ASCII token). */
async function scanFile(file: DatasetFile): Promise<SecretFinding | null> {
  const text = (await readFile(file.local)).toString('utf8');
  if (!containsSecret(text)) return null;
  const lines = text.split('\n');
  const at = lines.findIndex((l) => containsSecret(l));
  // A secret split across lines is still found by the whole-text check; it is then named by file.
  const where = at >= 0 ? `${file.path} line ${at + 1}` : file.path;
  return { where, secret: labelIn(at >= 0 ? lines[at]! : text) };
}

/** The first secret in the decoded rows (the dump loadWithDatasets wrote). */
async function scanRows(dump: string): Promise<SecretFinding | null> {
  const lines = createInterface({ input: createReadStream(dump, 'utf8'), crlfDelay: Infinity });
  try {
    for await (const line of lines) {
      if (!containsSecret(line)) continue;
      const { c, s, r } = JSON.parse(line) as { c: string; s: string; r: Record<string, unknown> };
      const column = Object.keys(r).find((k) => containsSecret(JSON.stringify(r[k]))) ?? 'a column';
      const id = typeof r.instance_id === 'string' ? r.instance_id : '?';
      return { where: `config ${c}, split ${s}, row ${id}, column ${column}`, secret: labelIn(JSON.stringify(r[column] ?? line)) };
    }
    return null;
  } finally {
    lines.close();
  }
}

export async function findSecret(files: readonly DatasetFile[], dump: string): Promise<SecretFinding | null> {
  for (const f of files) {
    const found = await scanFile(f);
    if (found) return found;
  }
  return scanRows(dump);
}
