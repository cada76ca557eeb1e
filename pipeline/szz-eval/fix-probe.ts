/**
 * A fix's own tests as validate's S4/S5 see them, then their bisection (`foresight szz-eval --execute`).
 * The fix's test and support files are laid over its parent (S4: they must fail) and run at the
 * fix (S5: they must pass), in the fix's era environment and on the recipe's backends in turn, one run each;
 * the fail->pass tests are then bisected (core/attribution) in the same containers, bounded by the
 * candidates given. A fix whose tests cannot run here is dropped with a literal reason, never scored.
 */
import { bisectInducer, type BisectResult } from '../../core/attribution/index.ts';
import { planTestFiles, outgrownCandidate, testFileOf, type StateRun } from '../../core/env/index.ts';
import { splitPatch } from '../../core/extract/split-patch.ts';
import type { ListedChanges } from '../../core/history/changes.ts';
import type { Logger } from '../../core/foundation/log.ts';
import type { StateResult } from '../../core/foundation/model/validated.ts';
import {
  aggregateRuns,
  chainBackends,
  ChainContainers,
  computeSets,
  skippedAtHead,
  withoutIgnoredTests,
  type ChainTestRules,
  type ChainWork,
  type StateRequest,
} from '../../stages/validate/index.ts';

/** Why a fix's tests say nothing here: not scored. */
export const FIX_DROP_REASONS = [
  /** The fix's parent is not on the first-parent history (a merged branch's commit): nothing to bisect along. */
  'not_on_mainline',
  /** The fix touched no test module its era's runner runs. */
  'no_test_files',
  /** The fix's era environment did not build. */
  'env_broken',
  /** A run gave no outcome (timeout, no report, a service that did not start): our infrastructure. */
  'infra',
  /** The fix's own tests crash the runner or cannot be imported at the fix itself. */
  'fix_tests_broken',
  /** The runner crashes at the fix's parent with its tests laid over (they need code the fix adds). */
  'base_crash',
  /** The deciding tests are skipped at the fix on every backend. */
  'tests_skipped',
  /** No test fails at the fix's parent and passes at the fix. */
  'not_fail_to_pass',
] as const;
export type FixDropReason = (typeof FIX_DROP_REASONS)[number];

/** What a fix's container work cost: containers started (a warm pooled one reused is not counted), runs, wall seconds. */
export interface FixCost {
  containers: number;
  runs: number;
  seconds: number;
}

export type FixExecution =
  | { kind: 'dropped'; reason: FixDropReason; detail: string; cost: FixCost }
  | { kind: 'bisected'; failToPass: string[]; backend: string; testFiles: string[]; bisect: BisectResult; cost: FixCost };

export interface FixInput {
  clone: string;
  /** The fix (`headSha`) and its first parent (`baseSha`). */
  fix: { baseSha: string; headSha: string };
  /** Blame's ranked candidates: the bounds of the search. */
  candidates: readonly string[];
  /** The first-parent history and its changes (core/history listChanges). */
  history: ListedChanges;
  /** For log lines and container names. */
  label: string;
}

/** Run a fix's tests at its parent and at the fix; bisect the fail->pass ones. Throws only on infrastructure (Docker). */
export async function executeFix(work: ChainWork, input: FixInput, signal: AbortSignal, log: Logger): Promise<FixExecution> {
  const t0 = Date.now();
  let runs = 0;
  let containers = 0;
  const cost = (): FixCost => ({ containers, runs, seconds: (Date.now() - t0) / 1000 });
  const drop = (reason: FixDropReason, detail: string): FixExecution => ({ kind: 'dropped', reason, detail, cost: cost() });
  const { fix } = input;
  if (!input.history.mainline.some((c) => c.sha === fix.baseSha)) return drop('not_on_mainline', `${fix.baseSha.slice(0, 10)} is not a first-parent commit`);
  const split = await splitPatch(input.clone, fix.baseSha, fix.headSha);
  if (!split.testFiles.length) return drop('no_test_files', `${fix.headSha.slice(0, 10)} touched no test module`);
  const { overlayFiles } = split;
  // Only the files the era runs on each backend (Django's runtests.py collects no js_tests/*.test.js, and gis_tests
  // only on PostGIS): none is no test, or tests this environment skips, never an infrastructure failure.
  const planOf = (rules: ChainTestRules['pr1']) => planTestFiles(rules, split.testFiles, chainBackends({ pr1: rules, pr2: rules }));
  const nothing = (plan: Extract<ReturnType<typeof planOf>, { kind: 'none' }>): FixExecution =>
    drop(plan.reason === 'no_tests' ? 'no_test_files' : 'tests_skipped', `${fix.headSha.slice(0, 10)} ${plan.detail}`);
  // Told by the era's recipe alone when its install candidates agree: such a fix costs no image.
  const rules = await work.testRules(fix.headSha);
  const early = rules ? planOf(rules) : null;
  if (early?.kind === 'none') return nothing(early);
  const first = await work.eraOf(fix.headSha, split.testFiles, signal, { log });
  if (first.kind === 'broken') return drop('env_broken', first.problem);
  const plan = planOf(first);
  if (plan.kind === 'none') return nothing(plan);
  let era = first;
  // The era's install candidates the fix's states outgrew (an installed package lacks what they import).
  const passedOver: string[] = [];
  const fileOf = (id: string, files: readonly string[]): string | null => testFileOf(era.runner, id, files);
  let last: FixExecution | null = null;
  for (const { backend, files: testFiles } of plan.on) {
    // validate's S4 and S5 of a chain whose PR2 is this fix; both in the era of the fix (PR2's head).
    const requests: Record<'S4' | 'S5', StateRequest> = {
      S4: { name: 'S4', checkout: fix.baseSha, overlay: fix.headSha, testFiles, overlayFiles },
      S5: { name: 'S5', checkout: fix.headSha, overlay: null, testFiles, overlayFiles: [] },
    };
    const pool = new ChainContainers(work.containers(signal, log), backend, input.label);
    let out: { result: FixExecution; next: boolean } | null = null;
    try {
      /** A state's one run, or the install candidate it showed the fix has outgrown. */
      const state = async (name: 'S4' | 'S5'): Promise<{ kind: 'ran'; result: StateResult } | { kind: 'outgrown'; label: string; why: string }> => {
        const req = requests[name];
        const got = await pool.envOf(era);
        if (got.kind === 'broken') return { kind: 'ran', result: { name, checkout: req.checkout, overlay: req.overlay, testFiles, outcome: { kind: 'infra', reason: 'env_build', detail: got.problem }, runs: 0, tests: {}, collectionErrors: [], durationMs: 0 } };
        signal.throwIfAborted();
        const run: StateRun = await got.env.runState({ checkout: req.checkout, overlay: req.overlay, testFiles: req.testFiles, overlayFiles: req.overlayFiles });
        signal.throwIfAborted();
        runs++;
        const outgrew = outgrownCandidate(run, got, passedOver);
        if (outgrew !== null) return { kind: 'outgrown', label: outgrew.label, why: outgrew.line };
        return { kind: 'ran', result: withoutIgnoredTests(aggregateRuns(req, [run], got.runner.exitCodes), era.recipe) };
      };
      // Both states in one era: one that outgrew it sends both to the era's next install candidate.
      let S4: StateResult;
      let S5: StateResult;
      for (;;) {
        const s4 = await state('S4');
        const s5 = s4.kind === 'ran' ? await state('S5') : s4;
        if (s4.kind === 'ran' && s5.kind === 'ran') {
          [S4, S5] = [s4.result, s5.result];
          break;
        }
        const outgrown = s4.kind === 'outgrown' ? s4 : (s5 as Extract<typeof s5, { kind: 'outgrown' }>);
        passedOver.push(outgrown.label);
        log.info(`${input.label}: "${outgrown.label}" cannot run the fix's states (${outgrown.why}): the era's next install candidate`);
        const next = await work.eraOf(fix.headSha, testFiles, signal, { log, without: passedOver });
        // The finally below counts this backend's containers after the return value is made.
        if (next.kind === 'broken') return { ...drop('env_broken', next.problem), cost: { ...cost(), containers: containers + pool.opened } };
        era = next;
      }
      // PR2's sets depend on S4 and S5 only: the PR1 states are stand-ins, never read for them.
      const f2p = computeSets({ S1: S4, S2: S5, S3: S5, S4, S5 }, fileOf).PR2_FAIL_TO_PASS;
      const problem = stateProblem(S4, S5, f2p);
      if (problem) {
        // Only skipped tests move on to the next backend, as validate's fallback does.
        out = { result: { kind: 'dropped', reason: problem.reason, detail: `${backend}: ${problem.detail}`, cost: cost() }, next: problem.reason === 'tests_skipped' };
      } else {
        const { mainline, changes } = input.history;
        const bisect = await bisectInducer({
          mainline,
          changes,
          fix,
          failToPass: f2p,
          testFiles,
          overlayFiles,
          candidates: input.candidates,
          ...work.bisectBudget(),
          envFor: async (commit, without) => {
            const e = await work.eraOf(commit, testFiles, signal, { log, without });
            return e.kind === 'broken' ? { kind: 'broken', problem: e.problem } : pool.envOf(e);
          },
          signal,
          // Each probe is a progress note of this fix (its commit as `state`).
          log: log.child({ instance_id: input.label }),
          // S4 just ran exactly the bisection's bad-end probe.
          knownBad: f2p,
          knownBadKinds: S4.failureKinds ?? {},
        });
        runs += bisect.cost.runs;
        out = { result: { kind: 'bisected', failToPass: f2p, backend, testFiles, bisect, cost: cost() }, next: false };
      }
    } finally {
      containers += pool.opened;
      await pool.close();
    }
    // The cost once this backend's containers are counted (out is set unless the try threw).
    last = { ...out!.result, cost: cost() };
    if (!out!.next) return last;
  }
  return last ?? drop('infra', 'no backend was tried');
}

/** Why S4/S5 give no fail->pass test to bisect, or null when they do. */
function stateProblem(S4: StateResult, S5: StateResult, f2p: readonly string[]): { reason: FixDropReason; detail: string } | null {
  for (const s of [S5, S4]) if (s.outcome.kind === 'infra') return { reason: 'infra', detail: `${s.name}: ${s.outcome.detail}` };
  if (S5.outcome.kind !== 'ran') return { reason: 'fix_tests_broken', detail: `at the fix: ${S5.outcome.detail}` };
  if (S5.collectionErrors.length) return { reason: 'fix_tests_broken', detail: `${S5.collectionErrors.join(', ')} cannot be imported at the fix` };
  if (S4.outcome.kind !== 'ran') return { reason: 'base_crash', detail: `at the fix's parent: ${S4.outcome.detail}` };
  if (f2p.length) return null;
  const skipped = skippedAtHead(S4, S5);
  if (skipped.length) return { reason: 'tests_skipped', detail: `skipped at the fix: ${skipped.slice(0, 5).join(', ')}` };
  return { reason: 'not_fail_to_pass', detail: "no test fails at the fix's parent and passes at the fix" };
}
