import type { StageDef } from '../../core/stage.ts';
import { absoluteGitDir } from '../../core/git.ts';
import { ExtractedChainSchema, type ExtractedChain } from '../../core/model/extracted.ts';
import { computeSets, type FileOf } from './compute-sets.ts';
import { join } from 'node:path';
import { errorMessage, ForesightError } from '../../core/errors.ts';
import { applyCachePolicy, assertDockerReachable, backendEnv, ChainEnvPool, connectDocker, DEFAULT_BACKEND, EnvImages, ensureImage, isIgnoredTest, openChainEnv, removeStaleContainers, startService, type ChainEnv, type Recipe, type ServiceSession } from '../../core/env/index.ts';
import { validateOnBackends } from './backends.ts';
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
 * `validate.repeat` says (run-chain.ts): by default only the tests that can still be in a set. A recipe's
 * database `backends` are tried in order (backends.ts): a chain whose tests were skipped on one is
 * validated again on the next, its database service running in a sidecar on an internal network.
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
      limits: { memoryBytes: cfg.memoryMiB * 1024 * 1024, pidsLimit: cfg.pidsLimit, nanoCpus: Math.round(cfg.cpus * 1e9), runTimeoutSec: cfg.timeoutSec },
    };
    const usedImages = new Set<string>();
    // Images built by this run, by the chains' own lookups or by the look-ahead below.
    const builtImages = new Set<string>();
    // A detected recipe is checked on the PR's own test files at that PR's head.
    const eraOf = async (commit: string, testFiles: readonly string[]) => {
      const era = await eraEnvironment(envOpts, commit, testFiles);
      if (era.kind === 'ready' && era.built) builtImages.add(era.image);
      return era;
    };
    // Look-ahead: the env images of the chains after the ones running are built meanwhile, one at a
    // time, so a chain seldom waits for its image (an era's build is shared: EnvImages, EnvChoices).
    let lookAhead: Promise<void> | null = null;
    const buildAhead = (after: ExtractedChain): void => {
      if (lookAhead || cfg.image) return;
      const rest = todo.slice(todo.indexOf(after) + 1);
      lookAhead = (async () => {
        for (const c of rest) {
          if (ctx.signal.aborted) return;
          await eraOf(c.pr1_head, c.pr1_test_files);
          if (c.pr2_head !== c.pr1_head) await eraOf(c.pr2_head, c.anticipation_test_files);
        }
      })().catch((err: unknown) => ctx.log.debug(`image look-ahead stopped: ${errorMessage(err)}`));
    };
    let stateRuns = 0;
    let backendFallbacks = 0;
    // Containers without a service outlive their chain: the next chain of the era reuses a warm one.
    const pool = new ChainEnvPool(docker, cfg.jobs);
    let items: ValidatedChain[];
    try {
      items = await ctx.forEach(
        chains,
        { id: (c) => c.instance_id, label: 'validating chains', concurrency: cfg.jobs },
        async (chain): Promise<ValidatedChain> => {
          if (chain.excluded) return { ...chain, ...EMPTY_SETS, runner: cfg.runner, install_cmd: '', env_image_pr1: null, env_image_pr2: null, db_backend: DEFAULT_BACKEND, test_env: {}, cost: null };
          const started = Date.now();
          // Each era's environment comes from its PR's head: its recipe and dependency files.
          const pr1 = await eraOf(chain.pr1_head, chain.pr1_test_files);
          const pr2 = chain.pr2_head === chain.pr1_head ? pr1 : await eraOf(chain.pr2_head, chain.anticipation_test_files);
          for (const e of [pr1, pr2]) if (e.kind === 'ready') usedImages.add(e.image);
          buildAhead(chain);
          const recipe = pr1.recipe ?? pr2.recipe;
          const runner = pr1.runner ?? pr2.runner;
          const fileOf: FileOf = (id, files) => runner?.testFileOf?.(id, files) ?? id.split('::')[0] ?? null;
          // One run of the five states on one database backend (a sidecar for a service, none for sqlite).
          const validateOn = async (backend: string) => {
            // One container per distinct environment: one per chain when both eras share an image.
            const containers = new Map<string, { env: ChainEnv; poolKey: string | null }>();
            let opened = 0;
            let service: ServiceSession | null = null;
            let serviceProblem: string | null = null;
            try {
              const { states, cost } = await runChainStates({
                chain,
                runs: cfg.runs,
                repeat: cfg.repeat,
                signal: ctx.signal,
                envFor: async (state) => {
                  const era = state === 'S4' || state === 'S5' ? pr2 : pr1;
                  if (era.kind === 'broken') return { kind: 'broken', problem: era.problem };
                  // Started with the first state that runs, shared by both eras' containers.
                  if (!service && serviceProblem === null) {
                    try {
                      service = await startService({ backend, docker, baseAlias: imageCfg.baseAlias, lockDir: imageCfg.lockDir, log: ctx.log, logDir: join(ctx.repoDir, 'validate', 'env-logs'), signal: ctx.signal });
                      if (service.network) ctx.log.debug(`${chain.instance_id}: ${backend} ready in ${service.readySec.toFixed(1)} s`);
                    } catch (err) {
                      if (ctx.signal.aborted || !(err instanceof ForesightError)) throw err;
                      // The service is our environment: its failure is never evidence about the chain.
                      serviceProblem = `the ${backend} database service did not start: ${errorMessage(err)}`;
                    }
                  }
                  if (!service) return { kind: 'broken', problem: serviceProblem ?? `the ${backend} database service did not start` };
                  let held = containers.get(era.image);
                  if (!held) {
                    const svc: ServiceSession = service;
                    const env = backendEnv(era.recipe.env, svc);
                    const open = () =>
                      openChainEnv({
                        gitDir,
                        image: era.image,
                        runner: era.runner,
                        env,
                        network: svc.network,
                        memoryBytes: cfg.memoryMiB * 1024 * 1024,
                        pidsLimit: cfg.pidsLimit,
                        nanoCpus: Math.round(cfg.cpus * 1e9),
                        runTimeoutSec: cfg.timeoutSec,
                        docker,
                        signal: ctx.signal,
                      });
                    // A container on a chain's service network dies with the chain; the others are pooled by image and environment.
                    const poolKey = svc.network ? null : JSON.stringify([era.image, era.runner.name, env]);
                    if (poolKey === null) {
                      held = { env: await open(), poolKey };
                      opened++;
                    } else {
                      const got = await pool.acquire(poolKey, open);
                      held = { env: got.env, poolKey };
                      if (!got.reused) opened++;
                    }
                    containers.set(era.image, held);
                  }
                  return { kind: 'ready', env: held.env, runner: era.runner };
                },
              });
              stateRuns += cost.stateRuns;
              const kept = dropIgnored(states, recipe);
              const readySec = (service as ServiceSession | null)?.readySec ?? 0;
              return { states: kept, execMs: cost.execMs, containerStarts: opened, readySec, exclusion: computeSets(kept, fileOf).exclusion };
            } finally {
              for (const { env, poolKey } of containers.values()) {
                if (poolKey === null || ctx.signal.aborted) await env.close().catch(() => undefined);
                else await pool.release(poolKey, env);
              }
              await (service as ServiceSession | null)?.close().catch(() => undefined);
            }
          };
          const recipeBackends = recipe?.backends ?? [DEFAULT_BACKEND];
          const tried: Array<{ execMs: number; containerStarts: number; readySec: number; wallMs: number }> = [];
          const { backend, result, left } = await validateOnBackends(recipeBackends as [string, ...string[]], async (b) => {
            const t0 = Date.now();
            const r = await validateOn(b);
            tried.push({ ...r, wallMs: Date.now() - t0 });
            return r;
          });
          if (left.length) {
            backendFallbacks++;
            const secs = (t: (typeof tried)[number]): string => `${(t.wallMs / 1000).toFixed(1)} s, ${(t.execMs / 1000).toFixed(1)} s in tests${t.readySec ? `, service ready in ${t.readySec.toFixed(1)} s` : ''}`;
            const why = left.map((l, i) => `${l.reason} on ${l.backend} (${secs(tried[i]!)})`).join(', ');
            ctx.log.info(`${chain.instance_id}: ${why}; validated on ${backend} (${secs(tried[tried.length - 1]!)})`);
          }
          return finish(chain, result.states, fileOf, {
            runner: runner?.name ?? cfg.runner,
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
        },
      );
    } finally {
      await pool.close();
      await lookAhead;
    }
    if (!cfg.image) await applyCachePolicy(imageCfg.cache, { used: [...usedImages], keep: imageCfg.envKeep, docker, baseAlias: imageCfg.baseAlias });
    const counts: Record<string, number> = {
      chains: items.length,
      gradeable: items.filter((i) => i.gradeable).length,
      images_built: builtImages.size,
      state_runs: stateRuns,
      container_starts: items.reduce((a, i) => a + (i.cost?.containerStarts ?? 0), 0),
      exec_ms: items.reduce((a, i) => a + (i.cost?.execMs ?? 0), 0),
      chain_wall_ms: items.reduce((a, i) => a + (i.cost?.wallMs ?? 0), 0),
      backend_fallbacks: backendFallbacks,
    };
    for (const i of items) if (i.cost) counts[`backend_${i.db_backend}`] = (counts[`backend_${i.db_backend}`] ?? 0) + 1;
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
  extra: Pick<ValidatedChain, 'runner' | 'install_cmd' | 'env_image_pr1' | 'env_image_pr2' | 'db_backend' | 'test_env'> & { cost: ChainCost },
): ValidatedChain {
  const { exclusion, ...sets } = computeSets(states, fileOf);
  return { ...chain, ...sets, ...extra, states: STATE_NAMES.map((n) => states[n]), excluded: exclusion, gradeable: exclusion === null };
}
