import { join } from 'node:path';
import { z } from 'zod';
import { existsSync } from 'node:fs';
import { readJsonl, stageDir } from '../core/foundation/artifacts.ts';
import { JudgedChainSchema, type JudgedChain } from '../core/foundation/model/judged.ts';

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

/** A table of the emitted chains (emit's artifact: every chain, the `funnel` rows), for the terminal. */
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
    r.excluded ? `excluded: ${r.exclusion_reason}` : 'in test and verified',
  ]);
  const inTest = rows.filter((r) => !r.excluded).length;
  const judged = await judgeTable(dataRoot, repo);
  return [
    ...table(header, body),
    '',
    `${inTest} chain(s) in the test split and the verified config, ${rows.length} in funnel. Dataset: ${join(dir, 'hf')}`,
    ...(judged.length ? ['', ...judged] : []),
  ].join('\n');
}

function table(header: string[], body: string[][]): string[] {
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((b) => b[i]!.length)));
  const fmt = (cells: string[]): string => cells.map((c, i) => c.padEnd(widths[i]!)).join('  ').trimEnd();
  return [fmt(header), fmt(widths.map((w) => '-'.repeat(w))), ...body.map(fmt)];
}

/** The LLM judges' verdicts per judged chain (empty when the offline rules judged): what each said, at what cost. */
async function judgeTable(dataRoot: string, repo: string): Promise<string[]> {
  const file = join(stageDir(dataRoot, repo, 'judge'), 'items.jsonl');
  if (!existsSync(file)) return [];
  const chains = (await readJsonl(file, JudgedChainSchema)).filter((c) => c.verdicts.judged_by === 'llm' && c.verdicts.eligibility);
  if (!chains.length) return [];
  const header = ['instance_id', 'eligibility', 'attr', 'pr1_code', 'clarity', 'task', 'fairness', 'leaks', 'pr2_code', 'severity', 'mode', 'eval_ready', 'tokens', 'calls'];
  const body = chains.map((c: JudgedChain) => {
    const v = c.verdicts;
    const j = c.judgement;
    const code = j.pr1_code_original && j.pr1_code !== j.pr1_code_original ? `${j.pr1_code_original}->${j.pr1_code}` : (j.pr1_code ?? '-');
    return [
      c.instance_id,
      v.eligibility?.verdict ?? '-',
      v.attribution?.code ?? '-',
      code,
      j.clarity_score === null ? '-' : String(j.clarity_score),
      j.pr1_task_type ?? '-',
      v.fairness.map((f) => (f.pass ? 'pass' : 'fail')).join('/') || '-',
      String(v.leaks.length + v.repairs.pr1.reduce((n, r) => n + r.leaks.length, 0)),
      j.pr2_spec_code ? `${j.pr2_spec_code}${j.pr2_spec_repaired ? ' (repaired)' : ''}` : '-',
      j.severity ?? '-',
      j.failure_mode ?? '-',
      j.eval_ready ? 'yes' : 'no',
      `${c.usage.prompt_tokens}+${c.usage.completion_tokens}`,
      String(c.usage.calls),
    ];
  });
  return ['Judgements (leaks: tokens the leak detector caught, in repairs included; tokens: prompt+completion):', ...table(header, body)];
}
