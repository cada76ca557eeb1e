import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { contentFingerprint, readJsonl, readManifest } from '../../core/foundation/artifacts.ts';

/**
 * The gate's first check: every row of the `test` split about to be uploaded passed emit's gold
 * self-check, as emit recorded it in its artifact (emit/items.jsonl: every chain, the `funnel` rows). Emit grades
 * a gradeable chain's own patch in its eval image and excludes the chain when X ≠ 100 %, Y ≠ 0 % or a
 * PASS_TO_PASS test regresses, or when the image could not be built; so a row recorded gradeable, not
 * excluded and on its eval image (tier 3) is one whose gold check ran and passed. The record is trusted
 * only when it is emit's own: items.jsonl must hash to what emit's manifest says it wrote.
 */

/** What the check reads of a chain's record (a `funnel` row). */
const GoldRecordSchema = z.object({
  instance_id: z.string(),
  gradeable: z.boolean(),
  excluded: z.boolean(),
  exclusion_reason: z.string().nullable(),
  exclusion_detail: z.string().nullable(),
  image_tier: z.string(),
});
type GoldRecord = z.infer<typeof GoldRecordSchema>;

export type GoldOutcome = { kind: 'passed'; rows: number } | { kind: 'refused'; message: string; remedy: string };

const RERUN = 'rerun emit (foresight emit --repo <owner/name> --force) so the test split holds only rows that passed it, then publish again';

/** Why `rec` is not a recorded pass, or null when it is one. */
function notPassed(id: string, rec: GoldRecord | undefined): string | null {
  if (!rec) return `${id} (emit recorded no such chain)`;
  if (rec.excluded) return `${id} (excluded: ${rec.exclusion_reason ?? 'no reason'}${rec.exclusion_reason === 'gold_check_failed' && rec.exclusion_detail ? `, ${rec.exclusion_detail}` : ''})`;
  if (!rec.gradeable) return `${id} (not gradeable: no gold self-check ran)`;
  if (rec.image_tier !== '3') return `${id} (no eval image: no gold self-check ran)`;
  return null;
}

export async function checkGold(opts: { emitDir: string; testIds: ReadonlyArray<string | null> }): Promise<GoldOutcome> {
  const items = join(opts.emitDir, 'items.jsonl');
  const manifest = await readManifest(opts.emitDir);
  let text: string | null = null;
  try {
    text = await readFile(items, 'utf8');
  } catch {
    text = null;
  }
  if (!manifest || manifest.stage !== 'emit' || text === null) {
    return {
      kind: 'refused',
      message: `no record of emit's gold self-check at ${opts.emitDir} (items.jsonl and manifest.json of the emit stage)`,
      remedy: 'publish the dataset folder emit wrote (data/<owner>__<name>/emit/hf, beside its items.jsonl), or rerun foresight emit',
    };
  }
  if (contentFingerprint(text) !== manifest.output) {
    return { kind: 'refused', message: `${items} changed after emit wrote it: its gold self-check record cannot be trusted`, remedy: RERUN };
  }
  const records = new Map((await readJsonl(items, GoldRecordSchema)).map((r) => [r.instance_id, r] as const));
  const problems = opts.testIds.map((id) => notPassed(id ?? '(a row without instance_id)', id === null ? undefined : records.get(id))).filter((p): p is string => p !== null);
  if (problems.length) {
    const shown = problems.slice(0, 3).join('; ') + (problems.length > 3 ? `; and ${problems.length - 3} more` : '');
    return { kind: 'refused', message: `${problems.length} test row(s) without a recorded gold self-check pass: ${shown}`, remedy: RERUN };
  }
  return { kind: 'passed', rows: opts.testIds.length };
}
