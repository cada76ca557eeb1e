/**
 * JavaScript runners' JSON reports → test ids and statuses.
 *
 * An id is `<file>::<describe titles and the test's title joined by " > ">`, the file the requested test
 * file the runner's absolute path names (`src/a.test.js::parse > handles empty input`): no duration, no
 * random part. Two tests with the same full title in one file are kept apart by ` #2`, ` #3`, … in report
 * order. Statuses: passed → pass, failed → fail, any other (skipped, pending, todo, disabled) → skip.
 *
 * A test file that did not run (a syntax or import error, jest's "Test suite failed to run", a hook
 * outside every test that failed) is a collection error and none of its tests is reported, as pytest's
 * import errors are; the other files' results stay. Results of files that were not requested (a runner
 * whose file arguments are patterns) are dropped.
 */
import { z } from 'zod';
import { ForesightError } from '../../foundation/errors.ts';
import type { ParsedRun, TestStatus } from './types.ts';

/** JavaScript and TypeScript modules, the files these runners load as tests. */
export function isJsModule(file: string): boolean {
  return /\.[cm]?[jt]sx?$/.test(file);
}

/** The requested test file an absolute (or root-relative) path the runner reports names: the longest one it ends with. */
export function requestedFile(reported: string, testFiles: readonly string[]): string | null {
  let best: string | null = null;
  for (const f of testFiles) {
    if ((reported === f || reported.endsWith(`/${f}`)) && (best === null || f.length > best.length)) best = f;
  }
  return best;
}

/** Ids in report order: a full title seen before in the file gets ` #2`, ` #3`, … (never an id already given). */
export class TestIds {
  private readonly counts = new Map<string, number>();
  private readonly used = new Set<string>();

  add(file: string, titles: readonly string[]): string {
    const base = `${file}::${titles.join(' > ')}`;
    let n = this.counts.get(base) ?? 0;
    let id: string;
    do {
      n++;
      id = n === 1 ? base : `${base} #${n}`;
    } while (this.used.has(id));
    this.counts.set(base, n);
    this.used.add(id);
    return id;
  }
}

// Terminal colour codes jest and vitest put in messages.
const ANSI = /\u001b\[[0-9;]*m/g;

/** The class of the error a failure message or stack starts with (`AssertionError`, `TypeError`), or null. */
export function errorKind(message: string | undefined): string | null {
  if (!message) return null;
  const m = /^\s*([A-Za-z_$][\w$]*)(?:\s*\[[^\]\n]*\])?:/.exec(message.replace(ANSI, ''));
  const name = m?.[1];
  return name !== undefined && (name === 'Error' || /^[A-Z][\w$]*(Error|Exception)$/.test(name)) ? name : null;
}

function unreadable(runner: string, why: string): ForesightError {
  return new ForesightError(`${runner}'s JSON report is unreadable: ${why}`, {
    remedy: 'the run was probably killed while writing it, or something besides the runner wrote to the report: rerun the state',
  });
}

function parseJson(runner: string, text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw unreadable(runner, (err as Error).message);
  }
}

function status(s: string): TestStatus {
  return s === 'passed' ? 'pass' : s === 'failed' ? 'fail' : 'skip';
}

const JestAssertion = z.object({
  ancestorTitles: z.array(z.string()),
  title: z.string(),
  status: z.string(),
  failureMessages: z.array(z.string()).nullish(),
});

/** jest's `--json` report; vitest's json reporter writes the same shape. */
const JestReport = z.object({
  testResults: z.array(
    z.object({
      name: z.string(),
      status: z.string(),
      message: z.string().nullish(),
      assertionResults: z.array(JestAssertion),
    }),
  ),
});

function finish(tests: Record<string, TestStatus>, collectionErrors: Set<string>, failureKinds: Record<string, string>, problem?: string): ParsedRun {
  return {
    tests,
    collectionErrors: [...collectionErrors].sort(),
    ...(Object.keys(failureKinds).length ? { failureKinds } : {}),
    ...(problem !== undefined ? { problem } : {}),
  };
}

/** jest's `--json` report or vitest's json report. Throws ForesightError when it is not one (truncated, or written over). */
export function parseJestReport(runner: string, text: string, testFiles: readonly string[]): ParsedRun {
  const doc = JestReport.safeParse(parseJson(runner, text));
  if (!doc.success) throw unreadable(runner, `not a jest-style report (${doc.error.issues[0]?.message ?? 'bad shape'})`);
  const tests: Record<string, TestStatus> = {};
  const failureKinds: Record<string, string> = {};
  const collectionErrors = new Set<string>();
  const ids = new TestIds();
  for (const suite of doc.data.testResults) {
    const file = requestedFile(suite.name, testFiles);
    if (file === null) continue;
    // A file that failed with no failing test did not run: it did not load, or a hook outside every test
    // failed (jest: afterAll; vitest: beforeAll, its tests then skipped).
    if (suite.status === 'failed' && !suite.assertionResults.some((a) => a.status === 'failed')) {
      collectionErrors.add(file);
      continue;
    }
    for (const a of suite.assertionResults) {
      // vitest 1.x names the file's own suite "" first: not a describe block.
      const id = ids.add(file, [...a.ancestorTitles.filter((t, i) => i > 0 || t !== ''), a.title]);
      tests[id] = status(a.status);
      const kind = tests[id] === 'fail' ? errorKind(a.failureMessages?.[0]) : null;
      if (kind !== null) failureKinds[id] = kind;
    }
  }
  return finish(tests, collectionErrors, failureKinds);
}

const MochaEntry = z.object({
  title: z.string(),
  file: z.string().nullish(),
  titlePath: z.array(z.string()),
  state: z.string().nullish(),
  type: z.string().nullish(),
  err: z.object({ message: z.string().optional(), stack: z.string().optional(), name: z.string().optional() }).passthrough().nullish(),
});

/** One line of the mocha report: foresight-json.cjs's (mocha's json reporter with title paths), or the run script's load error. */
const MochaLine = z.union([
  z.object({ loadError: z.string() }),
  z.object({ tests: z.array(MochaEntry), failures: z.array(MochaEntry) }),
]);

/**
 * The mocha report: one line of JSON per mocha process (the joint run, or each file alone when the
 * joint run could not load one), `{"loadError": "<file>"}` for a file that could not be loaded alone.
 * A failed hook is an `error` of the id its title path gives (`suite > "before each" hook for "x"`); the
 * tests it kept from running are absent. Throws ForesightError when a line is not one of these, or when
 * two lines report one file (something besides the runner wrote to the report).
 */
export function parseMochaReport(text: string, testFiles: readonly string[]): ParsedRun {
  const tests: Record<string, TestStatus> = {};
  const failureKinds: Record<string, string> = {};
  const collectionErrors = new Set<string>();
  const ids = new TestIds();
  const reported = new Set<string>();
  let problem: string | undefined;
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    const doc = MochaLine.safeParse(parseJson('mocha', line));
    if (!doc.success) throw unreadable('mocha', `a line is neither mocha's json nor a load error (${doc.error.issues[0]?.message ?? 'bad shape'})`);
    const d = doc.data;
    if ('loadError' in d) {
      const file = requestedFile(d.loadError, testFiles);
      if (file !== null) collectionErrors.add(file);
      continue;
    }
    const files = new Set<string>();
    const fileOf = (e: z.infer<typeof MochaEntry>): string | null => (e.file ? requestedFile(e.file, testFiles) : null);
    for (const e of d.tests) {
      const file = fileOf(e);
      if (file === null) continue;
      if (reported.has(file)) throw unreadable('mocha', `two reports of ${file}`);
      files.add(file);
      const id = ids.add(file, e.titlePath);
      tests[id] = e.state === 'failed' ? 'fail' : e.state === 'passed' ? 'pass' : 'skip';
      const kind = tests[id] === 'fail' ? errorKind(e.err?.stack ?? (e.err?.name ? `${e.err.name}: ${e.err.message ?? ''}` : undefined)) : null;
      if (kind !== null) failureKinds[id] = kind;
    }
    for (const e of d.failures) {
      if (e.type !== 'hook') continue;
      const file = fileOf(e);
      if (file === null) {
        // A root hook of no requested file (a --require'd one) failed: no test of any file ran as written.
        problem ??= `a mocha hook outside the test files failed: ${e.titlePath.join(' > ')}: ${(e.err?.message ?? '').split('\n')[0]}`;
        continue;
      }
      if (reported.has(file)) throw unreadable('mocha', `two reports of ${file}`);
      files.add(file);
      tests[ids.add(file, e.titlePath)] = 'error';
    }
    for (const f of files) reported.add(f);
  }
  return finish(tests, collectionErrors, failureKinds, problem);
}
