/**
 * The go runner's report (run_state.sh: one JSON object per line) → test ids and statuses.
 *
 * Ids are `<file>::<TestName>`: the top-level tests (and fuzz tests) the requested file declares
 * (run_state.sh's marker line of each directory says which file declares which). A subtest is never an
 * id: its parent's final action covers it (a failing `TestA/case` fails `TestA`).
 *
 * Per directory (one `go test` each):
 * - a package that does not build or cannot be set up (go's `FAIL\t<pkg> [build failed]` /
 *   `[setup failed]` line before go 1.24, `FailedBuild` / `build-fail` events from 1.24 on, or go
 *   exiting 1 or 2 before any event of the package) puts every requested file of the directory into
 *   `collectionErrors`, and none of its tests is reported;
 * - a test's status is the worst of its final actions (fail > skip > pass): before go 1.20 test2json
 *   reads the tests' plain output, so a line a test prints can add an action, never remove the real one;
 * - a requested test with no final action is `fail` when its package failed (the binary panicked or
 *   exited early: go then fails the package), and absent otherwise (a TestMain that exits 0 without
 *   running it: it did not run, so it never passes);
 * - in a failed package in which no requested test reported a failure, a pass that is the binary's last
 *   test event is `fail`: that test was running when the binary failed (a test that printed go's pass
 *   line itself and exited; a TestMain's own check after the tests), so its pass is no evidence.
 * The go command failing before it reached the package (`go: go.mod requires go >= 1.22`, no go.mod,
 * inconsistent vendoring) is the environment's fault, not the tests': `problem`, and the run is no
 * evidence.
 */
import { ForesightError } from '../../../foundation/errors.ts';
import type { ParsedRun, TestStatus } from '../types.ts';

const RANK: Record<TestStatus, number> = { pass: 0, skip: 1, error: 2, fail: 3 };

/** A test id of the go runner: the requested file and the top-level test's name. */
export function goTestId(file: string, name: string): string {
  return `${file}::${name}`;
}

/** What one directory's `go test` reported. */
interface DirRun {
  dir: string;
  /** Requested file → the tests it declares (those run). */
  files: Map<string, string[]>;
  /** Top-level test → its final actions, in order. */
  finals: Map<string, TestStatus[]>;
  /** The package's own final action. */
  packageAction: 'pass' | 'fail' | 'skip' | null;
  buildFailed: boolean;
  /** Any event of the package (go reached it). */
  sawPackage: boolean;
  stderr: string[];
  /** go's exit code; null when the report ends before it. */
  code: number | null;
  /** The last event of a top-level test. */
  last: { test: string; action: string } | null;
}

type Json = Record<string, unknown>;

const FINAL = new Set(['pass', 'fail', 'skip']);

function malformed(line: number, why: string): ForesightError {
  return new ForesightError(`the go runner's report is malformed (line ${line}: ${why})`, {
    remedy: 'the run was probably killed while writing it, or something besides run_state.sh wrote to it: rerun the state',
  });
}

function asFiles(v: unknown, requested: ReadonlySet<string>): Map<string, string[]> | null {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return null;
  const out = new Map<string, string[]>();
  for (const [file, names] of Object.entries(v as Json)) {
    if (!Array.isArray(names) || !names.every((n): n is string => typeof n === 'string' && n !== '' && !n.includes('/'))) return null;
    // A line of the report never adds a file that was not asked for.
    if (requested.has(file)) out.set(file, names);
  }
  return out;
}

/** Parse run_state.sh's report. Throws ForesightError when it is not one (a line that is not JSON, lines out of place). */
export function parseGoReport(report: string, testFiles: readonly string[]): ParsedRun {
  const requested = new Set(testFiles);
  const lines = report.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  const runs: DirRun[] = [];
  let cur: DirRun | null = null;
  let started = false;
  let ended = false;
  for (const [i, text] of lines.entries()) {
    const n = i + 1;
    if (ended) throw malformed(n, 'text after the end line');
    if (!text.startsWith('{')) {
      // go's plain lines (before 1.24): only its build and setup failures matter.
      if (cur && /^FAIL\t\S+ \[(build|setup) failed\]$/.test(text)) cur.buildFailed = true;
      continue;
    }
    let ev: Json;
    try {
      ev = JSON.parse(text) as Json;
    } catch {
      throw malformed(n, 'not JSON');
    }
    if (ev === null || typeof ev !== 'object' || Array.isArray(ev)) throw malformed(n, 'not a JSON object');
    const action = ev['Action'];
    if (!started) {
      if (action !== 'foresight-go' || ev['Version'] !== 1) throw malformed(n, 'no foresight-go header');
      started = true;
      continue;
    }
    switch (action) {
      case 'foresight-dir': {
        const files = asFiles(ev['Files'], requested);
        if (cur !== null || typeof ev['Dir'] !== 'string' || files === null) throw malformed(n, 'a directory line out of place');
        cur = { dir: ev['Dir'], files, finals: new Map(), packageAction: null, buildFailed: false, sawPackage: false, stderr: [], code: null, last: null };
        continue;
      }
      case 'foresight-exit': {
        if (cur === null || ev['Dir'] !== cur.dir || typeof ev['Code'] !== 'number') throw malformed(n, 'an exit line out of place');
        cur.code = ev['Code'];
        runs.push(cur);
        cur = null;
        continue;
      }
      case 'foresight-end':
        if (cur !== null) throw malformed(n, `the end line inside the run of ${cur.dir}`);
        ended = true;
        continue;
    }
    if (cur === null) throw malformed(n, 'an event outside a directory\'s run');
    if (action === 'foresight-stderr') {
      if (typeof ev['Output'] === 'string') cur.stderr.push(ev['Output']);
      continue;
    }
    if (action === 'build-fail') {
      cur.buildFailed = true;
      continue;
    }
    if (typeof ev['Package'] !== 'string') continue;
    cur.sawPackage = true;
    const test = ev['Test'];
    if (typeof test === 'string') {
      if (test.includes('/') || typeof action !== 'string') continue;
      cur.last = { test, action };
      if (!FINAL.has(action)) continue;
      const finals = cur.finals.get(test) ?? [];
      finals.push(action as TestStatus);
      cur.finals.set(test, finals);
    } else if (typeof action === 'string' && FINAL.has(action)) {
      cur.packageAction = action as DirRun['packageAction'];
      if (typeof ev['FailedBuild'] === 'string') cur.buildFailed = true;
    }
  }
  if (!started) throw malformed(1, 'no foresight-go header');

  const tests: Record<string, TestStatus> = {};
  const collectionErrors = new Set<string>();
  const problems: string[] = [];
  if (cur !== null) problems.push(`the report ends inside the run of ${cur.dir}: run_state.sh was cut short`);
  else if (!ended) problems.push('the report has no end line: run_state.sh was cut short');
  for (const run of runs) {
    const verdict = judgeDir(run);
    if (verdict.kind === 'problem') problems.push(verdict.detail);
    else if (verdict.kind === 'not_built') for (const f of run.files.keys()) collectionErrors.add(f);
    else Object.assign(tests, verdict.tests);
  }
  const out: ParsedRun = { tests, collectionErrors: [...collectionErrors].sort() };
  if (problems.length) out.problem = problems.join('; ');
  return out;
}

/** A stderr line of the go command about the package itself: a position in a Go file, or a package clash. */
const PACKAGE_ERROR = /\.go:\d+(:\d+)?: |^found packages |^no Go files |^build constraints exclude /;

type DirVerdict = { kind: 'ran'; tests: Record<string, TestStatus> } | { kind: 'not_built' } | { kind: 'problem'; detail: string };

function judgeDir(run: DirRun): DirVerdict {
  if (run.buildFailed) return { kind: 'not_built' };
  if (!run.sawPackage && run.code !== 0) {
    const goLine = run.stderr.find((l) => l.startsWith('go: '));
    // The go command could not run at all: about the module or the toolchain, not this package.
    if (goLine !== undefined && !run.stderr.some((l) => PACKAGE_ERROR.test(l))) {
      return { kind: 'problem', detail: `go test in ${run.dir}: ${goLine.slice(0, 300)}` };
    }
    if (run.code === 1 || run.code === 2) return { kind: 'not_built' };
    return { kind: 'problem', detail: `go test in ${run.dir} exited ${run.code} before it ran the package: ${(run.stderr.at(-1) ?? '').slice(0, 300)}` };
  }
  const failed = run.packageAction === 'fail';
  // The binary failed, no test reported a failure, and its last word was a pass: that test was running
  // when it died, so the pass is no evidence.
  const claimed = [...run.files.values()].flat().some((name) => run.finals.get(name)?.includes('fail'));
  const diedIn = failed && !claimed && run.last?.action === 'pass' ? run.last.test : null;
  const tests: Record<string, TestStatus> = {};
  for (const [file, names] of run.files) {
    for (const name of names) {
      const finals = run.finals.get(name) ?? [];
      const worst = finals.reduce<TestStatus | null>((w, s) => (w === null || RANK[s] > RANK[w] ? s : w), null);
      if (worst === null) {
        if (failed) tests[goTestId(file, name)] = 'fail';
      } else tests[goTestId(file, name)] = name === diedIn ? 'fail' : worst;
    }
  }
  return { kind: 'ran', tests };
}
