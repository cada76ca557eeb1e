import type { StageContext, StageDef } from '../../core/foundation/stage.ts';
import { ExtractedChainSchema, type ExtractedChain } from '../../core/foundation/model/extracted.ts';
import { errorMessage } from '../../core/foundation/errors.ts';
import { applyCachePolicy, assertDockerReachable, connectDocker, ensureImage, removeStaleContainers } from '../../core/env/index.ts';
import { redisQueue } from '../../core/queue/index.ts';
import { sourceSettings } from '../../core/sources/registry.ts';
import { chainJobConfig, cloneSource, validateChainKind } from './chain-job.ts';
import { ChainWork, type ChainOutcome } from './chain-work.ts';
import { excludedChain } from './validate-chain.ts';
import { ValidatedChainSchema, type ValidatedChain } from '../../core/foundation/model/validated.ts';

export { validateChainHandler, validateChainKind, workerClonePath, type ChainJob, type ChainJobResult } from './chain-job.ts';
export { compareValidated, recheckChains, RECHECKED_SETS, type RecheckResult, type SetDifference } from './recheck.ts';

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
 * or excluded as `unattributed` when that commit belongs to no change. With `queue.url` set, each chain's
 * work (chain-work.ts) is a `validate.chain` job run by `foresight worker`s (chain-job.ts); the items and
 * checkpoints are written here, as a local run writes them.
 */
export const validateStage: StageDef<ExtractedChain, ValidatedChain> = {
  name: 'validate',
  entry: import.meta.url,
  // Attribution also reads the history as discover lists it, and re-extracts with extract's sources; without it the bisection's budget is unread.
  config: (cfg) => {
    const { bisectMaxProbes: _p, bisectGoodEndProbes: _g, ...unbisected } = cfg.validate;
    return cfg.validate.attribution === 'off' ? unbisected : { ...cfg.validate, discover: { branch: cfg.discover.branch, units: cfg.discover.units, tracker: cfg.discover.tracker, offline: cfg.discover.offline }, sources: cfg.sources };
  },
  input: ExtractedChainSchema,
  output: ValidatedChainSchema,
  async run(chains, ctx) {
    const totals: Totals = { stateRuns: 0, backendFallbacks: 0, imagesBuilt: new Set<string>() };
    const items = ctx.config.queue.url ? await runOnQueue(chains, ctx, ctx.config.queue.url, totals) : await runHere(chains, ctx, totals);
    return { items, stats: stageStats(items, totals) };
  },
};

/** The counts the stats add up over the chains validated (not the reused ones). */
interface Totals {
  stateRuns: number;
  backendFallbacks: number;
  imagesBuilt: Set<string>;
}

function counted(totals: Totals, o: ChainOutcome): ValidatedChain {
  totals.stateRuns += o.stateRuns;
  totals.backendFallbacks += o.backendFallbacks;
  for (const i of o.imagesBuilt) totals.imagesBuilt.add(i);
  return o.chain;
}

/** Every chain in this process, on this host's Docker. */
async function runHere(chains: ExtractedChain[], ctx: StageContext, totals: Totals): Promise<ValidatedChain[]> {
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
  // Containers without a service outlive their chain: the next chain of the era reuses a warm one.
  const work = await ChainWork.open({
    repo: ctx.repo, repoDir: ctx.repoDir, validate: cfg, discover: ctx.config.discover, sourceSettings: sourceSettings(ctx.config, ctx.secrets),
    images: imageCfg, docker, log: ctx.log, poolSize: cfg.jobs,
  });
  // Look-ahead: the env images of the chains after the ones running are built meanwhile, one at a
  // time, so a chain seldom waits for its image (an era's build is shared: EnvImages, EnvChoices).
  let lookAhead: Promise<void> | null = null;
  const buildAhead = (after: ExtractedChain): void => {
    if (lookAhead || cfg.image) return;
    const rest = todo.slice(todo.indexOf(after) + 1);
    lookAhead = (async () => {
      for (const c of rest) {
        if (ctx.signal.aborted) return;
        // A chain whose tests run nowhere here needs no image.
        if (await work.runsNothing(c)) continue;
        await work.eraOf(c.pr1_head, c.pr1_test_files, ctx.signal);
        if (c.pr2_head !== c.pr1_head) await work.eraOf(c.pr2_head, c.anticipation_test_files, ctx.signal);
      }
    })().catch((err: unknown) => ctx.log.debug(`image look-ahead stopped: ${errorMessage(err)}`));
  };
  let items: ValidatedChain[];
  try {
    items = await ctx.forEach(chains, { id: (c) => c.instance_id, label: 'validating chains', concurrency: cfg.jobs }, async (chain): Promise<ValidatedChain> => {
      if (chain.excluded) return excludedChain(chain, cfg.runner);
      // The chain's own eras first, then the look-ahead starts behind them.
      return counted(totals, await work.run(chain, ctx.signal, { onEras: () => buildAhead(chain) }));
    });
  } finally {
    await work.close();
    await lookAhead;
  }
  // The look-ahead's builds count too.
  for (const i of work.builtImages) totals.imagesBuilt.add(i);
  if (!cfg.image) await applyCachePolicy(imageCfg.cache, { used: [...work.usedImages], keep: imageCfg.envKeep, docker, baseAlias: imageCfg.baseAlias });
  return items;
}

/**
 * Every chain as a `validate.chain` job, its id the chain's checkpoint key: a rerun finds the finished
 * ones, nothing is enqueued twice. Workers pull, so every chain is in flight at once; the progress line
 * counts the results as they come back from any worker.
 */
async function runOnQueue(chains: ExtractedChain[], ctx: StageContext, url: string, totals: Totals): Promise<ValidatedChain[]> {
  const cfg = ctx.config.validate;
  const queue = await redisQueue({ url, log: ctx.log });
  const config = chainJobConfig(ctx.config);
  const source = cloneSource(ctx.config, ctx.repo);
  // A stopped run stops waiting (the jobs stay queued: the next run finds them).
  const aborted = new Promise<never>((_, reject) => {
    const stop = (): void => reject(ctx.signal.reason instanceof Error ? ctx.signal.reason : new Error('stopped'));
    if (ctx.signal.aborted) stop();
    else ctx.signal.addEventListener('abort', stop, { once: true });
  });
  aborted.catch(() => undefined);
  ctx.log.info(`validating ${chains.filter((c) => !c.excluded).length} chain(s) on the workers of ${url}`);
  try {
    return await ctx.forEach(chains, { id: (c) => c.instance_id, label: 'validating chains', concurrency: queue.capacity }, async (chain, key): Promise<ValidatedChain> => {
      if (chain.excluded) return excludedChain(chain, cfg.runner);
      const job = queue.submit(validateChainKind, key, { repo: ctx.repo.name, source, chain, config });
      return counted(totals, await Promise.race([job, aborted]));
    });
  } finally {
    await queue.close();
  }
}

function stageStats(items: ValidatedChain[], totals: Totals): Record<string, number> {
  const counts: Record<string, number> = {
    chains: items.length,
    gradeable: items.filter((i) => i.gradeable).length,
    images_built: totals.imagesBuilt.size,
    state_runs: totals.stateRuns,
    container_starts: items.reduce((a, i) => a + (i.cost?.containerStarts ?? 0), 0),
    exec_ms: items.reduce((a, i) => a + (i.cost?.execMs ?? 0), 0),
    chain_wall_ms: items.reduce((a, i) => a + (i.cost?.wallMs ?? 0), 0),
    backend_fallbacks: totals.backendFallbacks,
    // From the items, so a resumed run counts the chains it reused too.
    attribution_bisected: items.filter((i) => i.attribution).length,
    attribution_confirmed: items.filter((i) => i.attribution?.method?.startsWith('execution') && !i.attribution.moved_from).length,
    attribution_moved: items.filter((i) => i.attribution?.moved_from).length,
    attribution_unattributed: items.filter((i) => i.attribution?.decision === 'unattributed').length,
    attribution_errors: items.filter((i) => i.attribution?.decision === 'error').length,
  };
  for (const i of items) if (i.cost) counts[`backend_${i.db_backend}`] = (counts[`backend_${i.db_backend}`] ?? 0) + 1;
  for (const i of items) if (i.excluded) counts[`excluded_${i.excluded.reason}`] = (counts[`excluded_${i.excluded.reason}`] ?? 0) + 1;
  return counts;
}
// szz-eval --execute (pipeline/szz-execute.ts): a fix's tests at its parent and at the fix, then their bisection.
export { ChainWork, type ChainWorkOptions } from './chain-work.ts';
export { executeFix, FIX_DROP_REASONS, type FixCost, type FixDropReason, type FixExecution, type FixInput } from './fix-probe.ts';
