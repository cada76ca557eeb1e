/**
 * Execution-confirmed attribution: run PR2's fail->pass tests (PR2's test and support files laid over
 * each probed commit, as validate's states do) along the first-parent history and bisect to the first
 * commit where they stop passing. Each probe is one exec in the container of the commit's environment
 * era (ChainEnv.runState, validate's runner and rules for what a run shows).
 */
import { ForesightError } from '../foundation/errors.ts';
import type { Logger } from '../foundation/log.ts';
import { commitToChange } from '../history/changes.ts';
import { positions, type MainlineCommit } from '../history/mainline.ts';
import type { PullRequest } from '../foundation/model/change.ts';
import type { ChainEnv, Runner, StateRun } from '../env/index.ts';
import { outgrownCandidate, runProblem, testFileOf } from '../env/index.ts';
import { classifyRun } from './classify-run.ts';
import { BISECT_DEFAULTS } from '../foundation/bisect-defaults.ts';
import { searchFirstBad } from './search.ts';
import type { BisectResult, ProbeEnv, Step, StepRole, Verdict } from './types.ts';

export interface BisectOptions {
  /** The first-parent history, oldest first (core/history readMainline). */
  mainline: readonly MainlineCommit[];
  /** The merged changes (core/history listChanges): maps a blamed branch commit to the mainline commit that merged it. */
  changes: readonly PullRequest[];
  /** PR2: the tests must fail at `baseSha` (the bad end); its test files are laid over from `headSha`. */
  fix: { baseSha: string; headSha: string };
  /** PR2's fail->pass test ids (the runner's ids, e.g. pytest node ids). */
  failToPass: readonly string[];
  /** PR2's test files that hold them (validate's anticipation_test_files). */
  testFiles: readonly string[];
  /** PR2's support files laid over too (conftest.py, fixtures; validate's anticipation_overlay_files). */
  overlayFiles?: readonly string[];
  /** Blame's ranked candidates: blamed commits or the commits that merged the blamed changes. */
  candidates: readonly string[];
  /**
   * The environment of a commit's era (EraPool.envFor: one container per era); `without`: the install
   * candidates (ProbeEnv labels) a run there showed the commit has outgrown, to be passed over.
   */
  envFor: (commit: string, without: readonly string[]) => Promise<ProbeEnv>;
  /** Fallback window when the candidates give no good end (default 365 days before PR2's base). */
  windowDays?: number;
  /** Most probes in all (default 28). */
  maxProbes?: number;
  /** Most probes spent looking for a good end (default 16). */
  maxGoodEndProbes?: number;
  /** Good-end probes after which an import-error boundary is no longer halved (default 8). */
  maxImportHalving?: number;
  /** Extra runs the found commit's passing parent must pass (default 2: three passes, as validate's `runs`). */
  confirmRuns?: number;
  /** Where PR2's whole test module cannot import or its whole files crash the runner, try PR2's test changes applied to the commit's own (default true). */
  transplant?: boolean;
  signal?: AbortSignal;
  /** Each probe's run is a progress note and a debug line, with `state` (the probed commit) and `probe` (its number). */
  log?: Logger;
  /** The fail->pass tests validate saw failing at PR2's base (its S4 state, the same run): that probe is skipped. */
  knownBad?: readonly string[];
  /** The exceptions they ended with there (S4's `failureKinds`): spares a probe to read them. */
  knownBadKinds?: Readonly<Record<string, string>>;
}

type Select = Array<{ file: string; arg: string }>;

/** The runner's selection of the fail->pass tests, or null when it cannot select them all (whole files then). */
export function selectionOf(runner: Runner, failToPass: readonly string[], testFiles: string[]): Select | null {
  if (!runner.selectArg) return null;
  const out: Select = [];
  for (const id of failToPass) {
    const arg = runner.selectArg(id, testFiles);
    const file = testFileOf(runner, id, testFiles);
    if (arg === null || !file) return null;
    out.push({ file, arg });
  }
  return out;
}

/** A probe whose era's environment did not build: no evidence either way. */
function envBroken(problem: string): Verdict {
  return { outcome: 'skip', reason: 'env_broken', detail: problem };
}

/** Bisect PR2's fail->pass tests to the first mainline commit where they stop passing. */
export async function bisectInducer(opts: BisectOptions): Promise<BisectResult> {
  if (!opts.failToPass.length) {
    throw new ForesightError('bisectInducer needs at least one fail->pass test', { remedy: "pass PR2's FAIL_TO_PASS ids from validation" });
  }
  const t0 = Date.now();
  const containers = new Set<string>();
  let runs = 0;
  const testFiles = [...opts.testFiles];
  const overlayFiles = [...(opts.overlayFiles ?? [])];
  const budget = opts.maxProbes ?? BISECT_DEFAULTS.maxProbes;
  // The probe under way, for the notes.
  let probes = 0;
  let current: { n: number; role: StepRole } = { n: 0, role: 'bad_end' };
  const begin = (role: StepRole): void => {
    current = { n: ++probes, role };
  };
  const run = async (env: ChainEnv, commit: string, select?: Select, transplant = false): Promise<StateRun> => {
    opts.signal?.throwIfAborted();
    containers.add(env.containerId);
    const log = opts.log?.child({ state: commit, probe: current.n });
    log?.note(`bisecting PR2's fail->pass tests: probe ${current.n} of at most ${budget} at ${commit.slice(0, 10)} (${current.role.replace('_', ' ')}${transplant ? ", PR2's test changes applied" : ''})`);
    const r = await env.runState({
      checkout: commit,
      overlay: opts.fix.headSha,
      testFiles,
      overlayFiles,
      ...(select ? { select } : {}),
      ...(transplant ? { overlayBase: opts.fix.baseSha } : {}),
    });
    // An abort removes the container under the run: what it returned is no outcome.
    opts.signal?.throwIfAborted();
    runs++;
    log?.debug(`bisection run at ${commit.slice(0, 10)}: ${r.kind === 'report' ? `exit ${r.exitCode}` : r.kind} in ${(r.durationMs / 1000).toFixed(1)} s`);
    return r;
  };
  // The install candidates each commit outgrew (an installed package lacks what its code imports): its
  // later runs go straight to the era's next candidate.
  const outgrown = new Map<string, string[]>();
  type Ran = { kind: 'ran'; run: StateRun; env: ChainEnv; runner: Runner };
  /** One run at `commit` in its era's environment, or the era's next one while the commit has outgrown it. */
  const runAt = async (commit: string, selectFor: (runner: Runner) => Select | null, transplant = false): Promise<Ran | { kind: 'broken'; problem: string }> => {
    for (;;) {
      const left = outgrown.get(commit) ?? [];
      const era = await opts.envFor(commit, left);
      if (era.kind === 'broken') return era;
      const r = await run(era.env, commit, selectFor(era.runner) ?? undefined, transplant);
      const outgrew = outgrownCandidate(r, era, left);
      if (outgrew === null) return { kind: 'ran', run: r, env: era.env, runner: era.runner };
      outgrown.set(commit, [...left, outgrew.label]);
    }
  };
  const selectFor = (runner: Runner): Select | null => selectionOf(runner, opts.failToPass, testFiles);

  const probe = async (commit: string, role: StepRole): Promise<Step> => {
    begin(role);
    const started = Date.now();
    const first = await runAt(commit, selectFor);
    let verdict: Verdict;
    if (first.kind === 'broken') {
      verdict = envBroken(first.problem);
    } else {
      const { env, runner } = first;
      const select = selectFor(runner);
      let r = first.run;
      const unimportable = r.parsed.collectionErrors.find((f) => opts.failToPass.some((id) => testFileOf(runner, id, testFiles) === f));
      if (select && runProblem(r, runner.exitCodes) !== null && unimportable !== undefined) {
        // pytest exits 4 when the module of a selected id does not import: a skip either way, no second run.
        verdict = { outcome: 'skip', reason: 'import_error', detail: `${unimportable} cannot be imported` };
      } else {
        // Any other selection the runner could not run is no evidence: the whole files are run, as validate's repeats do.
        if (select && runProblem(r, runner.exitCodes) !== null) r = await run(env, commit);
        verdict = classifyRun(r, runner, opts.failToPass, testFiles);
      }
      // A runner crash before any test may be PR2's whole support module failing on the commit's code (Django
      // 3434dbd39d: PR2's tests/constraints/models.py passes `violation_error_code`, which the inducer's era lacks).
      if (verdict.outcome === 'skip' && (verdict.reason === 'import_error' || verdict.reason === 'runner_crash') && opts.transplant !== false) {
        const moved = await transplanted(commit, role);
        if (moved.verdict) return { commit, role, seconds: (Date.now() - started) / 1000, transplanted: true, ...moved.verdict };
        verdict = { ...verdict, detail: `${verdict.detail}; with PR2's test changes applied: ${moved.why}` };
      }
    }
    return { commit, role, seconds: (Date.now() - started) / 1000, ...verdict };
  };
  // PR2's whole test module may import what this commit lacks (Django: tests/admin_views/tests.py grows
  // imports every release), or its whole support module crash the runner here (a test model using a later
  // option), though its new tests would run here: then the PR's test changes alone are applied to the
  // commit's own modules. A pass is a pass (of some tests too: the search may follow
  // those). A failure counts only inside the bisection range (a good end is known below): before the
  // tested code exists its tests fail too, and that is no evidence of the bug (an import error there
  // keeps "introduced" readable).
  const transplanted = async (commit: string, role: StepRole): Promise<{ verdict: Verdict; why?: never } | { verdict: null; why: string }> => {
    const got = await runAt(commit, selectFor, true);
    if (got.kind === 'broken') return { verdict: null, why: got.problem.slice(0, 200) };
    const problem = runProblem(got.run, got.runner.exitCodes);
    if (problem !== null) return { verdict: null, why: problem.detail.slice(0, 200) };
    const v = classifyRun(got.run, got.runner, opts.failToPass, testFiles);
    const inRange = role === 'bisect' || role === 'confirm';
    if (v.outcome === 'good' || (v.outcome === 'bad' && inRange) || v.passing?.length) return { verdict: v };
    return { verdict: null, why: v.outcome === 'bad' ? 'the tests fail (below any known pass: no evidence)' : v.detail.slice(0, 200) };
  };

  // A commit run as a transplanted pass ran, whatever its whole module does (search.ts: the boundary check).
  const recheck = async (commit: string, role: StepRole): Promise<Step> => {
    begin(role);
    const started = Date.now();
    const got = await runAt(commit, selectFor, true);
    const verdict: Verdict = got.kind === 'broken' ? envBroken(got.problem) : classifyRun(got.run, got.runner, opts.failToPass, testFiles);
    return { commit, role, seconds: (Date.now() - started) / 1000, transplanted: true, ...verdict };
  };

  const index = positions(opts.mainline);
  const changeOf = commitToChange(opts.changes);
  const byId = new Map(opts.changes.map((c) => [c.id, c]));
  const onMainline = (sha: string): number | undefined => {
    const direct = index.get(sha);
    if (direct !== undefined) return direct;
    const change = byId.get(changeOf.get(sha) ?? '');
    return change ? index.get(change.mergeSha) : undefined;
  };
  const cost = () => ({ containers: containers.size, runs, seconds: (Date.now() - t0) / 1000 });
  const bad = index.get(opts.fix.baseSha);
  if (bad === undefined) return { kind: 'not_on_mainline', steps: [], cost: cost() };
  const candidates = opts.candidates.map(onMainline).filter((i): i is number => i !== undefined);
  const res = await searchFirstBad({
    mainline: opts.mainline,
    bad,
    candidates,
    windowDays: opts.windowDays ?? BISECT_DEFAULTS.windowDays,
    maxProbes: opts.maxProbes ?? BISECT_DEFAULTS.maxProbes,
    maxGoodEndProbes: opts.maxGoodEndProbes ?? BISECT_DEFAULTS.maxGoodEndProbes,
    maxImportHalving: opts.maxImportHalving ?? BISECT_DEFAULTS.maxImportHalving,
    confirmRuns: opts.confirmRuns ?? BISECT_DEFAULTS.confirmRuns,
    probe,
    ...(opts.transplant !== false ? { recheck } : {}),
    ...(opts.knownBad ? { knownBad: opts.knownBad } : {}),
    ...(opts.knownBad && opts.knownBadKinds ? { knownBadKinds: opts.knownBadKinds } : {}),
  });
  return { ...res, cost: cost() };
}
