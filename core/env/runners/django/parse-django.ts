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
 * An `async def` test that a runner before Django 3.1 called without awaiting prints `ok` without having
 * run; Python's "RuntimeWarning: coroutine 'Class.test_x' was never awaited" while it is current makes
 * it skip (`notRun` says why).
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
import {
  type Desc,
  djangoLabel,
  isFailedTest,
  isHolder,
  isTest,
  lastToken,
  parseDesc,
  type Token,
  TOKEN_STATUS,
  token,
  worse,
} from './django-ids.ts';
import { crashLine, exceptionType, filesOfFailedImport, lastLine, parseBlocks, SEP1, SEP2 } from './django-log.ts';

export { djangoLabel, djangoTestFile, parseDesc } from './django-ids.ts';

export const MARK = '[foresight-django]';

const RAN = /^Ran (\d+) tests? in /;
// Before Django 3.1 (17009e9105) the runner called an `async def` test without awaiting it: the test
// "passes" without running, and Python warns, while the test is current, with its qualified name.
const NEVER_AWAITED = /RuntimeWarning: coroutine '([\w.]+)' was never awaited/;

interface Holder {
  desc: Desc;
  status: TestStatus;
  /** The exception its error block ended with, when there is one. */
  kind?: string | null;
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
  let current = null as { desc: Desc; tokens: Token[] } | null; // not narrowed: the closures below set it

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

  const unawaited = new Set<string>();
  const awaitedNever = (qualname: string, d: Desc | undefined): void => {
    if (d !== undefined && isTest(d) && `${d.cls}.${d.name}`.endsWith(`.${qualname}`)) unawaited.add(d.id);
  };
  for (let i = 0; i < streamEnd; i++) {
    const line = lines[i]!;
    if (line === SEP2) {
      close();
      continue;
    }
    // The warning shares a line with its test's header (no warnings filter) or follows it (an error).
    const coroutine = NEVER_AWAITED.exec(line)?.[1];
    if (coroutine !== undefined) awaitedNever(coroutine, current?.desc);
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
    if (coroutine !== undefined) awaitedNever(coroutine, current?.desc);
  }
  close();

  // ---- statuses ----
  const tests: Record<string, TestStatus> = {};
  // The first failure block of a test names its exception (subtests: the first that failed).
  const failureKinds: Record<string, string> = {};
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
      holders.push({ desc: d, status, kind: exceptionType(b.body) });
      continue;
    }
    if (!isTest(d)) continue;
    descs.set(d.id, d);
    reported.add(d.id);
    tests[d.id] = worse(tests[d.id], status);
    const kind = exceptionType(b.body);
    if (kind !== null) failureKinds[d.id] ??= kind;
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
      } else continue;
      // A test failed by its fixture ended with the fixture's exception.
      if (h.kind && h.status !== 'skip') failureKinds[d.id] ??= h.kind;
    }
  }

  // A test whose coroutine was never awaited did not run, whatever the runner printed.
  const notRun: Record<string, string> = {};
  for (const id of unawaited) {
    if (tests[id] !== 'pass') continue;
    tests[id] = 'skip';
    notRun[id] = "its coroutine was never awaited (this commit's test runner does not run async tests)";
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
  if (Object.keys(failureKinds).length) out.failureKinds = failureKinds;
  if (Object.keys(notRun).length) out.notRun = notRun;
  if (problem !== undefined) out.problem = problem;
  return out;
}

/**
 * A log of a run with FORESIGHT_PASSES (run_state.sh): one report per pass the runner reached, each the
 * log's part before the first pass (header, labels, collected tests, database setup) followed by that
 * pass's section and, when the pass finished, an exit trailer with its own verdict (0 every test passed,
 * 1 some failed). A log without pass markers (the runner stopped before its first pass, or its Django
 * cannot run passes) is one report as it is.
 */
export function splitPasses(log: string): Array<{ report: string; exitCode: number | null }> {
  const lines = log.split('\n');
  const starts: number[] = [];
  lines.forEach((l, i) => {
    if (/^\[foresight-django\] pass \d+$/.test(l)) starts.push(i);
  });
  if (!isDjangoLog(log) || starts.length === 0) return [{ report: log, exitCode: null }];
  const preamble = lines.slice(0, starts[0]);
  return starts.map((at, k) => {
    const next = starts[k + 1] ?? lines.length;
    const section = lines.slice(at, next);
    const end = section.findIndex((l) => l.startsWith(`${MARK} pass-end `));
    const code = end >= 0 ? /^\S+ pass-end \d+ (\d+)$/.exec(section[end]!)?.[1] : undefined;
    // An unfinished pass keeps its whole section and gets no trailer: the parser then reads it as cut short.
    const body = end >= 0 ? section.slice(0, end) : section;
    const trailer = code !== undefined ? [`${MARK} exit ${code}`] : [];
    return { report: [...preamble, ...body, ...trailer, ''].join('\n'), exitCode: code !== undefined ? Number(code) : null };
  });
}
