import type { JudgedChain } from '../../core/foundation/model/judged.ts';
import { rowLanguage } from '../../core/env/index.ts';

/** What emit made for a gradeable chain: its eval image (null when the build failed) and grading bundle. */
export interface EvalEntry {
  instance_id: string;
  image: string | null;
  /** JSON of a GradingBundle (grading-bundle.ts). */
  bundle: string;
  /** Why the chain cannot enter `test`: no eval image, or the gold self-check failed. */
  problem: { reason: 'eval_image_failed' | 'gold_check_failed'; detail: string } | null;
}

export interface RowContext {
  /** The image when none is recorded on the chain (an explicit FORESIGHT_IMAGE). */
  image: string;
  repoPath: string;
  /** Runner name -> its test command and in-container helper. */
  runners: ReadonlyMap<string, { testCmd: string; script: string }>;
}

const json = (v: unknown): string => JSON.stringify(v);

function evidence(c: JudgedChain): string {
  // Set when PR1's overlaid tests crashed the runner at pr1_base and S1 was decided on their base version.
  const s1 = c.states.find((s) => s.name === 'S1')?.decidedBy;
  return json({
    picked_by: c.szz.pickedBy,
    references: c.references.map((r) => ({ kind: r.kind, target: r.target, sha: r.sha, text: r.text, source: r.source })),
    blame: c.szz.candidates.map((k) => ({ change: k.change, score: k.score, lines: k.lines.length })),
    filtered_by_time: c.szz.filteredByTime,
    meta_skipped: c.szz.metaSkipped,
    advisories: c.advisories.map((a) => a.id),
    reported_at: c.reportedAt,
    blamed_lines: c.szz.blamedLines,
    unattributed_score: c.szz.unattributedScore,
    add_only: c.szz.addOnly,
    // Test modules run because they read a PR's data files (fixtures, golden files), and what each reads and why.
    data_consumers: c.data_consumers,
    // Execution-confirmed attribution (validate): the method, the first bad commit, the bisection's steps, what blame said instead,
    // and `predates`: the probe of pr1_base with PR2's source change (a `defect_predates_pr1` exclusion's evidence).
    attribution: c.attribution,
    ...(s1 ? { s1_decided_by: { reason: s1.reason, crash: s1.crash } } : {}),
  });
}

/** Fields both splits share, by the card's names. */
function common(c: JudgedChain, ctx: RowContext, ev: EvalEntry | null): Record<string, unknown> {
  const runner = ctx.runners.get(c.runner);
  return {
    instance_id: c.instance_id,
    repo: c.repo,
    base_commit: c.pr1_base,
    pr1_head_sha: c.pr1_head,
    pr2_base_sha: c.pr2_base,
    pr2_head_sha: c.pr2_head,
    problem_statement: c.problem_statement,
    problem_statement_raw: c.problem_statement_raw,
    patch: c.patch,
    test_patch: c.test_patch,
    anticipation_patch: c.anticipation_patch,
    anticipation_test_patch: c.anticipation_test_patch,
    pr2_problem_statement: c.judgement.pr2_problem_statement,
    pr2_problem_statement_raw: c.pr2_problem_statement_raw,
    pr1_test_files: json(c.pr1_test_files),
    anticipation_test_files: json(c.anticipation_test_files),
    FAIL_TO_PASS: json(c.FAIL_TO_PASS),
    PASS_TO_PASS: json(c.PASS_TO_PASS),
    ANTICIPATION_FAIL_TO_PASS: json(c.ANTICIPATION_FAIL_TO_PASS),
    // The eval image (tier 3) when the chain is gradeable; else the validation image it ran in.
    docker_image: ev?.image ?? c.env_image_pr1 ?? ctx.image,
    repo_path: ctx.repoPath,
    runner: c.runner,
    install_cmd: c.install_cmd,
    test_cmd: runner?.testCmd ?? '',
    // The grading primitive's path inside the eval image.
    run_helper: runner ? `/foresight/${runner.script}` : '',
    grading_bundle: ev?.bundle ?? null,
    // The database the sets were computed on (and grading starts beside the eval image): sqlite = no service.
    db_backend: c.db_backend,
    created_at: c.created_at,
    pr2_created_at: c.pr2_created_at,
    gap_days: c.gap_days,
    mining_category: c.mining_category,
    mining_evidence: evidence(c),
    // Labels: null where no judge answered (the offline rules cannot), never guessed.
    severity: c.judgement.severity,
    failure_mode: c.judgement.failure_mode,
    trigger_path: c.judgement.trigger_path,
    mechanism: c.judgement.mechanism,
    difficulty: c.judgement.difficulty,
    pr1_difficulty: c.judgement.pr1_difficulty,
    pr2_spec_code: c.judgement.pr2_spec_code,
    pr2_spec_repaired: c.judgement.pr2_spec_repaired,
    eval_ready: c.judgement.eval_ready,
    pr1_code: c.judgement.pr1_code,
    pr1_code_original: c.judgement.pr1_code_original,
    pr1_spec_repaired: c.judgement.pr1_spec_repaired,
    pr1_task_type: c.judgement.pr1_task_type,
    clarity_score: c.judgement.clarity_score,
  };
}

/** A row of the `test` split (only for chains that passed every gate). */
export function testRow(c: JudgedChain, ctx: RowContext, ev: EvalEntry): Record<string, unknown> {
  return {
    ...common(c, ctx, ev),
    environment_setup_commit: c.pr1_base,
    fully_gradeable: c.gradeable && !c.excluded,
    // Who judged the row and why it is not eval_ready (empty flags when it is).
    quality: json({ judged_by: c.verdicts.judged_by, flags: c.judgement.quality_flags }),
  };
}

/** A row of the `verified` config: every chain, with its gates. */
export function verifiedRow(c: JudgedChain, ctx: RowContext, ev: EvalEntry | null): Record<string, unknown> {
  const v = c.verdicts;
  return {
    ...common(c, ctx, ev),
    language: rowLanguage(c.runner, [...c.pr1_test_files, ...c.anticipation_test_files]),
    p2p_excluded_gold_fail: json(c.p2p_excluded_gold_fail),
    PR2_FAIL_TO_PASS: json(c.PR2_FAIL_TO_PASS),
    PR2_PASS_TO_PASS: json(c.PR2_PASS_TO_PASS),
    flaky_tests: json(c.flaky_tests),
    gradeable: c.gradeable,
    excluded: c.excluded !== null,
    exclusion_reason: c.excluded?.reason ?? null,
    exclusion_detail: c.excluded ? `${c.excluded.stage}: ${c.excluded.detail}` : null,
    eligibility_verdict: v.eligibility ? json(v.eligibility) : null,
    attribution_verdict: v.attribution ? json(v.attribution) : null,
    fairness_verdicts: json(v.fairness),
    fairness_consensus: v.fairness.length ? (v.fairness.every((f) => f.pass) ? 'pass' : 'fail') : null,
    env_image_pr1: c.env_image_pr1 ?? ctx.image,
    env_image_pr2: c.env_image_pr2 ?? ctx.image,
    image_tier: ev?.image ? '3' : c.env_image_pr1 === null ? 'base' : 'env',
    // null means "not collected" (git history only), [] means "collected, none".
    pr_comments: c.pr_comments === null ? null : json(c.pr_comments),
    linked_issues: c.linked_issues === null ? null : json(c.linked_issues),
    security: c.judgement.security,
    solvability_verdict: v.solvability ? json(v.solvability) : null,
    pr2_solvability_verdict: v.pr2_solvability ? json(v.pr2_solvability) : null,
    labels_verdict: v.labels ? json(v.labels) : null,
    spec_repairs: json(v.repairs),
    // What judging this row cost (tokens, calls, USD from the configured price table).
    llm_usage: json({ judged_by: v.judged_by, ...c.usage }),
    provenance: 'mined',
  };
}
