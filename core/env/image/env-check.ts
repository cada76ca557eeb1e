/**
 * What a candidate's build or test run says about its environment: the telling line of a failed install,
 * the package pip found no version of, and whether one run at the PR's head shows a usable environment
 * (image/choose-env.ts acts on these).
 */
import type { StateRun } from '../container/run-report.ts';
import { runProblem } from '../runners/evidence.ts';
import type { Runner } from '../runners/types.ts';

/**
 * What a candidate's report at the PR's head says about the environment: `unusable` (the environment's
 * fault: the next candidate is tried), `trustworthy`, or `inconclusive` (nothing to tell by: no test file,
 * a timeout, no test collected; the candidate is kept).
 */
export type EnvCheck = { kind: 'trustworthy' | 'unusable' | 'inconclusive'; detail: string };

/**
 * The telling line of a failed build's detail: pip's last `ERROR:` line (not its closing "for help visit" /
 * "Command errored out" ones), else the last Python exception (`SyntaxError: …` from a setup.py), else pip's
 * last `×` summary, else the last line.
 */
export function rejectionReason(detail: string): string {
  const lines = detail.split('\n').map((l) => l.trim()).filter((l) => l && !l.startsWith('[foresight]'));
  const tiers = [
    (l: string) => /^ERROR\b/.test(l) && !/for help visit|Command errored out/.test(l),
    (l: string) => /^[A-Za-z_.]*(Error|Exception): /.test(l),
    (l: string) => /^(ERROR|error)\b|^×/.test(l),
  ];
  for (const tier of tiers) {
    const hit = [...lines].reverse().find(tier);
    if (hit) return hit.slice(0, 300);
  }
  return (lines.at(-1) ?? 'install failed').slice(0, 300);
}

/** The build backend itself could not be installed (an isolated build's pin the offline wheels lack). */
export function backendUnavailable(detail: string): boolean {
  return /(?:build|backend) dependencies: finished with status 'error'|to install (?:build|backend) dependencies did not run successfully/.test(detail);
}

/**
 * The package pip found no version of at all (`No matching distribution found for <name>`, no version
 * specifier after the name): the offline wheels lack it, in every era. Null for a pin no wheel satisfies.
 */
export function absentPackage(reason: string): string | null {
  return /No matching distribution found for ([A-Za-z0-9][A-Za-z0-9._-]*)(?=\s*(?:;|$|\((?:not left out|not retried|retried without)))/.exec(reason)?.[1] ?? null;
}

/** Whether the commit's project metadata still names the package (case and -_. alike, whole name). */
export function namesPackage(metadata: string, pkg: string): boolean {
  const norm = (s: string): string => s.toLowerCase().replace(/[-_.]+/g, '-');
  const re = new RegExp(`(^|[^a-z0-9-])${norm(pkg)}($|[^a-z0-9-])`);
  return re.test(norm(metadata));
}

/** The line of a run's output that says why the environment failed: a missing module or plugin, an unknown option. */
export function envErrorLine(output: string): string | null {
  const lines = output.split('\n').map((l) => l.replace(/^E\s+/, '').trim()).filter(Boolean);
  const tiers = [
    /^(ModuleNotFoundError|ImportError): /,
    /fixture '[^']+' not found/,
    /error: unrecognized arguments: |^ERROR: usage: |^ERROR: /,
    /^[A-Za-z_.]*(Error|Exception): /,
  ];
  for (const tier of tiers) {
    const hit = [...lines].reverse().find((l) => tier.test(l));
    if (hit) return hit.slice(0, 300);
  }
  return null;
}

/**
 * Whether one run of the runner at a PR's head on its own test files shows a usable environment. Its own
 * tests were merged there, so a file that cannot be collected, a runner that cannot start (no report, an
 * undeclared exit code, a crash) or a test erroring on a fixture no installed plugin provides is the
 * environment's fault; failing tests are not.
 */
export function checkReport(run: StateRun, exitCodes: Runner['exitCodes']): EnvCheck {
  const why = (fallback: string): string => envErrorLine(run.outputTail) ?? fallback;
  if (run.kind === 'timeout') return { kind: 'inconclusive', detail: `timed out after ${Math.round(run.durationMs / 1000)}s` };
  if (run.kind === 'no_report') {
    if (run.why === 'killed') return { kind: 'inconclusive', detail: 'the runner was killed' };
    return { kind: 'unusable', detail: `no report (exit ${run.exitCode ?? 'none'}): ${why(run.outputTail.trim().split('\n').pop() ?? '')}` };
  }
  const { tests, collectionErrors } = run.parsed;
  if (collectionErrors.length) return { kind: 'unusable', detail: `${collectionErrors.join(', ')} cannot be collected: ${why('collection error')}` };
  // An exit code the runner does not declare (a usage or internal error: an unknown option, a plugin that
  // failed) is the environment's, even with no test collected.
  if (!exitCodes.ok.includes(run.exitCode) && !exitCodes.noTestsCollected.includes(run.exitCode)) {
    return { kind: 'unusable', detail: `the test runner exited ${run.exitCode}: ${why(run.outputTail.trim().split('\n').pop() ?? '')}` };
  }
  const problem = runProblem(run, exitCodes);
  if (problem?.kind === 'infra' && problem.reason === 'no_tests_collected') return { kind: 'inconclusive', detail: problem.detail };
  if (problem) return { kind: 'unusable', detail: `${problem.detail.split(':')[0]}: ${why(problem.detail)}` };
  const statuses = Object.values(tests);
  const errored = statuses.filter((s) => s === 'error').length;
  const missingFixture = /fixture '[^']+' not found/.exec(run.outputTail);
  if (errored && missingFixture) return { kind: 'unusable', detail: `${errored} test(s) errored: ${missingFixture[0]}` };
  const count = (s: string): number => statuses.filter((x) => x === s).length;
  return { kind: 'trustworthy', detail: `${statuses.length} tests ran (${count('pass')} passed, ${count('fail')} failed, ${errored} errors, ${count('skip')} skipped)` };
}
