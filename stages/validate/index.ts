import { resolve } from 'node:path';
import type { StageDef } from '../../pipeline/stage.ts';
import { git } from '../../pipeline/git.ts';
import { ExtractedChainSchema, type ExtractedChain } from '../extract/schema.ts';
import { aggregateRuns, type StateRequest } from './aggregate-runs.ts';
import { computeSets } from './compute-sets.ts';
import { assertDockerReachable, connectDocker, ensureImage, openChainEnv, removeStaleContainers } from './env/docker.ts';
import { getRunner } from './runners/registry.ts';
import { STATE_NAMES, ValidatedChainSchema, type StateName, type StateResult, type ValidatedChain } from './schema.ts';

/** The five states of a chain (definitions.md). */
export function stateRequests(c: ExtractedChain): StateRequest[] {
  return [
    { name: 'S1', checkout: c.pr1_base, overlay: c.pr1_head, testFiles: c.pr1_test_files },
    { name: 'S2', checkout: c.pr1_head, overlay: null, testFiles: c.pr1_test_files },
    { name: 'S3', checkout: c.pr1_head, overlay: c.pr2_head, testFiles: c.anticipation_test_files },
    { name: 'S4', checkout: c.pr2_base, overlay: c.pr2_head, testFiles: c.anticipation_test_files },
    { name: 'S5', checkout: c.pr2_head, overlay: null, testFiles: c.anticipation_test_files },
  ];
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
        if (chain.excluded) return { ...chain, ...EMPTY_SETS };
        const env = await openChainEnv({
          gitDir,
          image: cfg.image,
          runner,
          memoryBytes: cfg.memoryMiB * 1024 * 1024,
          pidsLimit: cfg.pidsLimit,
          nanoCpus: Math.round(cfg.cpus * 1e9),
          runTimeoutSec: cfg.timeoutSec,
        });
        const states = {} as Record<StateName, StateResult>;
        try {
          for (const req of stateRequests(chain)) {
            const runs = [];
            for (let i = 0; i < cfg.runs; i++) {
              ctx.signal.throwIfAborted();
              const run = await env.runState({ checkout: req.checkout, overlay: req.overlay, testFiles: req.testFiles });
              runs.push(run);
              if (!run.ok || run.timedOut) break; // a broken state is not retried into a pass
            }
            states[req.name] = aggregateRuns(req, runs);
          }
        } finally {
          await env.close();
        }
        const { exclusion, ...sets } = computeSets(states);
        ctx.log.debug(`${chain.instance_id}: ${exclusion ? `excluded (${exclusion.reason})` : 'gradeable'}`);
        return { ...chain, ...sets, states: STATE_NAMES.map((n) => states[n]), excluded: exclusion, gradeable: exclusion === null };
      },
    );
    const counts: Record<string, number> = { chains: items.length, gradeable: items.filter((i) => i.gradeable).length };
    for (const i of items) if (i.excluded) counts[`excluded_${i.excluded.reason}`] = (counts[`excluded_${i.excluded.reason}`] ?? 0) + 1;
    return { items, stats: counts };
  },
};
