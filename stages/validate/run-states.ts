/** Runs a chain's five states in the environments given, repeated as `validate.repeat` says, and folds the runs per state. */
import type { ProbeEnv } from '../../core/attribution/index.ts';
import { keepRules } from '../../core/extract/data-consumers.ts';
import type { ExtractedChain } from '../../core/foundation/model/extracted.ts';
import type { Logger } from '../../core/foundation/log.ts';
import type { RepeatStrategy } from '../../core/foundation/settings.ts';
import { aggregateRuns, brokenState, runProblem, type Covers, type StateRequest } from './aggregate-runs.ts';
import { computeSets, type FileOf } from './compute-sets.ts';
import { planRepeats, type RepeatSelection } from './plan-repeats.ts';
import { outgrownCandidate, testFileOf, type ChainEnv, type Runner, type StateRun } from '../../core/env/index.ts';
import type { StateName, StateResult } from '../../core/foundation/model/validated.ts';

/** The five states of a chain (definitions.md). */
export function stateRequests(c: ExtractedChain): StateRequest[] {
  const pr1 = keepRules(c.data_consumers.pr1);
  const pr2 = keepRules(c.data_consumers.pr2);
  return [
    { name: 'S1', checkout: c.pr1_base, overlay: c.pr1_head, testFiles: c.pr1_test_files, overlayFiles: c.pr1_overlay_files, keep: pr1 },
    { name: 'S2', checkout: c.pr1_head, overlay: null, testFiles: c.pr1_test_files, overlayFiles: [], keep: pr1 },
    { name: 'S3', checkout: c.pr1_head, overlay: c.pr2_head, testFiles: c.anticipation_test_files, overlayFiles: c.anticipation_overlay_files, keep: pr2 },
    { name: 'S4', checkout: c.pr2_base, overlay: c.pr2_head, testFiles: c.anticipation_test_files, overlayFiles: c.anticipation_overlay_files, keep: pr2 },
    { name: 'S5', checkout: c.pr2_head, overlay: null, testFiles: c.anticipation_test_files, overlayFiles: [], keep: pr2 },
  ];
}

/**
 * S1 again with the base's own version of PR1's test files (no overlay): run when PR1's overlaid test files
 * crash the runner at pr1_base (a Django test app's models use an option PR1 adds) while pr1_head runs them.
 */
export function baseVersionRequest(c: ExtractedChain): StateRequest {
  return { name: 'S1', checkout: c.pr1_base, overlay: null, testFiles: c.pr1_test_files, overlayFiles: [], keep: keepRules(c.data_consumers.pr1) };
}

/**
 * The crash of PR1's overlaid test files at pr1_base, when it came before any test result and pr1_head ran
 * the same files: the whole runner fell (Django's app loading), or none of the files could be loaded (a Go
 * package whose tests use what PR1 adds does not compile; a Python module importing it). S1 is then decided
 * on their base version: the overlaid tests count as failing, PASS_TO_PASS comes from the base's own tests.
 * A run cut short after some results, or one whose count disagrees, stays what it was.
 */
export function overlayCrash(s1: StateResult, s1Runs: readonly StateRun[], s2: StateResult): string | null {
  if (s1.overlay === null || s2.outcome.kind !== 'ran' || s2.collectionErrors.length) return null;
  if (!s1Runs.every((r) => r.kind === 'report' && Object.keys(r.parsed.tests).length === 0)) return null;
  if (s1.outcome.kind === 'chain') return s1.outcome.detail;
  if (s1.outcome.kind === 'ran' && s1.collectionErrors.length > 0) return `PR1's test files do not load at pr1_base: ${s1.collectionErrors.join(', ')}`;
  return null;
}

/** What each state runs, for the progress notes. */
const STATE_COMMITS: Record<StateName, string> = {
  S1: "pr1_base + PR1's tests",
  S2: 'pr1_head',
  S3: "pr1_head + PR2's tests",
  S4: "pr2_base + PR2's tests",
  S5: 'pr2_head',
};

/** What validating a chain cost: for the benchmark's wall-time / test-time ratio. */
export interface ChainCost {
  containerStarts: number;
  /** Time inside the container running states (git checkout + the test runner). */
  execMs: number;
  wallMs: number;
}

/**
 * How states are repeated: `all`, every state `runs` times on its whole test files; `candidates`, every
 * state once, then only the tests that can still be in a set (plan-repeats.ts), up to `runs` in all;
 * `gated`, as `candidates`, but a chain already excluded is not run again: more runs only shrink the
 * sets and add problems, so no exclusion is ever lifted by them (its verified row's sets then rest on
 * fewer runs: `states[].runs` says how many). With a runner that runs passes (ChainEnv.runPasses),
 * `candidates` and `gated` run a state's repeats as passes of one runner start, each pass a run.
 */
export type { RepeatStrategy };

type EraFor = (state: StateName) => Promise<ProbeEnv>;

type StatesCost = Omit<ChainCost, 'containerStarts' | 'wallMs'> & { stateRuns: number; runnerStarts: number };

/**
 * The states and what they cost, or the first state whose run showed its checkout outgrew the era's install
 * candidate `label` (an installed package lacks what the code imports): the caller moves the era to its next
 * candidate and runs the states again.
 */
export type ChainStates =
  | { kind: 'ran'; states: Record<StateName, StateResult>; cost: StatesCost }
  | { kind: 'outgrown'; state: StateName; label: string; detail: string; cost: StatesCost };

/** Longest selection sent to one run (characters of node ids); a longer one runs the whole files. */
const SELECT_MAX_CHARS = 64_000;

/**
 * Run every state of a chain in the environment `envFor` gives for that state (one container per
 * distinct environment, normally one per chain), repeated as `repeat` says, and fold the runs per state.
 */
export async function runChainStates(opts: {
  chain: ExtractedChain;
  runs: number;
  repeat?: RepeatStrategy;
  envFor: EraFor;
  signal: AbortSignal;
  /** The chain's logger: each run is a progress note and a debug line, with `state` and `run`. */
  log?: Logger;
}): Promise<ChainStates> {
  const repeat = opts.repeat ?? 'candidates';
  // stateRuns: runs done (dropped passes too); runnerStarts: runner processes started for them.
  const cost = { execMs: 0, stateRuns: 0, runnerStarts: 0 };
  const request = (req: StateRequest, select?: StateRequestSelect) => ({
    checkout: req.checkout,
    overlay: req.overlay,
    testFiles: req.testFiles,
    overlayFiles: req.overlayFiles,
    ...(req.keep?.length ? { keep: req.keep } : {}),
    ...(select ? { select } : {}),
  });
  /** Run `run` (and the `passes` - 1 after it) of a state: its note, and once done its debug line. */
  const started = (req: StateRequest, run: number, passes = 1): ((rs: StateRun[]) => void) => {
    const log = opts.log?.child({ state: req.name, run });
    const runs = passes > 1 ? `runs ${run}-${run + passes - 1}` : `run ${run}`;
    const what = req.name === 'S1' && req.overlay === null ? "pr1_base, its own version of PR1's tests" : STATE_COMMITS[req.name];
    log?.note(`${req.name} ${runs}/${opts.runs} (${what})`);
    return (rs) => log?.debug(`${req.name} ${runs}: ${rs.map((r) => (r.kind === 'report' ? `exit ${r.exitCode}` : r.kind)).join(', ')} in ${(rs.reduce((a, r) => a + r.durationMs, 0) / 1000).toFixed(1)} s`);
  };
  const run = async (env: ChainEnv, req: StateRequest, n: number, select?: StateRequestSelect): Promise<StateRun> => {
    opts.signal.throwIfAborted();
    const ran = started(req, n);
    const r = await env.runState(request(req, select));
    // An abort removes the container under the run: what it returned is no outcome at all.
    opts.signal.throwIfAborted();
    ran([r]);
    cost.execMs += r.durationMs;
    cost.stateRuns++;
    cost.runnerStarts++;
    return r;
  };
  /** `passes` runs of one selection in one runner start (ChainEnv.runPasses), the first of them run `n`. */
  const runPasses = async (env: ChainEnv, req: StateRequest, n: number, passes: number, select?: StateRequestSelect): Promise<StateRun[]> => {
    opts.signal.throwIfAborted();
    const ran = started(req, n, passes);
    const rs = await env.runPasses!(request(req, select), passes);
    opts.signal.throwIfAborted();
    ran(rs);
    cost.execMs += rs.reduce((a, r) => a + r.durationMs, 0);
    cost.stateRuns += rs.length;
    cost.runnerStarts++;
    return rs;
  };
  const states = {} as Record<StateName, StateResult>;
  const ready = new Map<StateName, { req: StateRequest; env: ChainEnv; runner: Runner; runs: StateRun[]; covers: Covers[] }>();
  const times = repeat === 'all' ? opts.runs : 1;
  /** The first runs of a state, or the install candidate its checkout outgrew. */
  const firstRuns = async (era: Extract<ProbeEnv, { kind: 'ready' }>, req: StateRequest): Promise<StateRun[] | Extract<ChainStates, { kind: 'outgrown' }>> => {
    const runs: StateRun[] = [];
    for (let i = 0; i < times; i++) {
      const r = await run(era.env, req, i + 1);
      const outgrew = i === 0 ? outgrownCandidate(r, era) : null;
      if (outgrew !== null) return { kind: 'outgrown', state: req.name, label: outgrew.label, detail: outgrew.line, cost };
      runs.push(r);
      if (r.kind !== 'report') break; // a broken state is not retried into a pass
    }
    return runs;
  };
  const eras = new Map<StateName, Extract<ProbeEnv, { kind: 'ready' }>>();
  for (const req of stateRequests(opts.chain)) {
    const era = await opts.envFor(req.name);
    if (era.kind === 'broken') {
      states[req.name] = brokenState(req, era.problem);
      continue;
    }
    const runs = await firstRuns(era, req);
    if (!Array.isArray(runs)) return runs;
    eras.set(req.name, era);
    ready.set(req.name, { req, env: era.env, runner: era.runner, runs, covers: runs.map(() => null) });
  }
  // Set when S1 runs the base's own version of PR1's test files (their overlaid version crashed the runner).
  let decidedBy: StateResult['decidedBy'];
  const fold = (): void => {
    for (const [name, s] of ready) states[name] = aggregateRuns(s.req, s.runs, s.runner.exitCodes, s.covers);
    if (decidedBy) states.S1 = { ...states.S1, decidedBy };
  };
  fold();
  const s1Era = eras.get('S1');
  const s1Runs = ready.get('S1')?.runs;
  const crash = s1Runs && states.S2 ? overlayCrash(states.S1, s1Runs, states.S2) : null;
  if (crash !== null && s1Era) {
    opts.log?.info(`PR1's test files laid over pr1_base crash the runner (${crash}): S1 is decided on their base version`);
    // The repeats of S1 run this version too: its P2P candidates are checked for flakiness as any other.
    const req = baseVersionRequest(opts.chain);
    const runs = await firstRuns(s1Era, req);
    if (!Array.isArray(runs)) return runs;
    ready.set('S1', { req, env: s1Era.env, runner: s1Era.runner, runs, covers: runs.map(() => null) });
    decidedBy = { reason: 'base_version_after_overlay_crash', overlay: opts.chain.pr1_head, crash };
    fold();
  }
  if (repeat !== 'all' && opts.runs > 1) {
    const runner = [...ready.values()][0]?.runner;
    const fileOf: FileOf = (id, files) => testFileOf(runner, id, files);
    /** One repeat of a state's selection in a runner start of its own. */
    const repeatOnce = async (s: NonNullable<ReturnType<typeof ready.get>>, sel: RepeatSelection): Promise<void> => {
      const select = selection(s.runner, s.req.testFiles, sel);
      const n = s.runs.length + 1;
      let r = await run(s.env, s.req, n, select ?? undefined);
      let covers: Covers = select ? coverOf(sel, s.req.testFiles, fileOf) : null;
      // A selection the runner could not run (e.g. a node id it does not accept) is no evidence
      // about the tests: the whole files are run instead, never counted as an outcome.
      if (select && runProblem(r, s.runner.exitCodes) !== null) {
        r = await run(s.env, s.req, n);
        covers = null;
      }
      s.runs.push(r);
      s.covers.push(covers);
    };
    if ([...ready.values()].every((s) => s.env.runPasses !== undefined)) {
      // Rounds 2..runs of a state in one runner start (test databases set up once); the first run of
      // each state stays a process of its own, so flakiness across processes is still seen. The
      // candidates are planned once: without the replanning between rounds a test already flaky
      // may run again, which changes nothing (it stays flaky). A test whose outcome changes between
      // passes, e.g. because an earlier pass left data behind, is flaky and in no set: leaking state
      // can only remove tests from the sets, never add one.
      if (repeat === 'gated' && computeSets(states, fileOf).exclusion !== null) return { kind: 'ran', states, cost };
      for (const [name, sel] of planRepeats(states, opts.chain.instance_id, fileOf)) {
        const s = ready.get(name);
        if (!s) continue;
        const select = selection(s.runner, s.req.testFiles, sel);
        const passes = await runPasses(s.env, s.req, s.runs.length + 1, opts.runs - 1, select ?? undefined);
        if (passes.every((r) => runProblem(r, s.runner.exitCodes) === null)) {
          const covers: Covers = select ? coverOf(sel, s.req.testFiles, fileOf) : null;
          for (const r of passes) {
            s.runs.push(r);
            s.covers.push(covers);
          }
          continue;
        }
        // A pass that is no evidence (a crash, a timeout, a selection the runner refused): the
        // passes are dropped, never counted, and each repeat runs as a process of its own instead.
        for (let i = 1; i < opts.runs; i++) await repeatOnce(s, sel);
      }
      fold();
      return { kind: 'ran', states, cost };
    }
    for (let round = 1; round < opts.runs; round++) {
      if (repeat === 'gated' && computeSets(states, fileOf).exclusion !== null) break;
      // After each round: a test that changed is flaky now and no longer a candidate.
      const plan = planRepeats(states, opts.chain.instance_id, fileOf);
      if (!plan.size) break;
      for (const [name, sel] of plan) {
        const s = ready.get(name);
        if (s) await repeatOnce(s, sel);
      }
      fold();
    }
  }
  return { kind: 'ran', states, cost };
}

type StateRequestSelect = Array<{ file: string; arg: string | null }>;

/** The runner's selection for a repeat, or null when it must run the whole files (no selection support, too long). */
export function selection(runner: Runner, testFiles: readonly string[], sel: RepeatSelection): StateRequestSelect | null {
  if (!runner.selectArg) return null;
  const out: StateRequestSelect = sel.files.map((file) => ({ file, arg: null }));
  for (const id of sel.ids) {
    const arg = runner.selectArg(id, testFiles);
    const file = testFileOf(runner, id, testFiles);
    if (arg === null || file === null) return null;
    out.push({ file, arg });
  }
  const chars = out.reduce((a, s) => a + s.file.length + (s.arg?.length ?? 0) + 2, 0);
  return chars > SELECT_MAX_CHARS ? null : out;
}

/** The tests a selected run was asked for: the selected ids and every test of a selected file. */
function coverOf(sel: RepeatSelection, testFiles: readonly string[], fileOf: FileOf): Covers {
  const ids = new Set(sel.ids);
  const files = new Set(sel.files);
  return (id) => ids.has(id) || (files.size > 0 && files.has(fileOf(id, testFiles) ?? ''));
}
