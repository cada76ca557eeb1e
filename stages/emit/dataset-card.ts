import { EXCLUSION_REASONS, type ExclusionReason } from '../../core/model/change.ts';

export interface CardInput {
  repo: string;
  testRows: ReadonlyArray<Record<string, unknown>>;
  verifiedRows: ReadonlyArray<Record<string, unknown>>;
  foresightVersion: string;
}

function countBy(rows: ReadonlyArray<Record<string, unknown>>, key: string): Map<string, number> {
  const m = new Map<string, number>();
  for (const r of rows) {
    const v = r[key];
    if (v === null || v === undefined) continue;
    m.set(String(v), (m.get(String(v)) ?? 0) + 1);
  }
  return new Map([...m.entries()].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])));
}

/** README.md of the Hugging Face dataset: `configs:` front matter so both configs load, then statistics. */
export function datasetCard(input: CardInput): string {
  const { testRows, verifiedRows } = input;
  const gradeable = verifiedRows.filter((r) => r.gradeable === true).length;
  const reasons = countBy(verifiedRows, 'exclusion_reason');
  const categories = countBy(verifiedRows, 'mining_category');
  const lines = [
    '---',
    'configs:',
    '- config_name: default',
    '  data_files:',
    '  - split: test',
    '    path: data/test-*',
    '- config_name: verified',
    '  data_files:',
    '  - split: verified',
    '    path: verified/verified-*',
    'license: mit',
    'tags:',
    '- code',
    '- benchmark',
    '---',
    '',
    `# Fix-chains mined from ${input.repo}`,
    '',
    'Each row is a PR1 → PR2 chain: PR1 introduced or owned a behaviour, a later PR2 fixed an edge case PR1 missed.',
    "An agent is given PR1's task (`problem_statement`, derived from PR1 only); PR2's tests (`ANTICIPATION_FAIL_TO_PASS`) are the held-out signal.",
    '',
    '```python',
    'from datasets import load_dataset',
    'test = load_dataset("<this repo>", split="test")',
    'verified = load_dataset("<this repo>", "verified", split="verified")',
    '```',
    '',
    '## Evaluating an agent',
    '',
    "Each gradeable row's `docker_image` is its eval image (`image_tier` 3): the row's environment with the repository at `repo_path` (/testbed), checked out at `base_commit`, whose git store holds no object after it (no later commit, branch or tag), and the runner's files at `/foresight` (`run_helper`). Nothing is resolved at eval time: no bind mount, no network. `env_image_pr1` / `env_image_pr2` name the images validation ran in.",
    '',
    "The held-out tests are not in the image: `grading_bundle` (JSON) carries them. `x.files` are the test and support files PR1 touched, as at PR1's head; `y.files` are PR2's, as at PR2's head. After the agent's patch is applied (test files it touched reset), score X: lay `x.files`, run the runner on `x.run`, X = share of `FAIL_TO_PASS` passing (`PASS_TO_PASS` regressions reported beside it). Score Y: lay `x.files` then `y.files`, run `y.run`, Y = share of `ANTICIPATION_FAIL_TO_PASS` passing. The anticipation gap is X − Y.",
    '',
    '## Judgements',
    '',
    "`judged_by` in `quality` (test) and `llm_usage` (verified) says who judged a row: `llm` (an OpenAI-compatible endpoint) or `rules` (the offline default, which judges eligibility, attribution and fairness only: every other judgement column stays null and `eval_ready` is false, never guessed).",
    '',
    "- `problem_statement`: PR1's own words (title, body, the issue or ticket it closes, written before it merged); a statement coded `B2` (under-specified) is enriched from PR1's own material and re-judged (solvability, clarity, two fairness judges on distinct models, a deterministic leak detector) until it passes or a bound is reached: `pr1_code_original`, `pr1_code`, `pr1_spec_repaired`, and every round in `spec_repairs` (verified). PR2 never enters that repair.",
    '- `pr1_code` / `pr2_spec_code`: A solvable; B1 tests check details the statement cannot imply; B2 under-specified; B3 tests check a different task; B4 needs outside knowledge; B5 the gold patch bundles unrelated changes the tests require.',
    "- `clarity_score` 0 (clear) – 3 (unusable); `pr1_task_type` bug / feature / mixed; `eval_ready` = PR2 is a bug fix ∧ `pr1_code` = A ∧ clarity ≤ 1.",
    "- `pr2_problem_statement`: PR2's task, synthesised from PR2 and its held-out tests and repaired until the tests are derivable from it (`pr2_spec_repaired`).",
    '- Labels of the edge case: `failure_mode` silent / loud / none, `trigger_path` default / opt-in, `mechanism`, `difficulty` (PR2 fix) and `pr1_difficulty` (PR1 task) easy / medium / hard, `security`; `severity` is derived, not asked: not_a_bug without impact or failure, else points = impact (low 1, medium 2, high 3) + reach (narrow −1, moderate 0, wide +1) + 1 if silent; major when points ≥ 3 and impact ≥ medium, else minor. The judge\'s impact and reach are in `labels_verdict` (verified).',
    '',
    '## Statistics',
    '',
    '| measure | value |',
    '| --- | --- |',
    `| chains in \`test\` (passed every gate) | ${testRows.length} |`,
    `| chains in \`verified\` (every candidate chain) | ${verifiedRows.length} |`,
    `| gradeable (F2P, P2P, anticipation non-empty; every state ran) | ${gradeable} |`,
    ...[...categories].map(([k, n]) => `| mining_category = ${k} | ${n} |`),
    '',
    '## Exclusions in `verified`',
    '',
    '| exclusion_reason | n | meaning |',
    '| --- | --- | --- |',
    ...[...reasons].map(([k, n]) => `| ${k} | ${n} | ${EXCLUSION_REASONS[k as ExclusionReason] ?? ''} |`),
    '',
    `Generated by foresight ${input.foresightVersion}.`,
    '',
  ];
  return lines.join('\n');
}
