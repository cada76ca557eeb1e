import { resolve } from 'node:path';
import type { StageDef } from '../../pipeline/stage.ts';
import { git } from '../../pipeline/git.ts';
import { ExtractedChainSchema, type ExtractedChain } from '../extract/schema.ts';
import { computeSets } from './compute-sets.ts';
import { assertDockerReachable, connectDocker, ensureImage, openChainEnv, removeStaleContainers, type ChainEnv } from './env/docker.ts';
import { runChainStates, type ChainCost } from './run-chain.ts';
import { getRunner } from './runners/registry.ts';
import { STATE_NAMES, ValidatedChainSchema, type StateName, type StateResult, type ValidatedChain } from './schema.ts';

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
 * validate: run each chain's tests in one Docker container (no network, limited), at the five states,
 * each state repeated; compute FAIL_TO_PASS, PASS_TO_PASS, ANTICIPATION_FAIL_TO_PASS and the PR2 sets.
 */
export const validateStage: StageDef<ExtractedChain, ValidatedChain> = {
  name: 'validate',
  code: ['stages/validate'],
  config: (cfg) => cfg.validate,
  input: ExtractedChainSchema,
  output: ValidatedChainSchema,
  async run(chains, ctx) {
    const cfg = ctx.config.validate;
    const runner = getRunner(cfg.runner);
    const todo = chains.filter((c) => !c.excluded);
    if (todo.length) {
      await assertDockerReachable();
      const stale = await removeStaleContainers(connectDocker());
      if (stale.length) ctx.log.info(`removed ${stale.length} container(s) left by a killed run`);
      await ensureImage(cfg.image, ctx.log);
    }
    const gitDir = resolve(ctx.repo.clone, (await git(ctx.repo.clone, ['rev-parse', '--git-dir'])).trim());
    const items = await ctx.forEach(
      chains,
      { id: (c) => c.instance_id, label: 'validating chains', concurrency: cfg.jobs },
      async (chain): Promise<ValidatedChain> => {
        if (chain.excluded) return { ...chain, ...EMPTY_SETS, cost: null };
        const started = Date.now();
        let env: ChainEnv | undefined;
        let containerStarts = 0;
        try {
          const { states, cost } = await runChainStates({
            chain,
            runs: cfg.runs,
            signal: ctx.signal,
            envFor: async () => {
              env ??= await openChainEnv({
                gitDir,
                image: cfg.image,
                runner,
                memoryBytes: cfg.memoryMiB * 1024 * 1024,
                pidsLimit: cfg.pidsLimit,
                nanoCpus: Math.round(cfg.cpus * 1e9),
                runTimeoutSec: cfg.timeoutSec,
              });
              containerStarts = 1;
              return env;
            },
          });
          return finish(chain, states, { ...cost, containerStarts, wallMs: Date.now() - started });
        } finally {
          await env?.close();
        }
      },
    );
    const counts: Record<string, number> = {
      chains: items.length,
      gradeable: items.filter((i) => i.gradeable).length,
      container_starts: items.reduce((a, i) => a + (i.cost?.containerStarts ?? 0), 0),
      exec_ms: items.reduce((a, i) => a + (i.cost?.execMs ?? 0), 0),
      chain_wall_ms: items.reduce((a, i) => a + (i.cost?.wallMs ?? 0), 0),
    };
    for (const i of items) if (i.excluded) counts[`excluded_${i.excluded.reason}`] = (counts[`excluded_${i.excluded.reason}`] ?? 0) + 1;
    return { items, stats: counts };
  },
};

function finish(chain: ExtractedChain, states: Record<StateName, StateResult>, cost: ChainCost): ValidatedChain {
  const { exclusion, ...sets } = computeSets(states);
  return { ...chain, ...sets, states: STATE_NAMES.map((n) => states[n]), excluded: exclusion, gradeable: exclusion === null, cost };
}
