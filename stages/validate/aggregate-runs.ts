/** Folds a state's runs into one outcome per test (a state that could not run, or ran no evidence, says why). */
import type { StateRun } from '../../core/env/index.ts';
import { isIgnoredTest, runProblem as envRunProblem, type KeepRule, type Recipe, type Runner } from '../../core/env/index.ts';
import type { Outcome, StateName, StateOutcome, StateResult } from '../../core/foundation/model/validated.ts';

export interface StateRequest {
  name: StateName;
  checkout: string;
  overlay: string | null;
  testFiles: string[];
  overlayFiles: string[];
  /** Modules run for the PR's data files: only their cases naming the files, and a sample (core/env KeepRule). */
  keep?: readonly KeepRule[];
}

type ExitCodes = Runner['exitCodes'];

/**
 * Why one run is not evidence that the suite ran (an `infra` or `chain` outcome), or null when it is:
 * core/env's `runProblem`, shared with grading.
 */
export function runProblem(run: StateRun, exitCodes: ExitCodes): Exclude<StateOutcome, { kind: 'ran' }> | null {
  return envRunProblem(run, exitCodes);
}

/** Which tests a run was asked to run: null, all of the state's tests; else a test of the selection. */
export type Covers = ((id: string) => boolean) | null;

/**
 * Fold a state's repeated runs into one outcome per test; mixed outcomes are flaky. `covers[i]` says
 * which tests run i was asked for (default: all): a test missing from a run that was not asked for it
 * is no observation; one missing from a run that was asked for it is (it then cannot be uniform).
 */
export function aggregateRuns(req: StateRequest, runs: readonly StateRun[], exitCodes: ExitCodes, covers: readonly Covers[] = []): StateResult {
  const base = { name: req.name, checkout: req.checkout, overlay: req.overlay, testFiles: req.testFiles, runs: runs.length };
  const durationMs = runs.reduce((a, r) => a + r.durationMs, 0);
  const problem = runs.map((r) => runProblem(r, exitCodes)).find((p) => p !== null) ?? null;
  if (problem) return { ...base, outcome: problem, tests: {}, collectionErrors: [], durationMs };

  const ids = new Set(runs.flatMap((r) => Object.keys(r.parsed.tests)));
  const tests: Record<string, Outcome> = {};
  for (const id of ids) {
    const seen = runs.filter((r, i) => (covers[i] ?? null) === null || covers[i]!(id) || id in r.parsed.tests).map((r) => r.parsed.tests[id]);
    if (seen.every((s) => s === 'pass')) tests[id] = 'pass';
    else if (seen.every((s) => s === 'fail' || s === 'error')) tests[id] = 'fail';
    else if (seen.every((s) => s === 'skip')) tests[id] = 'skip';
    else tests[id] = 'flaky';
  }
  const collectionErrors = [...new Set(runs.flatMap((r) => r.parsed.collectionErrors))].sort();
  // A failing test's exception, when each run that reported the test named the same one.
  const failureKinds: Record<string, string> = {};
  for (const [id, o] of Object.entries(tests)) {
    if (o !== 'fail') continue;
    const kinds = new Set(runs.filter((r) => id in r.parsed.tests).map((r) => r.parsed.failureKinds?.[id]));
    const [kind] = kinds;
    if (kinds.size === 1 && kind !== undefined) failureKinds[id] = kind;
  }
  return { ...base, outcome: { kind: 'ran' }, tests, collectionErrors, ...(Object.keys(failureKinds).length ? { failureKinds } : {}), durationMs };
}

/** A state whose environment never built: it did not run, which is never read as "fails". */
export function brokenState(req: StateRequest, problem: string): StateResult {
  const { name, checkout, overlay, testFiles } = req;
  return { name, checkout, overlay, testFiles, outcome: { kind: 'infra', reason: 'env_build', detail: problem }, runs: 0, tests: {}, collectionErrors: [], durationMs: 0 };
}

/** A recipe's ignored tests are never graded: they leave a state before the sets are computed. */
export function withoutIgnoredTests(state: StateResult, recipe: Pick<Recipe, 'ignoreTests'> | null): StateResult {
  if (!recipe?.ignoreTests.length) return state;
  return { ...state, tests: Object.fromEntries(Object.entries(state.tests).filter(([id]) => !isIgnoredTest(recipe, id))) };
}
