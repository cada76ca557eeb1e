import type { StageDef } from '../../core/stage.ts';
import { absoluteGitDir } from '../../core/git.ts';
import { ExtractedChainSchema, type ExtractedChain } from '../../core/model/extracted.ts';
import { errorMessage } from '../../core/errors.ts';
import { applyCachePolicy, assertDockerReachable, ChainEnvPool, connectDocker, DEFAULT_BACKEND, EnvImages, ensureImage, eraEnvironment, removeStaleContainers, type EnvironmentOptions } from '../../core/env/index.ts';
import { contextCollector, type ContextCollector } from '../../core/extract/context.ts';
import { extractChain, repoShortName } from '../../core/extract/chain.ts';
import { listChanges, type ListedChanges } from '../../core/history/changes.ts';
import type { PullRequest } from '../../core/model/change.ts';
import { sourceSettings } from '../../core/sources/registry.ts';
import { attributeChain, canAttribute, type AttributeDeps } from './attribute.ts';
import type { ContainerDeps } from './chain-containers.ts';
import { validateChain, type ChainEras } from './validate-chain.ts';
import { ValidatedChainSchema, type ValidatedChain } from '../../core/model/validated.ts';

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
 * Then, unless `validate.attribution` is off, a chain with PR2 fail->pass tests has its PR1 confirmed by
 * execution (attribute.ts): moved to the change the bisection names (re-extracted, validated again),
 * or excluded as `unattributed` when that commit belongs to no change.
 */
export const validateStage: StageDef<ExtractedChain, ValidatedChain> = {
  name: 'validate',
  entry: import.meta.url,
  // Attribution also reads the history as discover lists it, and re-extracts with extract's sources.
  config: (cfg) => (cfg.validate.attribution === 'off' ? cfg.validate : { ...cfg.validate, discover: { branch: cfg.discover.branch, units: cfg.discover.units, tracker: cfg.discover.tracker, offline: cfg.discover.offline }, sources: cfg.sources }),
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
      repo: ctx.repo.name, clone: ctx.repo.clone, gitDir, repoDir: ctx.repoDir, log: ctx.log, images, image: cfg.image, runner: cfg.runner, signal: ctx.signal, recipes: cfg.recipes,
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
    const containers: ContainerDeps = {
      docker, pool, gitDir, baseAlias: imageCfg.baseAlias, lockDir: imageCfg.lockDir, repoDir: ctx.repoDir, log: ctx.log, signal: ctx.signal,
      limits: { memoryBytes: cfg.memoryMiB * 1024 * 1024, pidsLimit: cfg.pidsLimit, nanoCpus: Math.round(cfg.cpus * 1e9), runTimeoutSec: cfg.timeoutSec },
    };
    // Each era's environment comes from its PR's head: its recipe and dependency files.
    const chainEras = async (chain: ExtractedChain): Promise<ChainEras> => {
      const pr1 = await eraOf(chain.pr1_head, chain.pr1_test_files);
      const pr2 = chain.pr2_head === chain.pr1_head ? pr1 : await eraOf(chain.pr2_head, chain.anticipation_test_files);
      for (const e of [pr1, pr2]) if (e.kind === 'ready') usedImages.add(e.image);
      return { pr1, pr2 };
    };
    const validateOne = async (chain: ExtractedChain, eras: ChainEras): Promise<ValidatedChain> => {
      const r = await validateChain(chain, eras, { cfg, containers });
      stateRuns += r.stateRuns;
      if (r.fellBack) backendFallbacks++;
      return r.chain;
    };
    // Attribution reads the history as szz did, and re-extracts a chain moved to another PR1 as extract does.
    let history: Promise<ListedChanges> | null = null;
    const attributeDeps: AttributeDeps = {
      history: () => (history ??= listChanges(ctx.repo.clone, ctx.config.discover)),
      eraOf: async (commit, testFiles) => {
        const era = await eraOf(commit, testFiles);
        if (era.kind === 'ready') usedImages.add(era.image);
        return era;
      },
      containers,
    };
    let discussion: ContextCollector | null = null;
    const reextract = async (chain: ExtractedChain, pr1: PullRequest): Promise<ExtractedChain> => {
      discussion ??= contextCollector({
        repo: ctx.repo.name, clone: ctx.repo.clone, repoDir: ctx.repoDir, tracker: chain.tracker,
        offline: ctx.config.discover.offline, log: ctx.log, settings: sourceSettings(ctx.config, ctx.secrets),
      });
      return (await extractChain({ ...chain, pr1, excluded: null }, { clone: ctx.repo.clone, repoName: repoShortName(ctx.repo.name), discussion })).chain;
    };
    let items: ValidatedChain[];
    try {
      items = await ctx.forEach(
        chains,
        { id: (c) => c.instance_id, label: 'validating chains', concurrency: cfg.jobs },
        async (chain): Promise<ValidatedChain> => {
          if (chain.excluded) return excludedChain(chain, cfg.runner);
          const eras = await chainEras(chain);
          buildAhead(chain);
          const validated = await validateOne(chain, eras);
          if (cfg.attribution === 'off' || !canAttribute(validated)) return validated;
          const att = await attributeChain(validated, attributeDeps);
          if (att.kind === 'kept') return { ...validated, attribution: att.record };
          if (att.kind === 'unattributed') {
            return { ...validated, attribution: att.record, gradeable: false, excluded: { reason: 'unattributed', detail: att.detail, stage: 'validate' } };
          }
          // Execution names another PR1: the chain is extracted and its states validated again for it.
          ctx.log.info(`${chain.instance_id}: the tests stop passing in ${att.pr1.id}, not ${chain.pr1.id} (${att.record.disagreements.map((d) => d.source).join(', ') || 'blame'}): PR1 moved`);
          const moved = await reextract(chain, att.pr1);
          if (moved.excluded) return { ...excludedChain(moved, cfg.runner), attribution: att.record, cost: validated.cost };
          const again = await validateOne(moved, await chainEras(moved));
          // The cost covers both validations (the bisection's own is in the record).
          const cost = again.cost && validated.cost && { containerStarts: validated.cost.containerStarts + again.cost.containerStarts, execMs: validated.cost.execMs + again.cost.execMs, wallMs: validated.cost.wallMs + again.cost.wallMs };
          return { ...again, attribution: att.record, cost };
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
      // From the items, so a resumed run counts the chains it reused too.
      attribution_bisected: items.filter((i) => i.attribution).length,
      attribution_confirmed: items.filter((i) => i.attribution?.method?.startsWith('execution') && !i.attribution.moved_from).length,
      attribution_moved: items.filter((i) => i.attribution?.moved_from).length,
      attribution_unattributed: items.filter((i) => i.attribution?.decision === 'unattributed').length,
      attribution_errors: items.filter((i) => i.attribution?.decision === 'error').length,
    };
    for (const i of items) if (i.cost) counts[`backend_${i.db_backend}`] = (counts[`backend_${i.db_backend}`] ?? 0) + 1;
    for (const i of items) if (i.excluded) counts[`excluded_${i.excluded.reason}`] = (counts[`excluded_${i.excluded.reason}`] ?? 0) + 1;
    return { items, stats: counts };
  },
};

/** A chain excluded before validation: no states, no sets. */
function excludedChain(chain: ExtractedChain, runner: string): ValidatedChain {
  return { ...chain, ...EMPTY_SETS, runner, install_cmd: '', env_image_pr1: null, env_image_pr2: null, db_backend: DEFAULT_BACKEND, test_env: {}, attribution: null, cost: null };
}
