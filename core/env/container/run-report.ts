/**
 * One run of a runner's in-container primitive as one exec, and what it produced as a union
 * (`report`, the only possible evidence; `timeout`; `no_report`). Shared by validate's chain
 * containers (chain-env.ts: a commit checked out in /tmp/testbed) and grading (grade.ts: in place in
 * an eval image's /testbed), so both read reports, deadlines and truncated output the same way.
 */
import type Docker from 'dockerode';
import { ForesightError } from '../../foundation/errors.ts';
import type { ParsedRun, Runner } from '../runners/types.ts';
import { DROPPED, runExec, type ExecOutcome } from './exec.ts';

/** Seconds `timeout` waits after SIGTERM before SIGKILL, and extra slack before the JS deadline. */
export const KILL_GRACE_SEC = 5;
const DEADLINE_SLACK_SEC = 10;
/** Where the runner writes its report inside the container. */
export const REPORT_PATH = '/tmp/foresight-junit.xml';
const OUTPUT_TAIL_CHARS = 4000;
/** Separates the runner's output from its report in one exec's output. */
const REPORT_MARK = '\n@@foresight-report@@\n';

/** What one run of a state produced, as a union: only a `report` can be evidence. */
export type StateRun = {
  exitCode: number | null;
  durationMs: number;
  /** What the runner's parser read (empty unless there was a report). */
  parsed: ParsedRun;
  /** Last ~4000 characters of the combined output. */
  outputTail: string;
} & (
  | { kind: 'report'; exitCode: number }
  | { kind: 'timeout' }
  | { kind: 'no_report'; why: 'missing' | 'unreadable' | 'killed' }
);

export interface RunnerExec {
  runner: Runner;
  /** A commit sha, or "." for in place (runners/checkout.sh). */
  checkout: string;
  /** A commit sha or "-". */
  overlay: string;
  /** Repo-relative test files to run. */
  testFiles: string[];
  /** Extra environment of the runner (NAME=value). */
  env: string[];
  /** The runner is sent SIGTERM after this, SIGKILL 5 s later; the JS deadline comes 10 s after that. */
  timeoutSec: number;
  /** Where the runner's files are in the container (default /foresight). */
  runnerPath?: string;
  /**
   * The report comes through a pipe this exec holds (the runner writes `/dev/fd/3`, its standard output):
   * nothing the tests leave behind can rewrite it, and a second document in it (a forgery written before
   * or after the runner's) makes it unreadable. The runner's own output goes to a file read after.
   */
  reportPipe?: boolean;
}

export interface RunnerExecHooks {
  /** Runs at the JS deadline: kill the container (the exec cannot be killed on its own). */
  onDeadline: () => Promise<void>;
  /** Wraps the exec (e.g. starts a stopped container and retries); default: run it as is. */
  exec?: (run: () => Promise<ExecOutcome>) => Promise<ExecOutcome>;
  /** False once the container is gone: the report is then not read on its own. */
  alive: () => boolean;
  /** Start of the error message when the exec itself fails (Docker, not the runner). */
  what: string;
}

/** Where a piped run's own output goes (reportPipe). */
export const PIPED_OUTPUT_PATH = '/tmp/foresight-run-output.txt';
const PIPE_PATH = '/dev/fd/3';

/** The runner, then its report after a marker, in one exec: one round trip per run instead of two. */
function command(r: RunnerExec): string[] {
  const script = `${r.runnerPath ?? '/foresight'}/${r.runner.script}`;
  if (r.reportPipe) {
    const shell = `exec 3>&1 >${PIPED_OUTPUT_PATH} 2>&1 </dev/null; timeout -k ${KILL_GRACE_SEC} ${r.timeoutSec} "$@"; exit $?`;
    return ['sh', '-c', shell, 'sh', 'env', ...r.env, 'sh', script, r.checkout, r.overlay, PIPE_PATH, ...r.testFiles];
  }
  // The runner's stderr into its stdout: Docker reads the two through separate pipes, so a stderr frame can
  // arrive after the report that follows on stdout and be read as part of it (a malformed report).
  const shell = `timeout -k ${KILL_GRACE_SEC} ${r.timeoutSec} "$@" 2>&1; rc=$?; if [ -f ${REPORT_PATH} ]; then printf '${REPORT_MARK.replace(/\n/g, '\\n')}'; cat ${REPORT_PATH}; fi; exit $rc`;
  return ['sh', '-c', shell, 'sh', 'env', ...r.env, 'sh', script, r.checkout, r.overlay, REPORT_PATH, ...r.testFiles];
}

/** More than one XML document in a piped report: something besides the runner wrote to the pipe. */
function forgedPipe(report: string): boolean {
  const count = (re: RegExp): number => report.match(re)?.length ?? 0;
  return count(/<\?xml\b/g) > 1 || count(/<testsuites[\s>\/]/g) > 1 || (count(/<testsuites[\s>\/]/g) === 0 && count(/<testsuite[\s>\/]/g) > 1);
}

/** What one exec produced, before the runner's parser read it. */
interface RawRun {
  exitCode: number | null;
  durationMs: number;
  timedOut: boolean;
  killed: boolean;
  /** The runner's output, without the report. */
  runnerText: string;
  report: string | null;
  /** Our notes on the run (deadline, timeout), appended to the output. */
  notes: string[];
  /** A piped report was there but is not the runner's alone (or too large): unreadable, never missing. */
  forged?: boolean;
}

/** Runner processes started, and the runs they produced, in this process: the benchmark reads them (bench/validate.ts). */
export const runnerExecCounts = { starts: 0, runs: 0 };

/** Run the runner's primitive once in `container` and classify what it produced. */
export async function execRunner(container: Docker.Container, r: RunnerExec, hooks: RunnerExecHooks): Promise<StateRun> {
  runnerExecCounts.starts++;
  runnerExecCounts.runs++;
  const raw = await execRaw(container, r, hooks);
  return classify(r, raw, raw.report, raw.exitCode);
}

/**
 * Run the runner's primitive once with FORESIGHT_PASSES=`passes` (Runner.splitPasses) and classify each
 * pass as a run of its own: `passes` runs, in order. A pass the process did not reach or finish is
 * `no_report`; a timeout or a lost report is every pass's outcome. The duration is shared equally.
 */
export async function execRunnerPasses(container: Docker.Container, r: RunnerExec, passes: number, hooks: RunnerExecHooks): Promise<StateRun[]> {
  const split = r.runner.splitPasses;
  if (!split) throw new ForesightError(`the ${r.runner.name} runner cannot run several passes in one process`, { remedy: 'run each repeat with execRunner' });
  runnerExecCounts.starts++;
  runnerExecCounts.runs += passes;
  const raw = await execRaw(container, { ...r, env: [...r.env, `FORESIGHT_PASSES=${passes}`], timeoutSec: r.timeoutSec * passes }, hooks);
  const share = { ...raw, durationMs: Math.round(raw.durationMs / passes) };
  if (raw.timedOut || raw.killed || raw.report === null) return Array.from({ length: passes }, () => classify(r, share, raw.report, raw.exitCode));
  const parts = split(raw.report);
  return Array.from({ length: passes }, (_, k) => {
    const part = parts[k];
    if (part === undefined) {
      const notes = [...raw.notes, `[foresight] pass ${k + 1} of ${passes} never started (the runner reached ${parts.length})`];
      return classify(r, { ...share, notes }, null, raw.exitCode);
    }
    // The pass's own verdict is its exit code; an unfinished pass keeps the process's (its report says why).
    return classify(r, { ...share, runnerText: part.report }, part.report, part.exitCode ?? raw.exitCode);
  });
}

async function execRaw(container: Docker.Container, r: RunnerExec, hooks: RunnerExecHooks): Promise<RawRun> {
  const T = r.timeoutSec;
  const exec = (): Promise<ExecOutcome> =>
    runExec(container, command(r), { capture: 'combined', deadlineMs: (T + KILL_GRACE_SEC + DEADLINE_SLACK_SEC) * 1000, onDeadline: hooks.onDeadline });
  const t0 = Date.now();
  let res: ExecOutcome;
  try {
    res = await (hooks.exec ? hooks.exec(exec) : exec());
  } catch (err) {
    throw new ForesightError(`${hooks.what}: ${(err as Error).message}`, {
      remedy: 'check `docker ps -a` and the daemon log',
      external: true,
      cause: err,
    });
  }
  const durationMs = Date.now() - t0;
  // 124: `timeout` sent SIGTERM; 137: SIGKILL — but an OOM kill is 137 too, so only after T.
  const timedOut = res.deadlineHit || res.exitCode === 124 || (res.exitCode === 137 && durationMs >= T * 1000);

  const notes: string[] = [];
  if (res.deadlineHit) notes.push(`[foresight] no exit ${T + KILL_GRACE_SEC + DEADLINE_SLACK_SEC} s after start: container killed`);
  else if (timedOut) notes.push(`[foresight] timed out after ${T} s`);

  if (r.reportPipe) return pipedRun(container, res, durationMs, timedOut, notes, hooks);

  let report: string | null = null;
  let runnerText = res.text;
  const at = res.text.lastIndexOf(REPORT_MARK);
  const truncated = res.text.includes(DROPPED);
  if (at >= 0) {
    runnerText = res.text.slice(0, at);
    const tail = res.text.slice(at + REPORT_MARK.length);
    if (!tail.includes(DROPPED)) report = tail;
  }
  // Output too long for the capture: read the report on its own.
  if (report === null && truncated && !res.deadlineHit && hooks.alive()) {
    const cat = await runExec(container, ['cat', REPORT_PATH], { capture: 'stdout' }).catch(() => null);
    if (cat?.exitCode === 0 && !cat.overflow) report = cat.text;
    else if (cat?.overflow) notes.push('[foresight] junit file too large, ignored');
  }
  return { exitCode: res.exitCode, durationMs, timedOut, killed: res.exitCode === null, runnerText, report, notes };
}

/** A piped run: the exec's output is the report; the runner's own output is read from its file. */
async function pipedRun(container: Docker.Container, res: ExecOutcome, durationMs: number, timedOut: boolean, notes: string[], hooks: RunnerExecHooks): Promise<RawRun> {
  let report: string | null = res.text.trim() === '' ? null : res.text;
  if (report !== null && res.text.includes(DROPPED)) {
    notes.push('[foresight] report too large, ignored');
    report = null;
  }
  if (report !== null && forgedPipe(report)) {
    notes.push('[foresight] the report pipe held more than one report: something besides the runner wrote to it, so it is no evidence');
    report = null;
  }
  let runnerText = '';
  if (!res.deadlineHit && hooks.alive()) {
    const out = await runExec(container, ['tail', '-c', String(256 * 1024), PIPED_OUTPUT_PATH], { capture: 'combined' }).catch(() => null);
    if (out?.exitCode === 0) runnerText = out.text;
  }
  return { exitCode: res.exitCode, durationMs, timedOut, killed: res.exitCode === null, runnerText, report, notes, forged: report === null && res.text.trim() !== '' };
}

/** Parse a report and classify the run: only a parsed report with an exit code can be evidence. */
function classify(r: RunnerExec, raw: RawRun, report: string | null, exitCode: number | null): StateRun {
  let parsed: ParsedRun;
  const notes = [...raw.notes];
  let parseFailed = false;
  const input = { output: raw.runnerText, testFiles: r.testFiles };
  try {
    parsed = r.runner.parse({ ...input, junitXml: report });
  } catch (err) {
    parseFailed = true;
    notes.push(`[foresight] ${err instanceof ForesightError ? err.oneLine() : String(err)}`);
    parsed = r.runner.parse({ ...input, junitXml: null });
  }
  const output = notes.length > 0 ? `${raw.runnerText}\n${notes.join('\n')}\n` : raw.runnerText;
  const common = { durationMs: raw.durationMs, parsed, outputTail: output.slice(-OUTPUT_TAIL_CHARS) };
  if (raw.timedOut) return { kind: 'timeout', exitCode: raw.exitCode, ...common };
  if (exitCode === null) return { kind: 'no_report', why: 'killed', exitCode: null, ...common };
  if (report === null) return { kind: 'no_report', why: raw.forged ? 'unreadable' : 'missing', exitCode, ...common };
  if (parseFailed) return { kind: 'no_report', why: 'unreadable', exitCode, ...common };
  return { kind: 'report', exitCode, ...common };
}
