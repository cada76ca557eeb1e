import type { StateRun } from '../../core/env/index.ts';
import type { Runner } from '../../core/env/index.ts';
import type { Outcome, StateName, StateOutcome, StateResult } from '../../core/model/validated.ts';

export interface StateRequest {
  name: StateName;
  checkout: string;
  overlay: string | null;
  testFiles: string[];
  overlayFiles: string[];
}

type ExitCodes = Runner['exitCodes'];

function lastLine(text: string): string {
  const lines = text.trim().split('\n');
  return (lines[lines.length - 1] ?? '').slice(0, 300);
}

function unreachable(x: never): never {
  throw new Error(`unhandled run kind ${JSON.stringify(x)}`);
}

/** Why one run is not evidence that the suite ran (an `infra` or `chain` outcome), or null when it is. */
export function runProblem(run: StateRun, exitCodes: ExitCodes): Exclude<StateOutcome, { kind: 'ran' }> | null {
  const infra = (reason: Extract<StateOutcome, { kind: 'infra' }>['reason'], detail: string) => ({ kind: 'infra' as const, reason, detail });
  switch (run.kind) {
    case 'timeout':
      return infra('timeout', `timed out after ${Math.round(run.durationMs / 1000)}s`);
    case 'no_report':
      return infra('no_report', `the test runner produced no report (exit ${run.exitCode ?? 'none'}): ${lastLine(run.outputTail)}`);
    case 'report':
      break;
    default:
      return unreachable(run);
  }
  // The runner's own verdict that its output is not evidence (a crash before any test, a count mismatch).
  if (run.parsed.problem) return { kind: 'chain', reason: 'runner_crash', detail: run.parsed.problem };
  const statuses = Object.values(run.parsed.tests);
  const failed = statuses.some((s) => s === 'fail' || s === 'error') || run.parsed.collectionErrors.length > 0;
  // Zero requested tests collected shows nothing: it must never read as "passes" or "does not fail".
  if (exitCodes.noTestsCollected.includes(run.exitCode) || (statuses.length === 0 && run.parsed.collectionErrors.length === 0)) {
    return infra('no_tests_collected', `the test runner collected none of the requested tests (exit ${run.exitCode}): ${lastLine(run.outputTail)}`);
  }
  // An exit code the runner does not declare (an internal or usage error) is no evidence, failing tests or not.
  if (!exitCodes.ok.includes(run.exitCode)) {
    return infra('runner_exit', `the test runner exited ${run.exitCode}: ${lastLine(run.outputTail)}`);
  }
  // A non-zero exit with nothing that failed is an infrastructure error, never a pass.
  if (run.exitCode !== 0 && !failed) {
    return infra('runner_exit', `the test runner exited ${run.exitCode} without a failing test: ${lastLine(run.outputTail)}`);
  }
  return null;
}

/** Fold a state's repeated runs into one outcome per test; mixed outcomes are flaky. */
export function aggregateRuns(req: StateRequest, runs: readonly StateRun[], exitCodes: ExitCodes): StateResult {
  const base = { name: req.name, checkout: req.checkout, overlay: req.overlay, testFiles: req.testFiles, runs: runs.length };
  const durationMs = runs.reduce((a, r) => a + r.durationMs, 0);
  const problem = runs.map((r) => runProblem(r, exitCodes)).find((p) => p !== null) ?? null;
  if (problem) return { ...base, outcome: problem, tests: {}, collectionErrors: [], durationMs };

  const ids = new Set(runs.flatMap((r) => Object.keys(r.parsed.tests)));
  const tests: Record<string, Outcome> = {};
  for (const id of ids) {
    const seen = runs.map((r) => r.parsed.tests[id]);
    if (seen.every((s) => s === 'pass')) tests[id] = 'pass';
    else if (seen.every((s) => s === 'fail' || s === 'error')) tests[id] = 'fail';
    else if (seen.every((s) => s === 'skip')) tests[id] = 'skip';
    else tests[id] = 'flaky';
  }
  const collectionErrors = [...new Set(runs.flatMap((r) => r.parsed.collectionErrors))].sort();
  return { ...base, outcome: { kind: 'ran' }, tests, collectionErrors, durationMs };
}
