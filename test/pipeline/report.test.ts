/**
 * `foresight report`: the demo mined for real (Docker), its page written by the CLI and opened in Debian's
 * headless Chromium with every request, console message and page error watched (the page must load
 * nothing but itself), the table filtered, a chain's view opened and its diffs checked, a screenshot
 * taken; a copy of the dataset with markup planted in a PR body and a diff shows it as text. The
 * reading and escaping tests need neither Docker nor a browser.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { inflateSync } from 'node:zlib';
import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isDockerReachable } from '../../core/env/index.ts';
import { PROJECT_ROOT } from '../../core/foundation/version.ts';
import type { GradeResult } from '../../core/env/index.ts';
import { aggregate, instanceReport, type EvalReport, type InstanceReport } from '../../pipeline/eval/report.ts';
import { scriptJson, type ReportPageData } from '../../pipeline/report/index.ts';
import { minedDemoCopy } from '../helpers/demo.ts';

const CHROMIUM = '/usr/bin/chromium';
const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];
const CI = Boolean(process.env['CI']);

interface Result {
  code: number;
  stdout: string;
  stderr: string;
}

/** The real CLI, as a user types it; the judge stays offline (no LLM endpoint). */
function foresight(args: string[]): Promise<Result> {
  return new Promise((done) => {
    execFile(process.execPath, ['--import', 'tsx', join(PROJECT_ROOT, 'pipeline/bin.ts'), ...args], {
      cwd: PROJECT_ROOT,
      env: { ...process.env, FORESIGHT_LLM_BASE_URL: '' },
      maxBuffer: 64 * 1024 * 1024,
    }, (err, stdout, stderr) => done({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr }));
  });
}

/** The page's embedded data, as its script reads it. */
async function pageData(file: string): Promise<ReportPageData> {
  const html = await readFile(file, 'utf8');
  const m = /<script type="application\/json" id="report-data">([\s\S]*?)<\/script>/.exec(html);
  if (!m) throw new Error(`no report data in ${file}`);
  return JSON.parse(m[1]!) as ReportPageData;
}

const jsonl = (rows: readonly unknown[]): string => rows.map((r) => JSON.stringify(r)).join('\n') + '\n';
const json = (v: unknown): string => JSON.stringify(v);

/** A verified row with the columns the report reads (lists JSON-encoded, as emit writes them). */
function row(id: string, over: Record<string, unknown> = {}): Record<string, unknown> {
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
function states(): unknown[] {
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

let scratch: string;
beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'foresight-report-test-'));
});
afterAll(async () => {
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

/**
 * data/acme__widgets/emit/hf with the given verified rows, the test split's rows (by default widgets__1-2,
 * eval_ready) and validate/items.jsonl beside it when given.
 */
async function layout(name: string, rows: unknown[], validate?: unknown[], test: unknown[] = [{ instance_id: 'widgets__1-2', eval_ready: true }]): Promise<string> {
  const repo = join(scratch, name, 'data', 'acme__widgets');
  const hf = join(repo, 'emit', 'hf');
  await mkdir(join(hf, 'jsonl'), { recursive: true });
  await writeFile(join(hf, 'jsonl', 'verified.jsonl'), jsonl(rows));
  await writeFile(join(hf, 'jsonl', 'test.jsonl'), jsonl(test));
  if (validate) {
    await mkdir(join(repo, 'validate'), { recursive: true });
    await writeFile(join(repo, 'validate', 'items.jsonl'), jsonl(validate));
  }
  return hf;
}

describe('report data: read, escaped, refused when malformed', () => {
  it('no `<` of the data survives into the page, so a row cannot close the data element', () => {
    const evil = { t: '</script><script>alert(1)</script><!--' };
    const out = scriptJson(evil);
    expect(out).not.toContain('<');
    expect(JSON.parse(out)).toEqual(evil);
  });

  it('writes the page beside the dataset (never inside it), with the split and every state of each chain', async () => {
    const hf = await layout('states', [row('widgets__1-2'), row('widgets__3-4', { gradeable: false, excluded: true, exclusion_reason: 'pr1_no_tests', FAIL_TO_PASS: json([]) })], [
      { instance_id: 'widgets__1-2', states: states(), FAIL_TO_PASS: ['t.py::test_a'], ANTICIPATION_FAIL_TO_PASS: ['t.py::test_b'] },
    ]);
    const r = await foresight(['report', '--dataset', hf]);
    expect(r.code, r.stderr).toBe(0);
    const page = join(hf, '..', 'report.html');
    expect(r.stdout.trim()).toBe(page);
    expect(existsSync(join(hf, 'report.html'))).toBe(false);
    const data = await pageData(page);
    expect(data.rows.map((x) => [x.instance_id, x.split, x.eval_ready])).toEqual([['widgets__1-2', 'test', true], ['widgets__3-4', 'verified', null]]);
    const st = data.rows[0]!.states!;
    expect(st.tests).toEqual(['t.py::test_a', 't.py::test_b', 't.py::test_c']);
    expect(st.states.map((s) => `${s.name}:${s.outcomes}`)).toEqual(['S1:f..', 'S2:p..', 'S3:.f.', 'S4:.f.', 'S5:.p~']);
    expect(data.rows[1]!.states).toBeNull();
    expect(data.reasons['pr1_no_tests']).toMatch(/PR1 touched no test file/);
  });

  it('states of a validate rerun that no longer give the emitted sets are left out, not shown beside them', async () => {
    const hf = await layout('stale', [row('widgets__1-2')], [
      { instance_id: 'widgets__1-2', states: states(), FAIL_TO_PASS: ['t.py::test_other'], ANTICIPATION_FAIL_TO_PASS: ['t.py::test_b'] },
    ]);
    const r = await foresight(['report', '--dataset', hf]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/per-state outcomes left out for widgets__1-2/);
    const data = await pageData(join(hf, '..', 'report.html'));
    expect(data.rows[0]!.states).toBeNull();
    expect(data.staleStates).toEqual(['widgets__1-2']);
  });

  it('a set column that is not a JSON list is refused with its file, line and column', async () => {
    const hf = await layout('bad-set', [row('widgets__1-2'), row('widgets__3-4', { PASS_TO_PASS: 'not json' })]);
    const r = await foresight(['report', '--dataset', hf, '--out', join(scratch, 'bad-set.html')]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/verified\.jsonl:2: PASS_TO_PASS: is not a JSON-encoded value — emit the dataset again/);
    expect(r.stderr).not.toMatch(/\n\s+at .*\.(ts|js):\d+/);
    expect(existsSync(join(scratch, 'bad-set.html'))).toBe(false);
  });

  it('a folder that is not an emitted dataset is refused with the folder to pass', async () => {
    const r = await foresight(['report', '--dataset', scratch]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/holds no jsonl\/verified\.jsonl — pass --dataset <the emitted dataset folder>/);
    const missing = await foresight(['report', '--dataset', join(scratch, 'nope')]);
    expect(missing.stderr).toMatch(/--dataset .*nope is not a folder/);
  });
});

// ---- eval results beside the dataset, and why a row is not eval_ready ----

/** A graded result as the grader returns it: each F2P / P2P / anticipation test's status. */
function graded(f2p: Record<string, 'pass' | 'fail'>, p2p: Record<string, 'pass' | 'fail'>, anti: Record<string, 'pass' | 'fail'>): GradeResult {
  const score = (t: Record<string, string>) => {
    const total = Object.keys(t).length;
    const passed = Object.values(t).filter((v) => v === 'pass').length;
    return { kind: 'scored' as const, value: passed / total, passed, total };
  };
  const x = score(f2p);
  const y = score(anti);
  return {
    kind: 'graded', applyLog: 'applied', x, y, gap: x.value - y.value, durationMs: 900, reset: [], tampered: [], f2p, p2p, anti,
    p2pRegressions: Object.keys(p2p).filter((t) => p2p[t] !== 'pass'), runs: { x: null, y: null },
  };
}

/** `foresight eval`'s report.json as runEval builds and writes it (entries by instanceReport, means by aggregate). */
async function writeEvalReport(hf: string, dir: string, model: string, finishedAt: string, instances: InstanceReport[], noPrediction: string[] = []): Promise<void> {
  const report: EvalReport = {
    dataset: hf, split: 'test', run: `test-${model}`, models: [model], finished_at: finishedAt,
    aggregate: aggregate(instances, noPrediction), instances,
    skipped: { no_prediction: noPrediction, not_gradeable: [] }, errors: [],
  };
  await mkdir(join(hf, 'eval', dir), { recursive: true });
  await writeFile(join(hf, 'eval', dir, 'report.json'), JSON.stringify(report, null, 2) + '\n');
}

/** Two test rows (the first judged by the offline rules), a verified-only row an LLM judged B2, and three eval runs plus two files that are not eval reports. */
async function evalLayout(name: string): Promise<string> {
  const hf = await layout(name, [
    row('widgets__1-2', { PASS_TO_PASS: json(['t.py::test_c']), eval_ready: false, llm_usage: json({ judged_by: 'rules' }) }),
    row('widgets__3-4', { FAIL_TO_PASS: json(['u.py::test_x', 'u.py::test_y']), ANTICIPATION_FAIL_TO_PASS: json(['u.py::test_z']), eval_ready: true }),
    row('widgets__5-6', {
      excluded: true, exclusion_reason: 'unfair_statement', eval_ready: false, llm_usage: json({ judged_by: 'llm' }),
      solvability_verdict: json({ reason: 'vague', code: 'B2', clarity_score: 2, task_type: 'bug' }),
    }),
  ], undefined, [
    { instance_id: 'widgets__1-2', eval_ready: false, quality: json({ judged_by: 'rules', flags: ['not_judged', 'pr1_code_unjudged'] }) },
    { instance_id: 'widgets__3-4', eval_ready: true, quality: json({ judged_by: 'llm', flags: [] }) },
  ]);
  const gold = (id: string, r: GradeResult) => instanceReport(id, 'gold', r);
  await writeEvalReport(hf, 'test-gold', 'gold', '2026-01-02T10:00:00.000Z', [
    gold('widgets__1-2', graded({ 't.py::test_a': 'pass' }, { 't.py::test_c': 'pass' }, { 't.py::test_b': 'fail' })),
    gold('widgets__3-4', graded({ 'u.py::test_x': 'pass', 'u.py::test_y': 'pass' }, {}, { 'u.py::test_z': 'fail' })),
  ]);
  // agent-a anticipates the edge case of 1-2 but breaks a PASS_TO_PASS test; its patch for 3-4 does not apply.
  const agent = (id: string, r: GradeResult) => instanceReport(id, 'agent-a', r);
  await writeEvalReport(hf, 'test-agent-a', 'agent-a', '2026-01-03T10:00:00.000Z', [
    agent('widgets__1-2', graded({ 't.py::test_a': 'pass' }, { 't.py::test_c': 'fail' }, { 't.py::test_b': 'pass' })),
    agent('widgets__3-4', {
      kind: 'patch_failed', detail: 'error: patch failed: widgets/core.py:3', applyLog: 'error: patch failed: widgets/core.py:3',
      x: { kind: 'scored', value: 0, passed: 0, total: 2 }, y: { kind: 'scored', value: 0, passed: 0, total: 1 }, gap: 0, durationMs: 100,
    }),
  ]);
  // An earlier run of agent-a (another predictions file): the later one is shown.
  await writeEvalReport(hf, 'test-agent-a-old', 'agent-a', '2026-01-01T10:00:00.000Z', [
    agent('widgets__1-2', graded({ 't.py::test_a': 'fail' }, { 't.py::test_c': 'pass' }, { 't.py::test_b': 'fail' })),
  ], ['widgets__3-4']);
  await mkdir(join(hf, 'eval', 'broken'), { recursive: true });
  await writeFile(join(hf, 'eval', 'broken', 'report.json'), '{"split": "test", "instan');
  await mkdir(join(hf, 'eval', 'swebench'), { recursive: true });
  await writeFile(join(hf, 'eval', 'swebench', 'report.json'), JSON.stringify({ total_instances: 2, resolved_ids: ['widgets__1-2'] }));
  return hf;
}

const ENTITIES: Record<string, string> = { '&amp;': '&', '&lt;': '<', '&gt;': '>', '&quot;': '"', '&#39;': "'", '&nbsp;': ' ' };
const textOf = (html: string): string => html.replace(/<[^>]+>/g, ' ').replace(/&(amp|lt|gt|quot|#39|nbsp);/g, (e) => ENTITIES[e]!).replace(/\s+/g, ' ').trim();

/** The text of each body cell of the rendered table `#id`, row by row. */
function tableCells(dom: string, id: string): string[][] {
  const table = new RegExp(`<table[^>]*\\bid="${id}"[^>]*>([\\s\\S]*?)</table>`).exec(dom);
  if (!table) throw new Error(`no table #${id} in the rendered page`);
  const body = /<tbody>([\s\S]*?)<\/tbody>/.exec(table[1]!)?.[1] ?? '';
  return body.split(/<tr[\s>]/).slice(1).map((tr) => [...tr.matchAll(/<td[^>]*>([\s\S]*?)<\/td>/g)].map((c) => textOf(c[1]!)));
}

/** Width, height and pixels (RGB or RGBA, 8 bits, not interlaced: what Chromium writes) of a PNG. */
function decodePng(png: Buffer): { width: number; height: number; channels: number; pixels: Buffer } {
  expect(png.subarray(0, 8).toString('hex')).toBe('89504e470d0a1a0a');
  let width = 0, height = 0, channels = 0;
  const idat: Buffer[] = [];
  for (let at = 8; at < png.length;) {
    const len = png.readUInt32BE(at);
    const type = png.toString('latin1', at + 4, at + 8);
    const chunk = png.subarray(at + 8, at + 8 + len);
    if (type === 'IHDR') {
      width = chunk.readUInt32BE(0);
      height = chunk.readUInt32BE(4);
      expect({ depth: chunk[8], interlace: chunk[12] }).toEqual({ depth: 8, interlace: 0 });
      channels = ({ 2: 3, 6: 4 } as Record<number, number>)[chunk[9]!] ?? 0;
      expect(channels, `PNG colour type ${chunk[9]}`).toBeGreaterThan(0);
    } else if (type === 'IDAT') idat.push(chunk);
    at += 12 + len;
  }
  const raw = inflateSync(Buffer.concat(idat));
  const stride = width * channels;
  const pixels = Buffer.alloc(stride * height);
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)]!;
    for (let i = 0; i < stride; i++) {
      const v = raw[y * (stride + 1) + 1 + i]!;
      const a = i >= channels ? pixels[y * stride + i - channels]! : 0;
      const b = y > 0 ? pixels[(y - 1) * stride + i]! : 0;
      const c = y > 0 && i >= channels ? pixels[(y - 1) * stride + i - channels]! : 0;
      const p = a + b - c;
      const paeth = Math.abs(p - a) <= Math.abs(p - b) && Math.abs(p - a) <= Math.abs(p - c) ? a : Math.abs(p - b) <= Math.abs(p - c) ? b : c;
      const pred = [0, a, b, (a + b) >> 1, paeth][filter];
      if (pred === undefined) throw new Error(`PNG filter ${filter} on row ${y}`);
      pixels[y * stride + i] = (v + pred) & 0xff;
    }
  }
  return { width, height, channels, pixels };
}

/** Distinct colours, and the share of pixels that are not white. */
function pixelVariety(img: ReturnType<typeof decodePng>): { colours: number; inked: number } {
  const colours = new Set<number>();
  let inked = 0;
  const n = img.width * img.height;
  for (let i = 0; i < n; i++) {
    const o = i * img.channels;
    const [r, g, b] = [img.pixels[o]!, img.pixels[o + 1]!, img.pixels[o + 2]!];
    colours.add((r << 16) | (g << 8) | b);
    if (r < 245 || g < 245 || b < 245) inked++;
  }
  return { colours: colours.size, inked: inked / n };
}

const chromiumMissing = !existsSync(CHROMIUM);
if (chromiumMissing && !CI) console.warn(`[report.test] SKIPPED (eval results in Chromium): ${CHROMIUM} is missing and CI is unset`);

describe('eval results and eval_ready reasons on the page', () => {
  /** Debian's Chromium from the command line, as a user would: `--dump-dom` prints the DOM after the page's script ran. */
  function chromiumCli(args: string[]): Promise<string> {
    return new Promise((done, fail) => {
      const profile = join(scratch, `chromium-${Math.random().toString(36).slice(2)}`);
      execFile(CHROMIUM, [...CHROMIUM_ARGS, '--hide-scrollbars', `--user-data-dir=${profile}`, ...args], { timeout: 60_000, maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) =>
        err ? fail(new Error(`chromium ${args.join(' ')} failed: ${err.message}\n${stderr.slice(-1000)}`)) : done(stdout));
    });
  }

  it('trial: malformed or foreign eval/*/report.json files → each named in one warning and skipped, the report still written', async () => {
    const hf = await evalLayout('eval-warnings');
    const r = await foresight(['report', '--dataset', hf]);
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stderr.trim().split('\n');
    expect(lines.filter((l) => l.includes('eval/broken/report.json'))).toEqual([expect.stringMatching(/^foresight report: eval\/broken\/report\.json is not valid JSON \(.+\): skipped$/)]);
    expect(lines.filter((l) => l.includes('eval/swebench/report.json'))).toEqual([
      expect.stringMatching(/^foresight report: eval\/swebench\/report\.json is not a report of this foresight's eval \(split: .+\): skipped; run foresight eval again to replace it$/),
    ]);
    expect(r.stderr).toMatch(/eval results: agent-a on test \(2 graded, eval\/test-agent-a\), gold on test \(2 graded, eval\/test-gold\)/);
    const data = await pageData(r.stdout.trim());
    expect(data.evals.models.map((m) => [m.model, m.run, m.aggregate.mean_X, m.aggregate.mean_Y, m.aggregate.instances, m.superseded])).toEqual([
      ['agent-a', 'test-agent-a', 0.5, 0.5, 2, ['test-agent-a-old']],
      ['gold', 'test-gold', 1, 0, 2, []],
    ]);
    expect(data.rows.find((x) => x.instance_id === 'widgets__5-6')!.evals).toEqual([]);
  });

  it('trial: test rows judged by the offline rules read "eval ready: no" with no hint why → the reason comes with it', async () => {
    const hf = await evalLayout('eval-ready');
    const r = await foresight(['report', '--dataset', hf]);
    expect(r.code, r.stderr).toBe(0);
    const data = await pageData(r.stdout.trim());
    const why = Object.fromEntries(data.rows.map((x) => [x.instance_id, x.eval_ready_why]));
    // A test row: the judge's own flags, from its `quality` column.
    expect(why['widgets__1-2']).toEqual({
      flags: ['not_judged', 'pr1_code_unjudged'], source: 'quality',
      text: expect.stringMatching(/^judged by the offline rules, .*set FORESIGHT_LLM_BASE_URL.*; PR1’s statement has no solvability verdict \(pr1_code\)$/),
    });
    expect(why['widgets__3-4']).toBeNull();
    // A verified-only row has no quality column: the same flags from its verdicts.
    expect(why['widgets__5-6']).toMatchObject({ flags: ['pr1_code_B2', 'clarity_2'], source: 'verdicts' });
    expect(why['widgets__5-6']!.text).toMatch(/judged B2, not A .*clarity 2 \(eval_ready needs 0 or 1\)/);
    if (chromiumMissing && !CI) return;
    const page = pathToFileURL(r.stdout.trim()).href;
    const overview = await chromiumCli(['--dump-dom', page]);
    const ready = Object.fromEntries(tableCells(overview, 'chain-table').map((c) => [c[0], c[10]]));
    expect(ready).toEqual({ 'widgets__1-2': 'no not_judged, pr1_code_unjudged', 'widgets__3-4': 'yes', 'widgets__5-6': 'no pr1_code_B2, clarity_2' });
    const chain = await chromiumCli(['--dump-dom', `${page}#chain=widgets__1-2`]);
    expect(textOf(/<p id="eval-ready">([\s\S]*?)<\/p>/.exec(chain)?.[1] ?? '')).toMatch(/^eval ready: no — judged by the offline rules, which judge neither/);
  });

  it.skipIf(chromiumMissing && !CI)('trial: after make eval the HTML report shows no eval results → Chromium renders X, Y, gap per model and each chain’s per-test outcomes', async () => {
    const hf = await evalLayout('eval-page');
    const r = await foresight(['report', '--dataset', hf]);
    expect(r.code, r.stderr).toBe(0);
    const page = pathToFileURL(r.stdout.trim()).href;

    // The overview: the latest run of each model, its means and how many instances it graded.
    const overview = await chromiumCli(['--dump-dom', page]);
    expect(textOf(/<section id="evals">[\s\S]*?<h2>([\s\S]*?)<\/h2>/.exec(overview)?.[1] ?? '')).toBe('Eval results');
    expect(tableCells(overview, 'eval-table').map((c) => c.slice(0, 9))).toEqual([
      ['agent-a', 'test', '50.0%', '50.0%', '0.0%', '2', '2 of 2', '1', '0'],
      ['gold', 'test', '100.0%', '0.0%', '+100.0%', '2', '2 of 2', '0', '0'],
    ]);
    expect(overview).toContain('eval/test-agent-a-old');

    // A chain: each model's X / Y on it and every graded test's outcome per model.
    const chain = await chromiumCli(['--dump-dom', `${page}#chain=widgets__1-2`]);
    expect(tableCells(chain, 'chain-eval').map((c) => c.slice(0, 6))).toEqual([
      ['agent-a', 'graded', '100.0% (1/1)', '100.0% (1/1)', '0.0%', 't.py::test_c'],
      ['gold', 'graded', '100.0% (1/1)', '0.0% (0/1)', '+100.0%', 'none'],
    ]);
    expect(tableCells(chain, 'eval-tests')).toEqual([
      ['t.py::test_a', 'F2P', 'pass', 'pass'],
      ['t.py::test_b', 'A-F2P', 'pass', 'fail'],
    ]);
    expect(tableCells(chain, 'eval-tests-p2p')).toEqual([['t.py::test_c', 'P2P', 'fail', 'pass']]);
    const failed = await chromiumCli(['--dump-dom', `${page}#chain=widgets__3-4`]);
    expect(tableCells(failed, 'chain-eval').map((c) => c.slice(0, 5))).toEqual([
      ['agent-a', 'patch did not apply', '0.0% (0/2)', '0.0% (0/1)', '0.0%'],
      ['gold', 'graded', '100.0% (2/2)', '0.0% (0/1)', '+100.0%'],
    ]);
    expect(failed).toContain('error: patch failed: widgets/core.py:3');

    // Screenshots of both views: the right size, and not blank.
    for (const [name, url] of [['overview', page], ['chain', `${page}#chain=widgets__1-2`]] as const) {
      const shot = join(scratch, `eval-${name}.png`);
      await chromiumCli([`--screenshot=${shot}`, '--window-size=1400,1100', url]);
      const img = decodePng(await readFile(shot));
      expect({ width: img.width, height: img.height }).toEqual({ width: 1400, height: 1100 });
      const v = pixelVariety(img);
      expect(v.colours, `${name}: distinct colours`).toBeGreaterThan(30);
      expect(v.inked, `${name}: share of non-white pixels`).toBeGreaterThan(0.01);
      expect(v.inked, `${name}: share of non-white pixels`).toBeLessThan(0.9);
    }
  }, 120_000);
});

// The browser part: the demo needs Docker; CI must have both (scripts/setup.sh installs Chromium).
const dockerUp = await isDockerReachable();
const chromiumThere = existsSync(CHROMIUM);
const skipBrowser = !CI && (!dockerUp || !chromiumThere);
if (skipBrowser) console.warn(`[report.test] SKIPPED (browser part): ${!dockerUp ? 'Docker is not reachable' : `${CHROMIUM} is missing`} and CI is unset`);

describe.skipIf(skipBrowser)('the report page in headless Chromium', () => {
  let hf: string;
  /** The demo's page, written once by the CLI with the default --out. */
  let file: string;
  let browser: Browser;
  let verified: Array<Record<string, string | boolean | null>>;

  beforeAll(async () => {
    if (!chromiumThere) throw new Error(`${CHROMIUM} is missing: install Debian's chromium (scripts/setup.sh does)`);
    if (!dockerUp) throw new Error('Docker is not reachable: the report test mines the demo (run scripts/setup.sh)');
    const data = await minedDemoCopy();
    hf = join(data, 'demo__minilib', 'emit', 'hf');
    verified = (await readFile(join(hf, 'jsonl', 'verified.jsonl'), 'utf8')).trim().split('\n').map((l) => JSON.parse(l) as Record<string, string | boolean | null>);
    file = await report(hf);
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  }, 600_000);
  afterAll(async () => {
    await browser?.close();
  });

  /** The page at `file` (+ hash), with every console error, page error and request other than the file itself recorded. */
  async function open(file: string, hash = ''): Promise<{ page: Page; problems: string[] }> {
    const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
    const self = pathToFileURL(file).href;
    const problems: string[] = [];
    page.on('console', (m) => {
      if (m.type() === 'error' || m.type() === 'warning') problems.push(`console ${m.type()}: ${m.text()}`);
    });
    page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
    // data: URLs (the inlined plots) never leave the page; anything else is a request the page must not make.
    page.on('request', (r) => {
      if (r.url().split('#')[0] !== self && !r.url().startsWith('data:')) problems.push(`request: ${r.url()}`);
    });
    await page.goto(self + hash);
    await page.waitForSelector('html[data-ready="true"]');
    return { page, problems };
  }

  async function report(dataset: string, out?: string): Promise<string> {
    const r = await foresight(['report', '--dataset', dataset, ...(out ? ['--out', out] : [])]);
    expect(r.code, r.stderr).toBe(0);
    return r.stdout.trim();
  }

  const ids = async (page: Page): Promise<string[]> => page.locator('#chain-table tbody tr').evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-id') ?? ''));

  /** File names and added lines of a diff, as diff2html must show them. */
  function diffFacts(diff: string): { files: string[]; added: string } {
    const files = [...diff.matchAll(/^\+\+\+ b\/(.+)$/gm)].map((m) => m[1]!);
    const added = diff.split('\n').find((l) => l.startsWith('+') && !l.startsWith('+++') && l.slice(1).trim().length > 3)!.slice(1).trim();
    return { files, added };
  }

  it('loads with no console error, page error or request but itself, and filters the table of every verified chain', async () => {
    expect(file).toBe(join(hf, '..', 'report.html'));
    const { page, problems } = await open(file);
    expect(await ids(page)).toEqual(verified.map((r) => r.instance_id));
    expect(await page.locator('#funnel').innerText()).toMatch(/test split\s+2/);

    await page.fill('#filter-text', 'minilib__3');
    expect(await ids(page)).toEqual(['minilib__3-8']);
    await page.fill('#filter-text', '');
    await page.selectOption('#filter-reason', 'ineligible');
    expect(await ids(page)).toEqual(['minilib__4-11', 'minilib__5-12']);
    await page.selectOption('#filter-reason', '(none)');
    expect(await ids(page)).toEqual(['minilib__1-9', 'minilib__3-8']);
    await page.selectOption('#filter-reason', '');
    await page.selectOption('#filter-split', 'verified');
    expect(await ids(page)).toEqual(['minilib__4-11', 'minilib__5-12', 'minilib__6-10']);
    expect(await page.locator('#filter-count').innerText()).toBe('3 of 5 chains');
    expect(problems).toEqual([]);
  });

  it('a chain opened from the table shows both diffs through diff2html, its commits, sets and states', async () => {
    const { page, problems } = await open(file);
    await page.click('a.chain-link:text-is("minilib__1-9")');
    expect(new URL(page.url()).hash).toBe('#chain=minilib__1-9');
    const r = verified.find((x) => x.instance_id === 'minilib__1-9')!;

    for (const [box, diff] of [['#diff-pr1', `${r.patch}${r.test_patch}`], ['#diff-pr2', `${r.anticipation_patch}${r.anticipation_test_patch}`]] as const) {
      const facts = diffFacts(diff);
      const names = await page.locator(`${box} .d2h-file-wrapper .d2h-file-name`).allInnerTexts();
      expect(names.map((n) => n.trim())).toEqual(facts.files);
      const added = await page.locator(`${box} .d2h-ins .d2h-code-line-ctn`).allInnerTexts();
      expect(added.map((l) => l.trim())).toContain(facts.added);
    }
    for (const k of ['base_commit', 'pr1_head_sha', 'pr2_base_sha', 'pr2_head_sha']) {
      expect(await page.locator(`[data-commit="${k}"]`).innerText()).toBe(r[k]);
    }
    expect(await page.locator('[data-set="FAIL_TO_PASS"] li').allInnerTexts()).toEqual(JSON.parse(r.FAIL_TO_PASS as string));
    expect(await page.locator('[data-set="flaky_tests"] li').allInnerTexts()).toEqual(JSON.parse(r.flaky_tests as string));
    // Per-state outcomes come from data/<repo>/validate/items.jsonl beside the dataset.
    expect(await page.locator('table.states tbody tr td:first-child').allInnerTexts()).toEqual(['S1', 'S2', 'S3', 'S4', 'S5']);
    expect(await page.locator('#sec-verdicts').innerText()).toMatch(/eligibility_verdict\s[\s\S]*verdict\s+bug_fix/);

    const shot = join(tmpdir(), `foresight-report-${new Date().toISOString().replace(/[:.]/g, '-')}.png`);
    await page.screenshot({ path: shot, fullPage: true });
    console.log(`[report.test] screenshot of the chain view: ${shot} (kept after the run with FORESIGHT_KEEP_TEST_TMP=1)`);
    await page.click('#diff-format');
    expect(await page.locator('#diff-pr1 .d2h-file-side-diff').count()).toBeGreaterThan(0);
    expect(problems).toEqual([]);
  });

  it('a chain is addressable by #chain=<instance_id>, and an unknown one says so', async () => {
    const { page, problems } = await open(file, '#chain=minilib__6-10');
    expect(await page.locator('#chain').getAttribute('data-id')).toBe('minilib__6-10');
    expect(await page.locator('#exclusion-reason').innerText()).toBe('unattributed');
    await page.click('#back');
    expect(await ids(page)).toHaveLength(verified.length);
    await page.goto(pathToFileURL(file).href + '#chain=minilib__99-100');
    expect(await page.locator('#chain-missing').innerText()).toContain('minilib__99-100');
    expect(problems).toEqual([]);
  });

  it('markup planted in a PR body and a diff is shown as text: nothing runs, nothing loads', async () => {
    const copy = join(scratch, 'planted', 'hf');
    await cp(hf, copy, { recursive: true });
    const payload = '</script><script>window.__pwned = 1</script><img src="x" onerror="window.__pwned = 2"><!--';
    const evilDiff = [
      'diff --git a/evil<img src=y onerror=window.__pwned=3>.py b/evil<img src=y onerror=window.__pwned=3>.py',
      'new file mode 100644',
      '--- /dev/null',
      '+++ b/evil<img src=y onerror=window.__pwned=3>.py',
      '@@ -0,0 +1 @@',
      `+${payload}`,
      '',
    ].join('\n');
    const rows = verified.map((r) => (r.instance_id === 'minilib__1-9' ? { ...r, problem_statement: payload, pr2_problem_statement_raw: payload, test_patch: evilDiff } : r));
    await writeFile(join(copy, 'jsonl', 'verified.jsonl'), jsonl(rows));
    const planted = await report(copy, join(scratch, 'planted', 'report.html'));
    const { page, problems } = await open(planted, '#chain=minilib__1-9');

    expect(await page.locator('[data-field="problem_statement"]').textContent()).toBe(payload);
    expect(await page.locator('[data-field="pr2_problem_statement_raw"]').textContent()).toBe(payload);
    const names = await page.locator('#diff-pr1 .d2h-file-wrapper .d2h-file-name').allInnerTexts();
    expect(names.map((n) => n.trim())).toContain('evil<img src=y onerror=window.__pwned=3>.py');
    expect((await page.locator('#diff-pr1 .d2h-ins .d2h-code-line-ctn').allInnerTexts()).map((l) => l.trim())).toContain(payload);
    expect(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned)).toBeUndefined();
    // The page's three scripts (data, diff2html, its own) and no element the payload carried.
    expect(await page.locator('script').count()).toBe(3);
    const images = await page.locator('img').evaluateAll((imgs) => imgs.map((i) => ({ src: i.getAttribute('src') ?? '', onerror: i.hasAttribute('onerror') })));
    expect(images.filter((i) => !i.src.startsWith('data:image/svg+xml;base64,') || i.onerror)).toEqual([]);
    expect(problems).toEqual([]);
  });
});
