/**
 * Django's own test runner (tests/runtests.py, `-v 2`) → test ids `test_method (module.Class)` and statuses.
 *
 * Input: the log run_state.sh writes (a `[foresight-django]` header, runtests' stdout+stderr through one
 * pipe, an exit trailer); the combined output of the run is accepted too (no markers, order across
 * stdout/stderr not guaranteed). What the text looks like (all seen in the fixtures, Python 3.10–3.13):
 *
 *   test_x (app.tests.C) ... ok                       Python < 3.11
 *   test_x (app.tests.C.test_x) ... ok                Python ≥ 3.11 (normalised to the form above)
 *   test_y (app.tests.C.test_y)                       a docstring: its first line follows,
 *   First line of the docstring ... FAIL              then " ... " and the status
 *   test_z (app.tests.C.test_z) ... printed textok    the test's own output comes before the status
 *   test_s (app.tests.C.test_s) ...                   ≥ 3.11: failing/skipped subtests get lines of
 *     test_s (app.tests.C.test_s) (i=1) ... FAIL      their own (< 3.11: none, and the next test's
 *                                                     header follows on the same line)
 *   setUpClass (app.tests.C) ... ERROR                a class/module fixture failed (< 3.11: a bare
 *                                                     "ERROR" line); its tests never run or print
 *   test_broken (unittest.loader._FailedTest.test_broken) ... ERROR   a module that cannot be imported
 *   ====… / ERROR: <desc> / ----… / traceback         one block per error and failure, at the end
 *   ----… / Ran N tests in 0.05s / FAILED (failures=1, …) | OK
 *
 * Statuses: ok → pass; FAIL → fail; ERROR → error; skipped '…' → skip; expected failure → skip;
 * unexpected success → fail; several results for one test (subtests) merge as fail > error > skip > pass.
 * The streamed status of a test is the LAST status word at the end of a line before the next test
 * starts (the runner writes it after everything the test printed). FAIL and ERROR are taken from the
 * error blocks whenever the run reached them (a stray "ERROR" of a < 3.11 class fixture then cannot be
 * pinned on the test before it); only a run cut short falls back to the streamed FAIL/ERROR.
 *
 * Tests that never ran because setUpClass/setUpTestData/setUpModule failed (or raised SkipTest) take the
 * fixture's status; a failed tearDownClass/tearDownModule makes every test of its class/module an error.
 * That needs the ids of the tests that were collected: run_state.sh's wrapper prints them
 * (`[foresight-django] collected <test>`); without them such tests are absent.
 *
 * Import failures become collectionErrors (the requested test files): from the wrapper's
 * `[foresight-django] import-error <label>` markers, else from unittest's `_FailedTest` entries, whose
 * name is only the LAST part of the label (`tests` for `app.tests`): the file is then found from the
 * traceback of its error block, or from the name.
 *
 * `problem` says why the run is not evidence: the runner crashed before its summary (settings or app
 * loading failed, a missing dependency; the last traceback line is quoted), the log ends before the
 * runner exited, or the number of results disagrees with Django's own `Ran N tests`.
 */
import type { ParsedRun, TestStatus } from '../types.ts';

export const MARK = '[foresight-django]';

const RANK: Record<TestStatus, number> = { pass: 0, skip: 1, error: 2, fail: 3 };
const worse = (a: TestStatus | undefined, b: TestStatus): TestStatus => (a === undefined || RANK[b] > RANK[a] ? b : a);

const SEP1 = '='.repeat(70);
const SEP2 = '-'.repeat(70);
const FAILED_TEST = 'unittest.loader._FailedTest';
const HOLDERS = new Set(['setUpClass', 'tearDownClass', 'setUpModule', 'tearDownModule']);

/** `name (dotted)` at the start of a text; name and dotted are unicode-safe (no spaces or parentheses). */
const DESC = /^([^\s()]+) \(([^\s()]+)\)/u;
/** A status word at the very end of a line (anything the test printed may precede it). */
const STATUS_END = /(ok|FAIL|ERROR|expected failure|unexpected success|skipped (?:'.*'|".*"))$/u;
const RAN = /^Ran (\d+) tests? in /;

type Token = 'ok' | 'FAIL' | 'ERROR' | 'skip' | 'xfail' | 'xpass';

function token(line: string): Token | null {
  const m = STATUS_END.exec(line);
  if (!m) return null;
  const w = m[1]!;
  if (w.startsWith('skipped')) return 'skip';
  if (w === 'expected failure') return 'xfail';
  if (w === 'unexpected success') return 'xpass';
  return w as Token;
}

const TOKEN_STATUS: Record<Token, TestStatus> = { ok: 'pass', FAIL: 'fail', ERROR: 'error', skip: 'skip', xfail: 'skip', xpass: 'fail' };

interface Desc {
  /** `test_x (module.Class)`; for a fixture holder `setUpClass (module.Class)`. */
  id: string;
  name: string;
  /** Dotted class path (module path for module fixtures), without the ≥ 3.11 `.test_x` suffix. */
  cls: string;
  /** Characters of the text the description used. */
  length: number;
}

/** Parse `test_x (module.Class[.test_x])` at the start of `text`. */
export function parseDesc(text: string): Desc | null {
  const m = DESC.exec(text);
  if (!m) return null;
  const name = m[1]!;
  let cls = m[2]!;
  if (cls.endsWith(`.${name}`)) cls = cls.slice(0, -(name.length + 1));
  return { id: `${name} (${cls})`, name, cls, length: m[0].length };
}

const isFailedTest = (d: Desc): boolean => d.cls === FAILED_TEST;
const isHolder = (d: Desc): boolean => HOLDERS.has(d.name) && !d.cls.startsWith('unittest.loader.');
/** A real test: a dotted class path (module.Class), not a load failure or a fixture holder. */
const isTest = (d: Desc): boolean => !isFailedTest(d) && !isHolder(d) && d.cls.includes('.');

const IDENT_PATH = /^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)+$/;

/**
 * The runtests.py label of a test file, as run_state.sh derives it: `tests/foo/tests.py` → `foo.tests`,
 * `tests/foo/tests/test_x.py` → `foo.tests.test_x`; null for files that are not modules of a test app.
 */
export function djangoLabel(file: string): string | null {
  const f = file.replace(/\\/g, '/').replace(/^\.\//, '');
  if (!/^tests\/[^/]+\/.+\.py$/.test(f)) return null;
  const label = f.slice('tests/'.length, -'.py'.length).replace(/\//g, '.');
  return IDENT_PATH.test(label) ? label : null;
}

/** The requested test file a test id (`test_x (module.Class)`) belongs to, or null. */
export function djangoTestFile(id: string, testFiles: readonly string[]): string | null {
  const d = parseDesc(id);
  if (!d) return null;
  let best: { file: string; len: number } | null = null;
  for (const file of testFiles) {
    const label = djangoLabel(file);
    if (label && d.cls.startsWith(`${label}.`) && (!best || label.length > best.len)) best = { file, len: label.length };
  }
  return best?.file ?? null;
}

interface Block {
  kind: 'FAIL' | 'ERROR' | 'UNEXPECTED SUCCESS';
  desc: Desc;
  body: string;
}

interface Holder {
  desc: Desc;
  status: TestStatus;
}

export interface DjangoParse extends ParsedRun {
  /** `Ran N tests` of the summary, or null when the run did not reach it. */
  ran: number | null;
  /** The exit code from the log's trailer, or null (no trailer: killed, or not a run_state.sh log). */
  exitCode: number | null;
}

/** Whether `text` is a log written by run_state.sh (rather than, e.g., a JUnit file). */
export function isDjangoLog(text: string): boolean {
  return text.startsWith(`${MARK} v1`);
}

export function parseDjangoLog(text: string, testFiles: readonly string[]): DjangoParse {
  const all = text.split(/\r?\n/);
  // ---- markers (run_state.sh and its wrapper) ----
  const labelFile = new Map<string, string>();
  const importErrors: string[] = [];
  const collected = new Map<string, Desc>();
  let hasHeader = false;
  let labelMarkers = 0;
  let exitCode: number | null = null;
  const lines: string[] = [];
  for (const line of all) {
    if (!line.startsWith(`${MARK} `)) {
      lines.push(line);
      continue;
    }
    const rest = line.slice(MARK.length + 1);
    const [word = '', ...args] = rest.split(' ');
    if (word === 'v1') hasHeader = true;
    else if (word === 'label' && args.length >= 2) {
      labelFile.set(args[0]!, args.slice(1).join(' '));
      labelMarkers++;
    }
    else if (word === 'import-error' && args[0]) importErrors.push(args[0]);
    else if (word === 'collected') {
      const d = parseDesc(args.join(' '));
      if (d && isTest(d)) collected.set(d.id, d);
    } else if (word === 'exit' && /^\d+$/.test(args[0] ?? '')) exitCode = Number(args[0]);
  }
  if (labelFile.size === 0) {
    for (const f of testFiles) {
      const label = djangoLabel(f);
      if (label) labelFile.set(label, f);
    }
  }

  // ---- sections: streamed results, error blocks, summary ----
  let summaryAt = -1;
  for (let i = lines.length - 1; i > 0; i--) {
    if (RAN.test(lines[i]!) && lines[i - 1] === SEP2) {
      summaryAt = i;
      break;
    }
  }
  const ran = summaryAt >= 0 ? Number(RAN.exec(lines[summaryAt]!)![1]) : null;
  const streamEnd = (() => {
    const stop = summaryAt >= 0 ? summaryAt - 1 : lines.length;
    for (let i = 0; i < stop; i++) {
      if (lines[i] === SEP1 && /^(ERROR|FAIL|UNEXPECTED SUCCESS): /.test(lines[i + 1] ?? '')) return i;
    }
    return stop;
  })();
  const blocks = parseBlocks(lines.slice(streamEnd, summaryAt >= 0 ? summaryAt - 1 : lines.length));
  const completed = summaryAt >= 0;

  // ---- streamed results ----
  // With the wrapper's list of collected tests, only those (and load failures, fixture holders) start
  // a result: a test printing something that looks like a header cannot fake one.
  const isKnown = (d: Desc): boolean => collected.size === 0 || collected.has(d.id);
  const streamed = new Map<string, Token[]>(); // test id → status words seen, in order
  const descs = new Map<string, Desc>(); // every real test seen anywhere
  const holders: Holder[] = [];
  const failedStreamed: Desc[] = [];
  let current: { desc: Desc; tokens: Token[] } | null = null;

  const close = (): void => {
    if (current === null) return;
    const { desc, tokens } = current;
    current = null;
    if (isHolder(desc)) {
      const t = lastToken(tokens, !completed);
      if (t) holders.push({ desc, status: TOKEN_STATUS[t] });
    } else if (isFailedTest(desc)) {
      failedStreamed.push(desc);
    } else {
      descs.set(desc.id, desc);
      streamed.set(desc.id, [...(streamed.get(desc.id) ?? []), ...tokens]);
    }
  };
  const start = (desc: Desc): void => {
    close();
    current = { desc, tokens: [] };
  };
  /** `desc` alone or followed by " ... " at the start of `text`: a test starting. */
  const header = (text: string): { desc: Desc; rest: string | null } | null => {
    const d = parseDesc(text);
    if (!d) return null;
    const after = text.slice(d.length);
    if (after !== '' && !after.startsWith(' ... ')) return null;
    if (!(isHolder(d) || isFailedTest(d) || (isTest(d) && isKnown(d)))) return null;
    return { desc: d, rest: after === '' ? null : after.slice(5) };
  };
  /**
   * Text written after a test started. A test that reported nothing (< 3.11, failed subtests) is
   * followed on the same line by the next header: right after its " ... " (`afterHeader`), or after
   * the " ... " that ends its docstring line.
   */
  const feed = (text: string, afterHeader: boolean): void => {
    const starts = afterHeader ? [0] : [];
    for (let at = text.indexOf(' ... '); at >= 0; at = text.indexOf(' ... ', at + 1)) starts.push(at + 5);
    for (const at of starts) {
      const h = header(text.slice(at));
      if (h) {
        start(h.desc);
        if (h.rest !== null) feed(h.rest, true);
        return;
      }
    }
    const t = token(text);
    if (t && current !== null) current.tokens.push(t);
  };

  for (let i = 0; i < streamEnd; i++) {
    const line = lines[i]!;
    if (line === SEP2) {
      close();
      continue;
    }
    // ≥ 3.11: a failed/skipped subtest's own line, indented, with its params: counts for its test.
    if (current !== null && line.startsWith('  ')) {
      const cur: { desc: Desc; tokens: Token[] } = current;
      const d = parseDesc(line.slice(2));
      if (d && d.id === cur.desc.id) {
        const t = token(line);
        if (t) cur.tokens.push(t);
        continue;
      }
    }
    const h = header(line);
    if (h) {
      start(h.desc);
      if (h.rest !== null) feed(h.rest, true);
    } else if (current !== null) {
      feed(line, false);
    }
  }
  close();

  // ---- statuses ----
  const tests: Record<string, TestStatus> = {};
  const reported = new Set<string>();
  for (const [id, tokens] of streamed) {
    // A streamed FAIL/ERROR without its block (blocks lost in a truncated output) still counts.
    const t = lastToken(tokens, !completed) ?? lastToken(tokens, true);
    if (t) tests[id] = worse(tests[id], TOKEN_STATUS[t]);
    if (tokens.length > 0) reported.add(id);
  }
  // One _FailedTest per module that failed to import: the streamed ones, else (run cut short) the blocks.
  const failedBlocks = blocks.filter((b) => isFailedTest(b.desc));
  const failedTests: Array<{ desc: Desc; body: string }> =
    failedStreamed.length > 0
      ? failedStreamed.map((desc, k) => ({
          desc,
          body: failedBlocks.filter((b) => b.desc.id === desc.id)[failedStreamed.slice(0, k).filter((d) => d.id === desc.id).length]?.body ?? '',
        }))
      : failedBlocks.map((b) => ({ desc: b.desc, body: b.body }));
  for (const b of blocks) {
    const d = b.desc;
    if (isFailedTest(d)) continue;
    const status: TestStatus = b.kind === 'ERROR' ? 'error' : 'fail';
    if (isHolder(d)) {
      holders.push({ desc: d, status });
      continue;
    }
    if (!isTest(d)) continue;
    descs.set(d.id, d);
    reported.add(d.id);
    tests[d.id] = worse(tests[d.id], status);
  }
  // Fixture failures: the tests of the class/module that never ran, or (teardown) all of them.
  const inScope = (h: Desc, d: Desc): boolean => (h.name.endsWith('Class') ? d.cls === h.cls : d.cls.startsWith(`${h.cls}.`));
  for (const h of holders) {
    const teardown = h.desc.name.startsWith('tearDown');
    const pool = new Map([...collected, ...descs]);
    for (const d of pool.values()) {
      if (!inScope(h.desc, d)) continue;
      if (teardown) {
        if (h.status !== 'skip') tests[d.id] = worse(tests[d.id], h.status);
      } else if (tests[d.id] === undefined) {
        tests[d.id] = h.status;
      }
    }
  }

  // ---- import failures ----
  const collectionErrors = new Set<string>();
  const fileOfLabel = (label: string): string => labelFile.get(label) ?? `tests/${label.replace(/\./g, '/')}.py`;
  if (hasHeader) {
    for (const label of importErrors) collectionErrors.add(fileOfLabel(label));
  } else {
    for (const { desc, body } of failedTests) {
      for (const f of filesOfFailedImport(desc.name, body, labelFile)) collectionErrors.add(f);
    }
  }

  // ---- is the run evidence? ----
  let problem: string | undefined;
  const results = reported.size + failedTests.length;
  if (!completed) {
    const nothingToRun = hasHeader && labelMarkers === 0 && exitCode === 0;
    if (hasHeader && exitCode === null) {
      problem = `the log ends before the test runner exited (killed?) after ${results} result(s): ${lastLine(lines)}`;
    } else if (!nothingToRun && (exitCode !== 0 || /^Traceback \(most recent call last\):/m.test(text))) {
      const what = results === 0 ? 'crashed before running any test' : `stopped after ${results} result(s) without its summary`;
      problem = `Django's test runner ${what}: ${crashLine(lines)}`;
    }
  } else if (ran !== null) {
    // Python 3.12 (seen with 3.12.1) leaves tests skipped by a decorator out of "Ran N"; 3.10, 3.11, 3.13 count them.
    const skipped = [...reported].filter((id) => tests[id] === 'skip').length;
    if (ran > results || ran < results - skipped) {
      problem = `parsed ${results} test result(s) but Django reports "Ran ${ran} test${ran === 1 ? '' : 's'}"`;
    }
  }

  const out: DjangoParse = { tests, collectionErrors: [...collectionErrors].sort(), ran, exitCode };
  if (problem !== undefined) out.problem = problem;
  return out;
}

/** The status word that counts among those streamed for one test (see the header comment). */
function lastToken(tokens: readonly Token[], useFailError: boolean): Token | null {
  for (let i = tokens.length - 1; i >= 0; i--) {
    const t = tokens[i]!;
    if (useFailError || (t !== 'FAIL' && t !== 'ERROR')) return t;
  }
  return null;
}

/** `====` / `KIND: desc` [/ docstring] / `----` / body … ; UNEXPECTED SUCCESS lines have no body. */
function parseBlocks(lines: readonly string[]): Block[] {
  const blocks: Array<{ kind: Block['kind']; desc: Desc; body: string[] }> = [];
  let inBlock = false;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const m = /^(ERROR|FAIL|UNEXPECTED SUCCESS): (.*)$/.exec(line);
    const prev = blocks[blocks.length - 1];
    const unexpected = m?.[1] === 'UNEXPECTED SUCCESS' && inBlock && prev?.kind === 'UNEXPECTED SUCCESS';
    if (m && (lines[i - 1] === SEP1 || unexpected)) {
      const desc = parseDesc(m[2]!);
      inBlock = desc !== null;
      if (desc) blocks.push({ kind: m[1] as Block['kind'], desc, body: [] });
    } else if (line === SEP1 && /^(ERROR|FAIL|UNEXPECTED SUCCESS): /.test(lines[i + 1] ?? '')) {
      inBlock = false;
    } else if (inBlock && prev) {
      prev.body.push(line);
    }
  }
  return blocks.map((b) => ({ kind: b.kind, desc: b.desc, body: b.body.join('\n') }));
}

/**
 * unittest names a failed import by the last part of the label (`tests` for `app.tests`), or by its
 * first part when even the package failed: prefer the requested files its traceback goes through.
 */
function filesOfFailedImport(name: string, body: string, labelFile: ReadonlyMap<string, string>): string[] {
  const byName = [...labelFile].filter(([label]) => {
    const parts = label.split('.');
    return label === name || parts[parts.length - 1] === name || parts[0] === name;
  });
  const inTraceback = byName.filter(([, file]) => body.includes(`/${file}"`) || body.includes(`"${file}"`));
  if (inTraceback.length > 0) return inTraceback.map(([, f]) => f);
  if (byName.length > 0) return byName.map(([, f]) => f);
  return [`tests/${name.replace(/\./g, '/')}.py`];
}

/** The line that says why the runner died: the exception after the last traceback, else the last line. */
function crashLine(lines: readonly string[]): string {
  let tb = -1;
  for (let i = lines.length - 1; i >= 0; i--) {
    if (lines[i]!.startsWith('Traceback (most recent call last):')) {
      tb = i;
      break;
    }
  }
  if (tb >= 0) {
    let exc: string | null = null;
    for (let i = tb + 1; i < lines.length; i++) {
      const l = lines[i]!;
      if (l !== '' && !/^\s/.test(l)) exc = l;
      else if (exc !== null && l === '') break;
    }
    if (exc) return exc.slice(0, 300);
  }
  return lastLine(lines);
}

function lastLine(lines: readonly string[]): string {
  for (let i = lines.length - 1; i >= 0; i--) if (lines[i]!.trim() !== '') return lines[i]!.trim().slice(0, 300);
  return '(no output)';
}
