import { join } from 'node:path';
import { z } from 'zod';
import { readJsonl, stageDir } from '../core/artifacts.ts';

const Row = z.object({
  instance_id: z.string(),
  mining_category: z.string(),
  gradeable: z.boolean(),
  excluded: z.boolean(),
  exclusion_reason: z.string().nullable(),
  FAIL_TO_PASS: z.string(),
  PASS_TO_PASS: z.string(),
  ANTICIPATION_FAIL_TO_PASS: z.string(),
});

/** A table of the emitted chains, for the terminal. */
export async function summarize(dataRoot: string, repo: string): Promise<string> {
  const dir = stageDir(dataRoot, repo, 'emit');
  const rows = await readJsonl(join(dir, 'items.jsonl'), Row.loose());
  const n = (s: string): number => (JSON.parse(s) as unknown[]).length;
  const header = ['instance_id', 'found by', 'F2P', 'P2P', 'ANTI', 'result'];
  const body = rows.map((r) => [
    r.instance_id,
    r.mining_category,
    String(n(r.FAIL_TO_PASS)),
    String(n(r.PASS_TO_PASS)),
    String(n(r.ANTICIPATION_FAIL_TO_PASS)),
    r.excluded ? `excluded: ${r.exclusion_reason}` : 'in test split',
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((b) => b[i]!.length)));
  const fmt = (cells: string[]): string => cells.map((c, i) => c.padEnd(widths[i]!)).join('  ').trimEnd();
  const inTest = rows.filter((r) => !r.excluded).length;
  return [
    fmt(header),
    fmt(widths.map((w) => '-'.repeat(w))),
    ...body.map(fmt),
    '',
    `${inTest} chain(s) in the test split, ${rows.length} in verified. Dataset: ${join(dir, 'hf')}`,
  ].join('\n');
}
