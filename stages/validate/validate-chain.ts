/**
 * One chain's validation: its five states run on each of the recipe's database backends in turn until
 * one can show the fix (backends.ts), the states' runs folded into the sets (compute-sets.ts).
 */
import { DEFAULT_BACKEND, isIgnoredTest, runnableTestFiles, type EraEnv, type Recipe } from '../../core/env/index.ts';
import type { Config } from '../../core/config.ts';
import { changeLabel, type Exclusion, type PullRequest } from '../../core/model/change.ts';
import type { ExtractedChain } from '../../core/model/extracted.ts';
import { STATE_NAMES, type StateName, type StateResult, type ValidatedChain } from '../../core/model/validated.ts';
import { validateOnBackends } from './backends.ts';
import { ChainContainers, type ContainerDeps } from './chain-containers.ts';
import { computeSets, type FileOf } from './compute-sets.ts';
import { runChainStates, type ChainCost } from './run-chain.ts';

/** A chain's two eras: PR1's head (S1–S3) and PR2's head (S4, S5); one object when both heads are one commit. */
export interface ChainEras {
  pr1: EraEnv;
  pr2: EraEnv;
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
  return (id, files) => runner?.testFileOf?.(id, files) ?? id.split('::')[0] ?? null;
}

/**
 * The chain with only the test files its eras run (PR1's in PR1's era, PR2's in PR2's: runnableTestFiles); a PR
 * with none left is excluded as one that touched no test file, before any container: its states would run no
 * test, which is no evidence and would read as an environment failure (Django's js_tests/*.test.js).
 */
export function runnableChain(chain: ExtractedChain, eras: ChainEras): ExtractedChain {
  const pr1 = runnableTestFiles(eras.pr1, chain.pr1_test_files);
  const pr2 = runnableTestFiles(eras.pr2, chain.anticipation_test_files);
  const none = (reason: 'pr1_no_tests' | 'pr2_no_tests', pr: PullRequest, era: EraEnv, files: readonly string[]): Exclusion => {
    const globs = era.recipe?.testFiles;
    const by = `the ${era.runner?.name ?? 'configured'} runner runs${globs ? ` among its recipe's testFiles (${globs.join(', ')})` : ''}`;
    return { reason, detail: `${changeLabel(pr)} touched no test file ${by}: ${files.join(', ')}`, stage: 'validate' };
  };
  const excluded =
    chain.excluded ??
    (!pr1.length ? none('pr1_no_tests', chain.pr1, eras.pr1, chain.pr1_test_files) : !pr2.length ? none('pr2_no_tests', chain.pr2, eras.pr2, chain.anticipation_test_files) : null);
  return { ...chain, pr1_test_files: pr1, anticipation_test_files: pr2, excluded };
}

/** The backends a chain is tried on: its recipe's, else the default (sqlite, no service). */
export function chainBackends(eras: ChainEras): [string, ...string[]] {
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
          chain,
          runs: cfg.runs,
          repeat: cfg.repeat,
          signal: deps.containers.signal,
          envFor: async (state) => {
            const era = state === 'S4' || state === 'S5' ? pr2 : pr1;
            return era.kind === 'broken' ? { kind: 'broken', problem: era.problem } : containers.envOf(era);
          },
        });
        stateRuns += ran.cost.stateRuns;
        execMs += ran.cost.execMs;
        if (ran.kind === 'outgrown') {
          deps.containers.log.info(`${chain.instance_id}: "${ran.label}" cannot run ${ran.state} (${ran.detail}): the era's next install candidate`);
          await nextEra(ran.state, ran.label);
          continue;
        }
        const kept = dropIgnored(ran.states, recipe);
        return { states: kept, execMs, containerStarts: containers.opened, readySec: containers.readySec, exclusion: computeSets(kept, fileOf).exclusion };
      }
    } finally {
      await containers.close();
    }
  };
  const tried: Array<{ execMs: number; containerStarts: number; readySec: number; wallMs: number }> = [];
  const { backend, result, left, failedAfter } = await validateOnBackends(chainBackends(eras), async (b) => {
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
    deps.containers.log.info(`${chain.instance_id}: ${why ? `${why}; ` : ''}${kept} on ${backend} (${secs(tried[left.length]!)})${after}`);
  }
  const validated = finish(chain, result.states, fileOf, {
    runner: (pr1.runner ?? pr2.runner)?.name ?? cfg.runner,
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

/** A recipe's ignored tests are never graded: they leave every state before the sets are computed. */
function dropIgnored(states: Record<StateName, StateResult>, recipe: Recipe | null): Record<StateName, StateResult> {
  if (!recipe?.ignoreTests.length) return states;
  const out = {} as Record<StateName, StateResult>;
  for (const [name, st] of Object.entries(states) as Array<[StateName, StateResult]>) {
    out[name] = { ...st, tests: Object.fromEntries(Object.entries(st.tests).filter(([id]) => !isIgnoredTest(recipe, id))) };
  }
  return out;
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
