import { dirname } from 'node:path';
import type { StageDef } from '../../core/foundation/stage.ts';
import { ExtractedChainSchema, type ExtractedChain } from '../../core/foundation/model/extracted.ts';
import { handlerRegistry, openWorkQueue } from '../../core/queue/index.ts';
import { LocalChains } from './local-handler.ts';
import { chainJobConfig, cloneSource, validateChainKind } from './queue-job.ts';
import type { ChainOutcome } from './validate-and-attribute.ts';
import { excludedChain } from './validate-states.ts';
import { ValidatedChainSchema, type ValidatedChain } from '../../core/foundation/model/validated.ts';

export { validateChainKind, type ChainJob, type ChainJobResult } from './queue-job.ts';
export { validateChainHandler, workerClonePath } from './worker-handler.ts';
export { compareValidated, recheckChains, RECHECKED_SETS, type RecheckResult, type SetDifference } from './recheck.ts';
export { chainOfRow, recheckRows, type PublishedRow, type RowRecheck, type RowRecheckOptions } from './recheck-rows.ts';

/**
 * validate: run each chain's tests in Docker (no network, limited, non-root) at the five states, each
 * state repeated, in the environment of its era (the repository's recipe and dependencies at PR1's
 * and PR2's heads: one container per distinct environment, usually one per chain); compute
 * FAIL_TO_PASS, PASS_TO_PASS, ANTICIPATION_FAIL_TO_PASS and the PR2 sets. States are repeated as
 * `validate.repeat` says (run-states.ts): by default only the tests that can still be in a set. A recipe's
 * database `backends` are tried in order (backends.ts): a chain whose tests were skipped on one is
 * validated again on the next, its database service running in a sidecar on an internal network.
 * Then, unless `validate.attribution` is off, a chain with PR2 fail->pass tests has its PR1 confirmed by
 * execution (attribute.ts): moved to the change the bisection names (re-extracted, validated again),
 * or excluded as `unattributed` when that commit belongs to no change. Each chain that is not excluded is
 * a `validate.chain` job (queue-job.ts) on the work queue: run in this process (local-handler.ts), or with
 * `queue.url` set by `foresight worker`s (worker-handler.ts); the items and checkpoints are written here either way.
 */
export const validateStage: StageDef<ExtractedChain, ValidatedChain> = {
  name: 'validate',
  entry: import.meta.url,
  // Attribution also reads the history as discover lists it, and re-extracts with extract's sources; without it the bisection's budget is unread.
  // `jobs` says how many chains run at once, never what a chain gives: a rerun with another --jobs reuses the results.
  config: (cfg) => {
    const { jobs: _jobs, ...validate } = cfg.validate;
    const { bisectMaxProbes: _p, bisectGoodEndProbes: _g, ...unbisected } = validate;
    return cfg.validate.attribution === 'off' ? unbisected : { ...validate, discover: { branch: cfg.discover.branch, units: cfg.discover.units, tracker: cfg.discover.tracker, offline: cfg.discover.offline }, sources: cfg.sources };
  },
  input: ExtractedChainSchema,
  output: ValidatedChainSchema,
  /**
   * Every chain as a `validate.chain` job, its id the chain's checkpoint key: a rerun finds the finished ones,
   * nothing runs twice. The queue says how many are worth keeping in flight (here `--jobs`; all of them when
   * workers pull); the progress line counts the results as they come back.
   */
  async run(chains, ctx) {
    const cfg = ctx.config.validate;
    const { url } = ctx.config.queue;
    const totals: Totals = { stateRuns: 0, backendFallbacks: 0, imagesBuilt: new Set<string>() };
    const local = url === null ? await LocalChains.open(chains, ctx) : null;
    // A stop stops the chains running here; with workers it stops the waiting (their jobs stay queued for the next run).
    const queue = await openWorkQueue({ url, handlers: handlerRegistry(local ? [local.handler()] : []), jobs: cfg.jobs, dataDir: dirname(ctx.repoDir), log: ctx.log, signal: ctx.signal });
    const job = { repo: ctx.repo.name, source: cloneSource(ctx.config, ctx.repo), config: chainJobConfig(ctx.config) };
    if (url) ctx.log.info(`validating ${chains.filter((c) => !c.excluded).length} chain(s) on the workers of ${url}`);
    let items: ValidatedChain[];
    try {
      items = await ctx.forEach(chains, { id: (c) => c.instance_id, label: 'validating chains', concurrency: queue.capacity }, async (chain, key): Promise<ValidatedChain> => {
        if (chain.excluded) return excludedChain(chain, cfg.runner);
        if (!url) return counted(totals, await queue.submit(validateChainKind, key, { ...job, chain }));
        // A worker's notes (state, run, probe) show here as the chain's, as a local run shows them.
        const log = ctx.log.child({ instance_id: chain.instance_id });
        try {
          return counted(totals, await queue.submit(validateChainKind, key, { ...job, chain }, { onProgress: (p) => p.note && log.note(p.note, { worker: p.worker }) }));
        } finally {
          log.note(null);
        }
      });
    } finally {
      await queue.close();
      await local?.close();
    }
    await local?.finish(totals.imagesBuilt);
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
// The primitives `szz-eval --execute` (pipeline/szz-eval/) runs a fix's own tests with: the process's environments
// and containers, a state's runs folded as validate folds them, the sets, the backends a chain's tests need.
export { ChainWork, type ChainWorkOptions } from './validate-and-attribute.ts';
export { ChainContainers } from './backend-containers.ts';
export { aggregateRuns, withoutIgnoredTests, type StateRequest } from './aggregate-runs.ts';
export { computeSets, skippedAtHead } from './compute-sets.ts';
export { chainBackends, type ChainTestRules } from './validate-states.ts';
