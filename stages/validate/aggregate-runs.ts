import type { StateRun } from '../../core/env/docker.ts';
import type { Outcome, StateName, StateResult } from '../../core/model/validated.ts';

export interface StateRequest {
  name: StateName;
  checkout: string;
  overlay: string | null;
  testFiles: string[];
  overlayFiles: string[];
}

export type RunFailure = NonNullable<StateResult['failure']>;

/** Why a run is not evidence that the suite ran, or null when it is. */
export function runProblem(run: StateRun): string | null {
  return runFailure(run)?.text ?? null;
}

function runFailure(run: StateRun): { kind: RunFailure; text: string } | null {
  const fail = (kind: RunFailure, text: string) => ({ kind, text });
  if (run.timedOut) return fail('timeout', `timed out after ${Math.round(run.durationMs / 1000)}s`);
  if (!run.ok) return fail('no_report', `the test runner produced no report (exit ${run.exitCode ?? 'none'}): ${lastLine(run.outputTail)}`);
  // The runner's own verdict that its output is not evidence (a crash before any test, a count mismatch).
  if (run.parsed.problem) return fail('crash', run.parsed.problem);
  const statuses = Object.values(run.parsed.tests);
  const failed = statuses.some((s) => s === 'fail' || s === 'error') || run.parsed.collectionErrors.length > 0;
  // A non-zero exit with nothing that failed is an infrastructure error, never a pass.
  if (run.exitCode !== 0 && run.exitCode !== 5 && !failed) {
    return fail('infra', `the test runner exited ${run.exitCode} without a failing test: ${lastLine(run.outputTail)}`);
  }
  return null;
}

function lastLine(text: string): string {
  const lines = text.trim().split('\n');
  return (lines[lines.length - 1] ?? '').slice(0, 300);
}

/** Fold a state's repeated runs into one outcome per test; mixed outcomes are flaky. */
export function aggregateRuns(req: StateRequest, runs: readonly StateRun[]): StateResult {
  const base = { name: req.name, checkout: req.checkout, overlay: req.overlay, testFiles: req.testFiles, runs: runs.length };
  const durationMs = runs.reduce((a, r) => a + r.durationMs, 0);
  const problem = runs.map(runFailure).find((p) => p !== null) ?? null;
  if (problem) return { ...base, ran: false, problem: problem.text, failure: problem.kind, tests: {}, collectionErrors: [], durationMs };

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
  return { ...base, ran: true, problem: null, failure: null, tests, collectionErrors, durationMs };
}
