import type { ChainEnv, Runner } from '../env/index.ts';
import { BISECT_KINDS } from '../foundation/model/attribution.ts';

export { BISECT_KINDS };

/** Why a probed commit says nothing about the tests (git bisect's "skip"): never read as "bad". */
export type SkipReason =
  /** A test module of the fail->pass tests cannot be imported or collected at this commit. */
  | 'import_error'
  /** A fail->pass test is absent from the runner's report. */
  | 'not_collected'
  /** The runner skipped a fail->pass test (a missing optional dependency, a backend). */
  | 'test_skipped'
  /** Our infrastructure: timeout, no report, no test collected, an undeclared exit code. */
  | 'infra'
  /** The repository's code crashed the runner before any test (settings, app loading). */
  | 'runner_crash'
  /** The environment of the commit's era did not build. */
  | 'env_broken'
  /**
   * The tests fail, but with another exception than at PR2's base (AttributeError where the base fails
   * with AssertionError): the code under test is not there yet, or something else is broken. Not this bug.
   */
  | 'other_failure';

/**
 * What one probe of a commit shows: the fail->pass tests all pass, one fails, or they cannot run.
 * `passing`: the fail->pass tests that passed all the same (a bad or skipped probe may pass some: the
 * search can follow those alone). `kinds`: a failing test's id -> the exception it ended with, when the
 * runner's report says.
 */
export type Verdict =
  | { outcome: 'good' }
  | { outcome: 'bad'; failing: string[]; passing?: string[]; kinds?: Record<string, string> }
  | { outcome: 'skip'; reason: SkipReason; detail: string; passing?: string[] };

/** Why a commit was probed: the known-bad end (PR2's base), a candidate good end, a bisection step, or a repeat of the found commit's passing parent. */
export type StepRole = 'bad_end' | 'good_end' | 'bisect' | 'confirm';

/**
 * `reused`: not probed, the outcome validate already saw there (PR2's base: its S4 state).
 * `transplanted`: PR2's whole test module could not import there (or its whole files crashed the runner);
 * the outcome is that of PR2's test changes applied to the commit's own test modules.
 */
export type Step = { commit: string; role: StepRole; seconds: number; reused?: true; transplanted?: true } & Verdict;

/** What a bisection cost: containers opened, runner executions, wall seconds. */
export interface BisectCost {
  containers: number;
  runs: number;
  seconds: number;
}

/**
 * How a bisection ended. `found`: the first mainline commit where the tests stop passing.
 * `ambiguous`: skipped commits sit at the boundary, the first bad commit is one of `commits` (oldest
 * first, the last one known bad). `no_bad_end`: the tests do not fail at PR2's base (nothing to find).
 * `no_good_end`: no older commit probed passes (the tests ran and failed, or were skipped, at each).
 * `all_skipped`: no older commit probed could run the tests at all. `introduced`: no commit passes, but the
 * tests cannot be imported at the commit before `commit` and fail from it on (and never fail earlier):
 * the behaviour was broken from the change that brought the code in. `budget`: the probe budget ran out,
 * the first bad commit lies in `commits`. `not_on_mainline`: PR2's base is not a first-parent commit.
 * `flaky`: the tests passed at `commit` and failed there when run again, and no pass further back is
 * known: they cannot tell where the behaviour broke.
 * `followed`: the good end passed only these of the fail->pass tests (the others fail there too: they
 * test what PR2 itself changed), and the bisection followed them alone.
 */
export type SearchResult = { steps: Step[] } & (
  | { kind: 'found'; commit: string; good: string; followed?: string[] }
  | { kind: 'ambiguous'; commits: string[]; good: string; followed?: string[] }
  | { kind: 'budget'; commits: string[]; good: string; followed?: string[] }
  | { kind: 'no_bad_end'; verdict: Verdict }
  | { kind: 'introduced'; commit: string }
  | { kind: 'no_good_end' }
  | { kind: 'all_skipped' }
  | { kind: 'not_on_mainline' }
  | { kind: 'flaky'; commit: string }
);
export type BisectKind = SearchResult['kind'];

// BISECT_KINDS (the model's list of every way a bisection can end) and SearchResult agree both ways: a kind added to SearchResult and not listed here fails to compile.
const _allKinds: Record<BisectKind, true> = Object.fromEntries(BISECT_KINDS.map((k) => [k, true])) as Record<(typeof BISECT_KINDS)[number], true>;
const _listed: readonly BisectKind[] = BISECT_KINDS;
void _allKinds;
void _listed;

/** A search's result and what it cost. */
export type BisectResult = SearchResult & { cost: BisectCost };

/**
 * Where a commit's probe runs: an open container of its environment era and the era's runner, or why not.
 * `label`: the era's install candidate; a commit that outgrew it asks for the era without it (BisectOptions.envFor).
 */
export type ProbeEnv = { kind: 'ready'; env: ChainEnv; runner: Runner; label?: string } | { kind: 'broken'; problem: string };
