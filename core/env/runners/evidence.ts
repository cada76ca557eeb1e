/**
 * When one run of a runner is evidence about the code under test. Shared by validate (a state whose run
 * is not evidence is `infra`/`chain`, never a pass or a fail) and grading (a score from such a run is
 * `infra`, never 0 %): infrastructure failures are never evidence.
 */
import type { StateRun } from '../container/run-report.ts';
import type { Runner } from './types.ts';

/** Why our environment showed nothing (mirrors core/foundation/model/validated.ts INFRA_REASONS, minus env_build). */
export type RunInfraReason = 'timeout' | 'no_report' | 'runner_exit' | 'no_tests_collected';

/** Why a run is not evidence: our infrastructure (`infra`), or the repository's code crashed the runner (`chain`). */
export type RunProblem = { kind: 'infra'; reason: RunInfraReason; detail: string } | { kind: 'chain'; reason: 'runner_crash'; detail: string };

/** The line that says why: the last `XxxError: …` line or jest's `process.exit called with`, else the last line (node ends a crash with its version). */
function lastLine(text: string): string {
  const lines = text.trim().split('\n').map((l) => l.trim()).filter(Boolean);
  const why = [...lines].reverse().find((l) => /^[A-Za-z_.]*(Error|Exception)( \[[A-Z_]+\])?: |process\.exit called with/.test(l));
  return (why ?? lines.at(-1) ?? '').slice(0, 300);
}

const JEST_EXIT = /process\.exit called with /;

function unreachable(x: never): never {
  throw new Error(`unhandled run kind ${JSON.stringify(x)}`);
}

/** Why one run is not evidence that the suite ran, or null when it is. */
export function runProblem(run: StateRun, exitCodes: Runner['exitCodes']): RunProblem | null {
  const infra = (reason: RunInfraReason, detail: string): RunProblem => ({ kind: 'infra', reason, detail });
  switch (run.kind) {
    case 'timeout':
      return infra('timeout', `timed out after ${Math.round(run.durationMs / 1000)}s`);
    case 'no_report':
      // jest names a process.exit() of the code under test (or its tests) that ended the run: the repository's crash.
      if (JEST_EXIT.test(run.outputTail)) return { kind: 'chain', reason: 'runner_crash', detail: `the code under test ended the runner: ${lastLine(run.outputTail)}` };
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

/** An import of a name an installed package (site-packages, dist-packages) does not have, as Python 3.8+ words it. */
const INSTALLED_IMPORT = /ImportError: cannot import name '[^'\n]+' from '[^'\n]+' \([^)\n]*\/(?:site|dist)-packages\/[^)\n]*\)/;

/** A test file go left out for its `//go:build go1.N` line, as the go runner's run_state.sh names it. */
const NEWER_GO = /^run_state: \S+ needs go1\.\d+ \(\/\/go:build\), the toolchain is go1\.\d+$/m;

/**
 * The line showing the commit outgrew its environment, or null: the run is no evidence (a crash, no
 * report, a module not collected) because an installed package lacks a name the code imports, or (Go) the
 * toolchain is older than a test file's `//go:build go1.N` asks, so go ran none of its tests. Django's
 * commits of 2021-06..10 import asgiref's ThreadSensitiveContext while naming Python 3.9 only, whose
 * Debian asgiref (3.3.1) predates it: another of the era's install candidates may run them. A repository
 * module that is missing, or a test that fails, is never this.
 */
export function outgrownEnvironment(run: StateRun, exitCodes: Runner['exitCodes']): string | null {
  if (run.kind === 'timeout') return null;
  if (run.kind === 'report' && runProblem(run, exitCodes) === null && run.parsed.collectionErrors.length === 0) return null;
  return INSTALLED_IMPORT.exec(run.outputTail)?.[0] ?? NEWER_GO.exec(run.outputTail)?.[0] ?? null;
}

/**
 * The install candidate a run showed its commit outgrew, with the telling line, or null: none when the
 * environment names no candidate (an explicit image) or names one already passed over (no other to try).
 */
export function outgrownCandidate(run: StateRun, env: { label?: string | undefined; runner: Runner }, passedOver: readonly string[] = []): { label: string; line: string } | null {
  if (env.label === undefined || passedOver.includes(env.label)) return null;
  const line = outgrownEnvironment(run, env.runner.exitCodes);
  return line === null ? null : { label: env.label, line };
}
