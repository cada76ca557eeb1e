/** The report tests' fixtures: the CLI, the page's data, funnel rows and a dataset layout in a scratch folder. */
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { PROJECT_ROOT } from '../../core/foundation/version.ts';
import type { ReportPageData } from '../../pipeline/report/index.ts';

export const CHROMIUM = '/usr/bin/chromium';
export const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];
export const CI = Boolean(process.env['CI']);

export interface Result {
  code: number;
  stdout: string;
  stderr: string;
}

/** The real CLI, as a user types it; the judge stays offline (no LLM endpoint). */
export function foresight(args: string[]): Promise<Result> {
  return new Promise((done) => {
    execFile(process.execPath, ['--import', 'tsx', join(PROJECT_ROOT, 'pipeline/bin.ts'), ...args], {
      cwd: PROJECT_ROOT,
      env: { ...process.env, FORESIGHT_LLM_BASE_URL: '' },
      maxBuffer: 64 * 1024 * 1024,
    }, (err, stdout, stderr) => done({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr }));
  });
}

/** The page's embedded data, as its script reads it. */
export async function pageData(file: string): Promise<ReportPageData> {
  const html = await readFile(file, 'utf8');
  const m = /<script type="application\/json" id="report-data">([\s\S]*?)<\/script>/.exec(html);
  if (!m) throw new Error(`no report data in ${file}`);
  return JSON.parse(m[1]!) as ReportPageData;
}

export const jsonl = (rows: readonly unknown[]): string => rows.map((r) => JSON.stringify(r)).join('\n') + '\n';
export const json = (v: unknown): string => JSON.stringify(v);

/** A funnel row (the verified schema) with the columns the report reads (lists JSON-encoded, as emit writes them). */
export function row(id: string, over: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    instance_id: id,
    repo: 'acme/widgets',
    base_commit: 'a'.repeat(40),
    pr1_head_sha: 'b'.repeat(40),
    pr2_base_sha: 'c'.repeat(40),
    pr2_head_sha: 'd'.repeat(40),
    problem_statement: 'Add widgets',
    problem_statement_raw: 'Add widgets',
    pr2_problem_statement: null,
    pr2_problem_statement_raw: 'Fix widgets',
    patch: '',
    test_patch: '',
    anticipation_patch: '',
    anticipation_test_patch: '',
    FAIL_TO_PASS: json(['t.py::test_a']),
    PASS_TO_PASS: json([]),
    p2p_excluded_gold_fail: json([]),
    ANTICIPATION_FAIL_TO_PASS: json(['t.py::test_b']),
    PR2_FAIL_TO_PASS: json(['t.py::test_b']),
    PR2_PASS_TO_PASS: json([]),
    flaky_tests: json([]),
    gradeable: true,
    excluded: false,
    exclusion_reason: null,
    exclusion_detail: null,
    mining_category: 'szz',
    mining_evidence: json({ picked_by: 'blame' }),
    eligibility_verdict: json({ verdict: 'bug_fix', pass: true }),
    attribution_verdict: null,
    fairness_verdicts: json([]),
    ...over,
  };
}

/** A validate record's states: S1 fails test_a, S2 passes it. */
export function states(): unknown[] {
  const state = (name: string, tests: Record<string, string>) => ({
    name, checkout: 'a'.repeat(40), overlay: null, testFiles: ['t.py'], outcome: { kind: 'ran' }, runs: 3, tests, collectionErrors: [], durationMs: 1200,
  });
  return [
    state('S1', { 't.py::test_a': 'fail' }),
    state('S2', { 't.py::test_a': 'pass' }),
    state('S3', { 't.py::test_b': 'fail' }),
    state('S4', { 't.py::test_b': 'fail' }),
    state('S5', { 't.py::test_b': 'pass', 't.py::test_c': 'flaky' }),
  ];
}

/** The test file's scratch folder (each test file runs in its own module instance): made before its tests, removed after. */
export let scratch = '';
beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'foresight-report-test-'));
});
afterAll(async () => {
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

/**
 * data/acme__widgets/emit/hf with the given rows as the funnel (every chain), those the test split holds as
 * `verified`, the test split's rows (by default widgets__1-2, eval_ready) and validate/items.jsonl beside it when given.
 */
export async function layout(name: string, rows: unknown[], validate?: unknown[], test: unknown[] = [{ instance_id: 'widgets__1-2', eval_ready: true }]): Promise<string> {
  const repo = join(scratch, name, 'data', 'acme__widgets');
  const hf = join(repo, 'emit', 'hf');
  await mkdir(join(hf, 'jsonl'), { recursive: true });
  const inTest = new Set(test.map((t) => (t as { instance_id: string }).instance_id));
  await writeFile(join(hf, 'jsonl', 'funnel.jsonl'), jsonl(rows));
  await writeFile(join(hf, 'jsonl', 'verified.jsonl'), jsonl(rows.filter((r) => inTest.has((r as { instance_id: string }).instance_id))));
  await writeFile(join(hf, 'jsonl', 'test.jsonl'), jsonl(test));
  if (validate) {
    await mkdir(join(repo, 'validate'), { recursive: true });
    await writeFile(join(repo, 'validate', 'items.jsonl'), jsonl(validate));
  }
  return hf;
}

