/**
 * Validates one chain in the eras given: its states on each backend in turn, folded into its sets.
 *
 * The states run on the recipe's database backends until one can show the fix (backends.ts), on the era's
 * next install candidate when a run shows the checkout outgrew one; the runs become the sets (compute-sets.ts).
 */
import { DEFAULT_BACKEND, planTestFiles, testFileOf, type EraEnv, type TestFilesPlan } from '../../core/env/index.ts';
import type { Config } from '../../core/foundation/config.ts';
import { changeLabel, type Exclusion } from '../../core/foundation/model/change.ts';
import type { ExtractedChain } from '../../core/foundation/model/extracted.ts';
import { STATE_NAMES, type StateName, type StateResult, type ValidatedChain } from '../../core/foundation/model/validated.ts';
import { withoutIgnoredTests } from './aggregate-runs.ts';
import { ChainContainers, type ContainerDeps } from './backend-containers.ts';
import { validateOnBackends } from './backends.ts';
import { computeSets, type FileOf } from './compute-sets.ts';
import { runChainStates, type ChainCost } from './run-states.ts';

/** A chain's two eras: PR1's head (S1–S3) and PR2's head (S4, S5); one object when both heads are one commit. */
export interface ChainEras {
  pr1: EraEnv;
  pr2: EraEnv;
}

/** What decides the test files a chain runs on each backend: each era's recipe and runner (chosen eras, or eraTestRules before any). */
export interface ChainTestRules {
  pr1: Pick<EraEnv, 'recipe' | 'runner'>;
  pr2: Pick<EraEnv, 'recipe' | 'runner'>;
}

export interface ValidateChainResult {
  chain: ValidatedChain;
  stateRuns: number;
  /** Whether another backend was tried (one left before the one kept, or a fallback whose environment failed). */
  fellBack: boolean;
}

/** The runner's rule for a test id's file, else pytest's `<file>::...`. */
export function fileOfFor(eras: ChainEras): FileOf {
  const runner = eras.pr1.runner ?? eras.pr2.runner;
  return (id, files) => testFileOf(runner, id, files);
}

const EMPTY_SETS = {
  states: [],
  FAIL_TO_PASS: [],
  PASS_TO_PASS: [],
  p2p_excluded_gold_fail: [],
  PR2_FAIL_TO_PASS: [],
  PR2_PASS_TO_PASS: [],
  ANTICIPATION_FAIL_TO_PASS: [],
  flaky_tests: [],
  anticipation_not_gradeable: [],
  gradeable: false,
};

/** A chain excluded before its states ran: no states, no sets. */
export function excludedChain(chain: ExtractedChain, runner: string): ValidatedChain {
  return { ...chain, ...EMPTY_SETS, runner, install_cmd: '', env_image_pr1: null, env_image_pr2: null, db_backend: DEFAULT_BACKEND, test_env: {}, attribution: null, cost: null };
}

/**
 * The backends a chain's states run on, each with the chain as it runs there (PR1's and PR2's test files that its
 * eras run on that backend: runnableTestFiles), or why none can, before any container: a state of no test is no
 * evidence and would read as an environment failure (Django's js_tests/*.test.js; gis_tests without PostGIS).
 */
export function chainOnBackends(chain: ExtractedChain, eras: ChainTestRules): { kind: 'runs'; on: Array<{ backend: string; chain: ExtractedChain }> } | { kind: 'excluded'; exclusion: Exclusion } {
  const backends = chainBackends(eras);
  const pr1 = planTestFiles(eras.pr1, chain.pr1_test_files, backends);
  const pr2 = planTestFiles(eras.pr2, chain.anticipation_test_files, backends);
  const none = (which: 'pr1' | 'pr2', plan: Extract<TestFilesPlan, { kind: 'none' }>) =>
    ({ kind: 'excluded', exclusion: { reason: `${which}_${plan.reason}`, detail: `${changeLabel(chain[which])} ${plan.detail}`, stage: 'validate' } }) as const;
  if (pr1.kind === 'none') return none('pr1', pr1);
  if (pr2.kind === 'none') return none('pr2', pr2);
  const on = pr1.on.flatMap((a) => {
    const b = pr2.on.find((x) => x.backend === a.backend);
    return b ? [{ backend: a.backend, chain: { ...chain, pr1_test_files: a.files, anticipation_test_files: b.files } }] : [];
  });
  if (on.length) return { kind: 'runs', on };
  const names = (p: typeof pr1.on): string => p.map((x) => x.backend).join(', ');
  return { kind: 'excluded', exclusion: { reason: 'pr2_tests_skipped', detail: `no backend runs both PRs' tests: PR1's run on ${names(pr1.on)}, PR2's on ${names(pr2.on)}`, stage: 'validate' } };
}

/** The backends a chain is tried on: its recipe's, else the default (sqlite, no service). */
export function chainBackends(eras: ChainTestRules): [string, ...string[]] {
  return ((eras.pr1.recipe ?? eras.pr2.recipe)?.backends ?? [DEFAULT_BACKEND]) as [string, ...string[]];
}

/** The era of a commit without the install candidates it outgrew (ChainWork's eraOf, checked on the era's test files). */
export type EraWithout = (commit: string, testFiles: readonly string[], without: readonly string[]) => Promise<EraEnv>;

export async function validateChain(
  chain: ExtractedChain,
  eras: ChainEras,
  deps: { cfg: Config['validate']; containers: ContainerDeps; eraWithout: EraWithout },
): Promise<ValidateChainResult> {
  const { cfg } = deps;
  const started = Date.now();
  let { pr1, pr2 } = eras;
  const recipe = pr1.recipe ?? pr2.recipe;
  const runner = (pr1.runner ?? pr2.runner)?.name ?? cfg.runner;
  const planned = chainOnBackends(chain, eras);
  if (planned.kind === 'excluded') return { chain: excludedChain({ ...chain, excluded: planned.exclusion }, runner), stateRuns: 0, fellBack: false };
  const chainOn = (backend: string): ExtractedChain => planned.on.find((b) => b.backend === backend)!.chain;
  const fileOf = fileOfFor(eras);
  let stateRuns = 0;
  // The install candidates each era's states outgrew (an installed package lacks what the code imports).
  const passedOver = { pr1: [] as string[], pr2: [] as string[] };
  /** Move the era of `state` to its next install candidate; both heads one commit: one era. */
  const nextEra = async (state: StateName, label: string): Promise<void> => {
    const which: 'pr1' | 'pr2' = state === 'S4' || state === 'S5' ? 'pr2' : 'pr1';
    const shared = chain.pr1_head === chain.pr2_head;
    for (const w of shared ? (['pr1', 'pr2'] as const) : [which]) passedOver[w].push(label);
    const next = which === 'pr1' || shared
      ? await deps.eraWithout(chain.pr1_head, chain.pr1_test_files, passedOver.pr1)
      : await deps.eraWithout(chain.pr2_head, chain.anticipation_test_files, passedOver.pr2);
    if (which === 'pr1' || shared) pr1 = next;
    if (which === 'pr2' || shared) pr2 = next;
  };
  // One run of the five states on one backend; one container per distinct environment.
  const validateOn = async (backend: string) => {
    const containers = new ChainContainers(deps.containers, backend, chain.instance_id);
    let execMs = 0;
    try {
      for (;;) {
        const ran = await runChainStates({
          chain: chainOn(backend),
          runs: cfg.runs,
          repeat: cfg.repeat,
          signal: deps.containers.signal,
          log: deps.containers.log,
          envFor: (state) => containers.envOf(state === 'S4' || state === 'S5' ? pr2 : pr1),
        });
        stateRuns += ran.cost.stateRuns;
        execMs += ran.cost.execMs;
        if (ran.kind === 'outgrown') {
          deps.containers.log.info(`"${ran.label}" cannot run ${ran.state} (${ran.detail}): the era's next install candidate`);
          await nextEra(ran.state, ran.label);
          continue;
        }
        // A recipe's ignored tests leave every state before the sets are computed.
        const kept = Object.fromEntries(Object.entries(ran.states).map(([name, st]) => [name, withoutIgnoredTests(st, recipe)])) as Record<StateName, StateResult>;
        return { states: kept, execMs, containerStarts: containers.opened, readySec: containers.readySec, exclusion: computeSets(kept, fileOf).exclusion };
      }
    } finally {
      await containers.close();
    }
  };
  const tried: Array<{ execMs: number; containerStarts: number; readySec: number; wallMs: number }> = [];
  const { backend, result, left, failedAfter } = await validateOnBackends(planned.on.map((b) => b.backend) as [string, ...string[]], async (b) => {
    const t0 = Date.now();
    const r = await validateOn(b);
    tried.push({ ...r, wallMs: Date.now() - t0 });
    return r;
  });
  if (left.length || failedAfter) {
    const secs = (t: (typeof tried)[number]): string => `${(t.wallMs / 1000).toFixed(1)} s, ${(t.execMs / 1000).toFixed(1)} s in tests${t.readySec ? `, service ready in ${t.readySec.toFixed(1)} s` : ''}`;
    const why = left.map((l, i) => `${l.reason} on ${l.backend} (${secs(tried[i]!)})`).join(', ');
    // The kept backend is the one tried after those left; a fallback whose environment failed came after it.
    const after = failedAfter ? `; ${failedAfter.reason} on ${failedAfter.backend} (${secs(tried[tried.length - 1]!)}), not kept` : '';
    // The kept result may itself be an exclusion (a skip whose fallback's environment failed): say which.
    const kept = result.exclusion ? `${result.exclusion.reason} kept` : 'validated';
    deps.containers.log.info(`${why ? `${why}; ` : ''}${kept} on ${backend} (${secs(tried[left.length]!)})${after}`);
  }
  const validated = finish(chainOn(backend), result.states, fileOf, {
    runner,
    install_cmd: recipe?.install.join(' && ') ?? '',
    env_image_pr1: pr1.kind === 'ready' ? pr1.image : null,
    env_image_pr2: pr2.kind === 'ready' ? pr2.image : null,
    db_backend: backend,
    test_env: pr1.kind === 'ready' ? pr1.recipe.env : {},
    cost: {
      execMs: tried.reduce((a, t) => a + t.execMs, 0),
      containerStarts: tried.reduce((a, t) => a + t.containerStarts, 0),
      wallMs: Date.now() - started,
    },
  });
  return { chain: validated, stateRuns, fellBack: left.length > 0 || failedAfter !== undefined };
}

function finish(
  chain: ExtractedChain,
  states: Record<StateName, StateResult>,
  fileOf: FileOf,
  extra: Pick<ValidatedChain, 'runner' | 'install_cmd' | 'env_image_pr1' | 'env_image_pr2' | 'db_backend' | 'test_env'> & { cost: ChainCost },
): ValidatedChain {
  const { exclusion, ...sets } = computeSets(states, fileOf);
  return { ...chain, ...sets, ...extra, attribution: null, states: STATE_NAMES.map((n) => states[n]), excluded: exclusion, gradeable: exclusion === null };
}
