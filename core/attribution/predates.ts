/**
 * Whether the defect PR2 fixes is older than PR1: at PR1's base, PR2's source change applied three-way
 * (core/env runners/checkout.sh) and PR2's test files laid over as the bisection lays them (whole, else
 * PR2's test changes on the commit's own modules), the anticipation tests run with the change and, when
 * they all pass with it, without it. Passing with it and failing without it as they fail at PR2's base,
 * they show a defect PR1 did not bring. A change that does not apply, or a run that shows nothing, is no
 * evidence either way.
 */
import type { Logger } from '../foundation/log.ts';
import { isTestFile } from '../foundation/files.ts';
import { gitBytes, pathShown, pathText } from '../foundation/git.ts';
import type { PredatesProbe, PredatesVerdict, PROBE_TEST_OUTCOMES } from '../foundation/model/attribution.ts';
import { runProblem, testFileOf, type StateRequest, type StateRun } from '../env/index.ts';
import { selectionOf } from './bisect.ts';
import type { ProbeEnv } from './types.ts';

export interface PredatesOptions {
  /** The commit probed: PR1's base. */
  commit: string;
  /** PR2: its source change is `git diff baseSha headSha` of `sourceFiles`; its test files are laid over from `headSha`. */
  fix: { baseSha: string; headSha: string };
  /** PR2's changed files that are not tests (sourceFilesOf). */
  sourceFiles: readonly string[];
  /** The anticipation tests (validate's ANTICIPATION_FAIL_TO_PASS). */
  tests: readonly string[];
  /** PR2's test files (anticipation_test_files) and support files (anticipation_overlay_files). */
  testFiles: readonly string[];
  overlayFiles?: readonly string[];
  /** The exceptions the tests ended with at PR2's base (S4's failureKinds): a failure another way is not this defect. */
  baseKinds?: Readonly<Record<string, string>>;
  /** The environment the probe runs in (the chain's PR1-era image). */
  env: () => Promise<ProbeEnv>;
  signal?: AbortSignal;
  log?: Logger;
}

type TestOutcome = (typeof PROBE_TEST_OUTCOMES)[number];

/** checkout.sh's exit when the source change does not apply. */
const NOT_APPLIED_EXIT = 94;

/** PR2's changed files that are not tests (extract's split: core/foundation isTestFile), as stored names. */
export async function sourceFilesOf(repo: string, base: string, head: string): Promise<string[]> {
  const out = await gitBytes(repo, ['diff', '-z', '--name-only', '--no-renames', '--end-of-options', base, head]);
  const names: string[] = [];
  for (let from = 0; from < out.length; ) {
    const end = out.indexOf(0, from);
    const name = out.subarray(from, end < 0 ? out.length : end);
    if (name.length) names.push(pathText(name));
    from = end < 0 ? out.length : end + 1;
  }
  return names.filter((p) => !isTestFile(pathShown(p)));
}

/** What one run showed of the anticipation tests. */
type Read =
  | { kind: 'ran'; outcomes: Map<string, TestOutcome> }
  /** The tests' modules did not import, or the runner crashed before any test: PR2's test changes alone may run. */
  | { kind: 'unimportable'; detail: string }
  | { kind: 'not_applied'; detail: string }
  | { kind: 'no_evidence'; detail: string };

const lastLine = (text: string): string => text.trim().split('\n').pop()?.trim().slice(0, 300) ?? '';

export async function probePredates(opts: PredatesOptions): Promise<PredatesProbe> {
  const t0 = Date.now();
  const short = opts.commit.slice(0, 10);
  const ids = [...opts.tests];
  const applied = { base: opts.fix.baseSha, head: opts.fix.headSha, files: [...opts.sourceFiles] };
  let runs = 0;
  let transplanted = false;
  let tests: PredatesProbe['tests'] = [];
  const done = (verdict: PredatesVerdict, detail: string): PredatesProbe => ({
    commit: opts.commit, applied, transplanted, tests, verdict, detail, runs, seconds: Math.round((Date.now() - t0) / 100) / 10,
  });
  if (!ids.length) return done('no_evidence', 'no anticipation test to run');
  if (!applied.files.length) return done('not_applied', 'PR2 changed no source file: there is no fix to apply');
  const probeEnv = await opts.env();
  if (probeEnv.kind === 'broken') return done('no_evidence', `no environment for ${short}: ${probeEnv.problem.slice(0, 300)}`);
  const { env, runner } = probeEnv;
  const testFiles = [...opts.testFiles];
  const select = selectionOf(runner, ids, testFiles);
  const files = new Set(ids.map((id) => testFileOf(runner, id, testFiles)).filter((f): f is string => f !== null));
  const log = opts.log?.child({ state: opts.commit });

  const read = (r: StateRun, againstBase: boolean): Read => {
    if (r.kind === 'no_report' && r.exitCode === NOT_APPLIED_EXIT) return { kind: 'not_applied', detail: lastLine(r.outputTail) };
    const problem = runProblem(r, runner.exitCodes);
    const unimportable = r.parsed.collectionErrors.find((f) => files.has(f));
    if (problem?.kind === 'chain') return { kind: 'unimportable', detail: problem.detail.slice(0, 300) };
    if (unimportable !== undefined) return { kind: 'unimportable', detail: `${unimportable} cannot be imported` };
    if (problem) return { kind: 'no_evidence', detail: problem.detail.slice(0, 300) };
    const outcomes = new Map<string, TestOutcome>();
    for (const id of ids) {
      const status = r.parsed.tests[id];
      if (status === 'pass') outcomes.set(id, 'pass');
      else if (status === 'skip') outcomes.set(id, 'skip');
      else if (status === 'fail' || status === 'error') {
        const here = r.parsed.failureKinds?.[id];
        const there = opts.baseKinds?.[id];
        // As the bisection reads it: an exception unknown on either side counts as the same failure.
        outcomes.set(id, againstBase && here !== undefined && there !== undefined && here !== there ? 'fail_otherwise' : 'fail');
      } else outcomes.set(id, 'missing');
    }
    return { kind: 'ran', outcomes };
  };
  const run = async (withFix: boolean): Promise<StateRun> => {
    opts.signal?.throwIfAborted();
    log?.note(`probing PR1's base ${short}: the anticipation tests ${withFix ? 'with' : 'without'} PR2's source change${transplanted ? " (PR2's test changes applied)" : ''}`);
    const req: StateRequest = {
      checkout: opts.commit,
      overlay: opts.fix.headSha,
      testFiles,
      overlayFiles: [...(opts.overlayFiles ?? [])],
      ...(transplanted ? { overlayBase: opts.fix.baseSha } : {}),
      ...(withFix ? { sourceChange: applied } : {}),
    };
    let r = await env.runState(select ? { ...req, select } : req);
    runs++;
    // A selection the runner could not run, its modules importing: the whole files run, as the bisection's probes do.
    if (select && runProblem(r, runner.exitCodes) !== null && read(r, false).kind === 'no_evidence') {
      r = await env.runState(req);
      runs++;
    }
    // An abort removes the container under the run: what it returned is no outcome.
    opts.signal?.throwIfAborted();
    return r;
  };

  let withFix = read(await run(true), false);
  if (withFix.kind === 'unimportable') {
    // PR2's whole test module may import what PR1's base lacks: its test changes on the commit's own modules.
    transplanted = true;
    const why = withFix.detail;
    withFix = read(await run(true), false);
    if (withFix.kind === 'unimportable') return done('no_evidence', `with PR2's source change: ${why}; with PR2's test changes applied: ${withFix.detail}`);
  }
  if (withFix.kind === 'not_applied') return done('not_applied', withFix.detail || `PR2's source change does not apply at ${short}`);
  if (withFix.kind === 'no_evidence') return done('no_evidence', `with PR2's source change: ${withFix.detail}`);
  const withOutcomes = withFix.outcomes;
  tests = ids.map((id) => ({ id, with_fix: withOutcomes.get(id)!, without_fix: null }));
  const notPassing = ids.filter((id) => withOutcomes.get(id) !== 'pass');
  if (notPassing.length) {
    return done('fix_fails', `with PR2's source change at ${short}, ${notPassing.length} of ${ids.length} anticipation tests do not pass (${notPassing.slice(0, 3).join(', ')})`);
  }

  const without = read(await run(false), true);
  if (without.kind === 'no_evidence' || without.kind === 'not_applied') return done('no_evidence', `without PR2's source change: ${without.detail}`);
  if (without.kind === 'unimportable') {
    // Importable with PR2's change only: the tests need what PR2 adds, which says nothing of an older defect.
    tests = tests.map((t) => ({ ...t, without_fix: 'missing' }));
    return done('fails_otherwise', `without PR2's source change the tests do not run at ${short}: ${without.detail}`);
  }
  const out = without.outcomes;
  tests = tests.map((t) => ({ ...t, without_fix: out.get(t.id)! }));
  const same = ids.filter((id) => out.get(id) === 'fail');
  if (same.length === ids.length) {
    const [they, fail, pass] = ids.length === 1 ? ['the anticipation test', 'fails', 'passes'] : [`the ${ids.length} anticipation tests`, 'fail', 'pass'];
    return done('predates', `at PR1's base ${short} ${they} ${fail} as at PR2's base and ${pass} with PR2's source change applied: the defect predates PR1`);
  }
  if (same.length) return done('partly', `at PR1's base ${short}, PR2's source change turns ${same.length} of ${ids.length} anticipation tests from failing to passing: ${same.slice(0, 3).join(', ')}`);
  const passing = ids.filter((id) => out.get(id) === 'pass');
  if (passing.length) return done('passes_without', `at PR1's base ${short}, ${passing.length} of ${ids.length} anticipation tests pass without PR2's source change: the defect came later`);
  return done('fails_otherwise', `at PR1's base ${short} the anticipation tests fail another way than at PR2's base, or do not run: the tested code is not there yet`);
}
