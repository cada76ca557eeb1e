import { runProblem, testFileOf, type Runner, type StateRun } from '../env/index.ts';
import type { Verdict } from './types.ts';

/**
 * Read one run as a bisection verdict on the fail->pass tests: `bad` when one of them really fails,
 * `good` when all pass, `skip` when the run is no evidence (validate's rules, core/env runProblem) or a
 * test could not run (its module does not import, it is missing or skipped). A failure of one test
 * outweighs another's skip: it is evidence the behaviour is broken at this commit.
 */
export function classifyRun(run: StateRun, runner: Runner, failToPass: readonly string[], testFiles: readonly string[]): Verdict {
  const problem = runProblem(run, runner.exitCodes);
  if (problem) return { outcome: 'skip', reason: problem.kind === 'chain' ? 'runner_crash' : 'infra', detail: problem.detail };
  const failing: string[] = [];
  const passing: string[] = [];
  let skip: (Verdict & { outcome: 'skip' }) | null = null;
  for (const id of failToPass) {
    const file = testFileOf(runner, id, testFiles);
    const status = run.parsed.tests[id];
    if (status === 'fail' || status === 'error') failing.push(id);
    else if (status === 'pass') passing.push(id);
    else if (file !== null && run.parsed.collectionErrors.includes(file)) skip ??= { outcome: 'skip', reason: 'import_error', detail: `${file} cannot be imported` };
    else if (status === 'skip') {
      const why = run.parsed.notRun?.[id];
      skip ??= { outcome: 'skip', reason: 'test_skipped', detail: why ? `${id} did not run: ${why}` : `${id} was skipped by the runner` };
    }
    else skip ??= { outcome: 'skip', reason: 'not_collected', detail: `${id} is not in the runner's report` };
  }
  const some = passing.length ? { passing } : {};
  if (failing.length) {
    const known = failing.filter((id) => run.parsed.failureKinds?.[id] !== undefined);
    const kinds = known.length ? { kinds: Object.fromEntries(known.map((id) => [id, run.parsed.failureKinds![id]!])) } : {};
    return { outcome: 'bad', failing, ...some, ...kinds };
  }
  return skip ? { ...skip, ...some } : { outcome: 'good' };
}
