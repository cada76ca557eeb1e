import type { StageDef } from '../../core/stage.ts';
import { absoluteGitDir } from '../../core/git.ts';
import { ExtractedChainSchema, type ExtractedChain } from '../../core/model/extracted.ts';
import { computeSets, type FileOf } from './compute-sets.ts';
import { applyCachePolicy, assertDockerReachable, connectDocker, EnvImages, ensureImage, isIgnoredTest, openChainEnv, removeStaleContainers, type ChainEnv, type Recipe } from '../../core/env/index.ts';
import { eraEnvironment, type EnvironmentOptions } from './environments.ts';
import { runChainStates, type ChainCost } from './run-chain.ts';
import { STATE_NAMES, ValidatedChainSchema, type StateName, type StateResult, type ValidatedChain } from '../../core/model/validated.ts';

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

/**
 * validate: run each chain's tests in Docker (no network, limited, non-root) at the five states, each
 * state repeated, in the environment of its era (the repository's recipe and dependencies at PR1's
 * and PR2's heads: one container per distinct environment, usually one per chain); compute
 * FAIL_TO_PASS, PASS_TO_PASS, ANTICIPATION_FAIL_TO_PASS and the PR2 sets. States are repeated as
 * `validate.repeat` says (run-chain.ts): by default only the tests that can still be in a set.
 */
export const validateStage: StageDef<ExtractedChain, ValidatedChain> = {
  name: 'validate',
  entry: import.meta.url,
  config: (cfg) => cfg.validate,
  input: ExtractedChainSchema,
  output: ValidatedChainSchema,
  async run(chains, ctx) {
    const cfg = ctx.config.validate;
    const { images: imageCfg } = ctx.config;
    const docker = connectDocker(ctx.config.docker.host);
    const todo = chains.filter((c) => !c.excluded);
    if (todo.length) {
      await assertDockerReachable(docker);
      const stale = await removeStaleContainers(docker);
      if (stale.length) ctx.log.info(`removed ${stale.length} container(s) left by a killed run`);
      if (cfg.image) await ensureImage(cfg.image, { docker, log: ctx.log, baseAlias: imageCfg.baseAlias, lockDir: imageCfg.lockDir });
    }
    const gitDir = await absoluteGitDir(ctx.repo.clone);
    // This run's images: builds shared by the chains of one era, failures remembered until the run ends.
    const images = new EnvImages({ docker, baseAlias: imageCfg.baseAlias, lockDir: imageCfg.lockDir, log: ctx.log });
    const envOpts: EnvironmentOptions = {
      repo: ctx.repo.name, clone: ctx.repo.clone, gitDir, repoDir: ctx.repoDir, log: ctx.log, images, image: cfg.image, runner: cfg.runner, signal: ctx.signal,
    };
    const usedImages = new Set<string>();
    let imagesBuilt = 0;
    let stateRuns = 0;
    const items = await ctx.forEach(
      chains,
      { id: (c) => c.instance_id, label: 'validating chains', concurrency: cfg.jobs },
      async (chain): Promise<ValidatedChain> => {
        if (chain.excluded) return { ...chain, ...EMPTY_SETS, runner: cfg.runner, install_cmd: '', env_image_pr1: null, env_image_pr2: null, cost: null };
        const started = Date.now();
        // Each era's environment comes from its PR's head: its recipe and dependency files.
        const pr1 = await eraEnvironment(envOpts, chain.pr1_head);
        const pr2 = chain.pr2_head === chain.pr1_head ? pr1 : await eraEnvironment(envOpts, chain.pr2_head);
        for (const e of [pr1, pr2]) if (e.kind === 'ready') usedImages.add(e.image);
        imagesBuilt += [pr1, pr2 === pr1 ? null : pr2].filter((e) => e?.kind === 'ready' && e.built).length;
        // One container per distinct environment: one per chain when both eras share an image.
        const containers = new Map<string, ChainEnv>();
        try {
          const { states, cost } = await runChainStates({
            chain,
            runs: cfg.runs,
            repeat: cfg.repeat,
            signal: ctx.signal,
            envFor: async (state) => {
              const era = state === 'S4' || state === 'S5' ? pr2 : pr1;
              if (era.kind === 'broken') return { kind: 'broken', problem: era.problem };
              let env = containers.get(era.image);
              if (!env) {
                env = await openChainEnv({
                  gitDir,
                  image: era.image,
                  runner: era.runner,
                  env: era.recipe.env,
                  memoryBytes: cfg.memoryMiB * 1024 * 1024,
                  pidsLimit: cfg.pidsLimit,
                  nanoCpus: Math.round(cfg.cpus * 1e9),
                  runTimeoutSec: cfg.timeoutSec,
                  docker,
                  signal: ctx.signal,
                });
                containers.set(era.image, env);
              }
              return { kind: 'ready', env, runner: era.runner };
            },
          });
          stateRuns += cost.stateRuns;
          const recipe = pr1.recipe ?? pr2.recipe;
          const runner = pr1.runner ?? pr2.runner;
          const fileOf: FileOf = (id, files) => runner?.testFileOf?.(id, files) ?? id.split('::')[0] ?? null;
          return finish(chain, dropIgnored(states, recipe), fileOf, {
            runner: runner?.name ?? cfg.runner,
            install_cmd: recipe?.install.join(' && ') ?? '',
            env_image_pr1: pr1.kind === 'ready' ? pr1.image : null,
            env_image_pr2: pr2.kind === 'ready' ? pr2.image : null,
            cost: { execMs: cost.execMs, containerStarts: containers.size, wallMs: Date.now() - started },
          });
        } finally {
          for (const env of containers.values()) await env.close().catch(() => undefined);
        }
      },
    );
    if (!cfg.image) await applyCachePolicy(imageCfg.cache, { used: [...usedImages], keep: imageCfg.envKeep, docker, baseAlias: imageCfg.baseAlias });
    const counts: Record<string, number> = {
      chains: items.length,
      gradeable: items.filter((i) => i.gradeable).length,
      images_built: imagesBuilt,
      state_runs: stateRuns,
      container_starts: items.reduce((a, i) => a + (i.cost?.containerStarts ?? 0), 0),
      exec_ms: items.reduce((a, i) => a + (i.cost?.execMs ?? 0), 0),
      chain_wall_ms: items.reduce((a, i) => a + (i.cost?.wallMs ?? 0), 0),
    };
    for (const i of items) if (i.excluded) counts[`excluded_${i.excluded.reason}`] = (counts[`excluded_${i.excluded.reason}`] ?? 0) + 1;
    return { items, stats: counts };
  },
};

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
  extra: Pick<ValidatedChain, 'runner' | 'install_cmd' | 'env_image_pr1' | 'env_image_pr2'> & { cost: ChainCost },
): ValidatedChain {
  const { exclusion, ...sets } = computeSets(states, fileOf);
  return { ...chain, ...sets, ...extra, states: STATE_NAMES.map((n) => states[n]), excluded: exclusion, gradeable: exclusion === null };
}
