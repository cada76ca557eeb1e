/**
 * `foresight report`: the demo mined for real (Docker), its page written by the CLI and opened in Debian's
 * headless Chromium with every request, console message and page error watched (the page must load
 * nothing but itself), the table filtered, a chain's view opened and its diffs checked, a screenshot
 * taken; a copy of the dataset with markup planted in a PR body and a diff shows it as text. The
 * reading and escaping tests need neither Docker nor a browser.
 */
import { existsSync } from 'node:fs';
import { cp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isDockerReachable } from '../../core/env/index.ts';
import { scriptJson } from '../../pipeline/report/index.ts';
import { minedDemoCopy } from '../helpers/demo.ts';
import { CHROMIUM, CHROMIUM_ARGS, CI, foresight, json, jsonl, layout, pageData, row, scratch, states } from '../helpers/report-fixture.ts';

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
    expect(data.rows.map((x) => [x.instance_id, x.split, x.eval_ready])).toEqual([['widgets__1-2', 'test', true], ['widgets__3-4', 'funnel', null]]);
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
    expect(r.stderr).toMatch(/funnel\.jsonl:2: PASS_TO_PASS: is not a JSON-encoded value — emit the dataset again/);
    expect(r.stderr).not.toMatch(/\n\s+at .*\.(ts|js):\d+/);
    expect(existsSync(join(scratch, 'bad-set.html'))).toBe(false);
  });

  it('a row only `verified` holds (published earlier, now excluded) is marked verified; a folder without a funnel reads its verified.jsonl as every chain, and says so', async () => {
    const hf = await layout('republished', [row('widgets__1-2'), row('widgets__3-4', { gradeable: false, excluded: true, exclusion_reason: 'pr1_no_tests' })]);
    const republished = row('widgets__5-6', { excluded: true, exclusion_reason: 'gold_check_failed' });
    await writeFile(join(hf, 'jsonl', 'verified.jsonl'), jsonl([row('widgets__1-2'), republished]));
    const r = await foresight(['report', '--dataset', hf]);
    expect(r.code, r.stderr).toBe(0);
    const data = await pageData(join(hf, '..', 'report.html'));
    expect(data.rows.map((x) => [x.instance_id, x.split])).toEqual([['widgets__1-2', 'test'], ['widgets__3-4', 'funnel'], ['widgets__5-6', 'verified']]);
    expect(r.stderr).not.toMatch(/no funnel\.jsonl/);

    // An older foresight's folder: verified.jsonl held every chain, and there is no funnel.jsonl.
    const older = await layout('older', [row('widgets__1-2')]);
    await writeFile(join(older, 'jsonl', 'verified.jsonl'), jsonl([row('widgets__1-2'), row('widgets__3-4', { gradeable: false, excluded: true, exclusion_reason: 'pr1_no_tests' })]));
    await rm(join(older, 'jsonl', 'funnel.jsonl'));
    const o = await foresight(['report', '--dataset', older]);
    expect(o.code, o.stderr).toBe(0);
    expect(o.stderr).toMatch(/has no funnel\.jsonl \(an older foresight wrote it\): every chain is read from verified\.jsonl/);
    expect((await pageData(join(older, '..', 'report.html'))).rows.map((x) => [x.instance_id, x.split])).toEqual([['widgets__1-2', 'test'], ['widgets__3-4', 'funnel']]);
  });

  it('a folder that is not an emitted dataset is refused with the folder to pass', async () => {
    const r = await foresight(['report', '--dataset', scratch]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/holds no jsonl\/funnel\.jsonl — pass --dataset <the emitted dataset folder>/);
    const missing = await foresight(['report', '--dataset', join(scratch, 'nope')]);
    expect(missing.stderr).toMatch(/--dataset .*nope is not a folder/);
  });
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
  let funnel: Array<Record<string, string | boolean | null>>;

  beforeAll(async () => {
    if (!chromiumThere) throw new Error(`${CHROMIUM} is missing: install Debian's chromium (scripts/setup.sh does)`);
    if (!dockerUp) throw new Error('Docker is not reachable: the report test mines the demo (run scripts/setup.sh)');
    const data = await minedDemoCopy();
    hf = join(data, 'demo__minilib', 'emit', 'hf');
    funnel = (await readFile(join(hf, 'jsonl', 'funnel.jsonl'), 'utf8')).trim().split('\n').map((l) => JSON.parse(l) as Record<string, string | boolean | null>);
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

  it('loads with no console error, page error or request but itself, and filters the table of every mined chain (the funnel)', async () => {
    expect(file).toBe(join(hf, '..', 'report.html'));
    const { page, problems } = await open(file);
    expect(await ids(page)).toEqual(funnel.map((r) => r.instance_id));
    expect(await page.locator('#funnel').innerText()).toMatch(/test split\s+2/);

    await page.fill('#filter-text', 'minilib__3');
    expect(await ids(page)).toEqual(['minilib__3-8']);
    await page.fill('#filter-text', '');
    await page.selectOption('#filter-reason', 'ineligible');
    expect(await ids(page)).toEqual(['minilib__4-11', 'minilib__5-12']);
    await page.selectOption('#filter-reason', '(none)');
    expect(await ids(page)).toEqual(['minilib__1-9', 'minilib__3-8']);
    await page.selectOption('#filter-reason', '');
    await page.selectOption('#filter-split', 'funnel');
    expect(await ids(page)).toEqual(['minilib__4-11', 'minilib__5-12', 'minilib__6-10']);
    expect(await page.locator('#filter-count').innerText()).toBe('3 of 5 chains');
    expect(problems).toEqual([]);
  });

  it('a chain opened from the table shows both diffs through diff2html, its commits, sets and states', async () => {
    const { page, problems } = await open(file);
    await page.click('a.chain-link:text-is("minilib__1-9")');
    expect(new URL(page.url()).hash).toBe('#chain=minilib__1-9');
    const r = funnel.find((x) => x.instance_id === 'minilib__1-9')!;

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
    // The offline rules abstain on the demo's fixes (nothing they read reliably excludes them): no verdict.
    expect(r.eligibility_verdict).toBeNull();
    expect(await page.locator('#sec-verdicts').innerText()).toMatch(/eligibility_verdict\s+no judge answered/);

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
    expect(await ids(page)).toHaveLength(funnel.length);
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
    const rows = funnel.map((r) => (r.instance_id === 'minilib__1-9' ? { ...r, problem_statement: payload, pr2_problem_statement_raw: payload, test_patch: evilDiff } : r));
    await writeFile(join(copy, 'jsonl', 'funnel.jsonl'), jsonl(rows));
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
