/**
 * `foresight report` with eval results beside the dataset: the X / Y table per model and each chain's per-test
 * outcomes, rendered by Debian's Chromium from the command line; and why a row is not eval_ready.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { inflateSync } from 'node:zlib';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { GradeResult } from '../../core/env/index.ts';
import { aggregate, instanceReport, type EvalReport, type InstanceReport } from '../../pipeline/eval/report.ts';
import { CHROMIUM, CHROMIUM_ARGS, CI, foresight, json, layout, pageData, row, scratch } from '../helpers/report-fixture.ts';

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
