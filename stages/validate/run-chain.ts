import type { ExtractedChain } from '../../core/model/extracted.ts';
import { aggregateRuns, type StateRequest } from './aggregate-runs.ts';
import type { ChainEnv, Runner } from '../../core/env/index.ts';
import type { StateName, StateResult } from '../../core/model/validated.ts';

/** The five states of a chain (definitions.md). */
export function stateRequests(c: ExtractedChain): StateRequest[] {
  return [
    { name: 'S1', checkout: c.pr1_base, overlay: c.pr1_head, testFiles: c.pr1_test_files, overlayFiles: c.pr1_overlay_files },
    { name: 'S2', checkout: c.pr1_head, overlay: null, testFiles: c.pr1_test_files, overlayFiles: [] },
    { name: 'S3', checkout: c.pr1_head, overlay: c.pr2_head, testFiles: c.anticipation_test_files, overlayFiles: c.anticipation_overlay_files },
    { name: 'S4', checkout: c.pr2_base, overlay: c.pr2_head, testFiles: c.anticipation_test_files, overlayFiles: c.anticipation_overlay_files },
    { name: 'S5', checkout: c.pr2_head, overlay: null, testFiles: c.anticipation_test_files, overlayFiles: [] },
  ];
}

/** What validating a chain cost: for the benchmark's wall-time / test-time ratio. */
export interface ChainCost {
  containerStarts: number;
  /** Time inside the container running states (git checkout + the test runner). */
  execMs: number;
  wallMs: number;
}

/**
 * Run every state of a chain `runs` times, in the environment `envFor` gives for that state (one
 * container per distinct environment, normally one per chain), and fold the runs per state.
 */
export async function runChainStates(opts: {
  chain: ExtractedChain;
  runs: number;
  envFor: (state: StateName) => Promise<{ kind: 'ready'; env: ChainEnv; runner: Runner } | { kind: 'broken'; problem: string }>;
  signal: AbortSignal;
}): Promise<{ states: Record<StateName, StateResult>; cost: Omit<ChainCost, 'containerStarts' | 'wallMs'> }> {
  const states = {} as Record<StateName, StateResult>;
  let execMs = 0;
  for (const req of stateRequests(opts.chain)) {
    const era = await opts.envFor(req.name);
    if (era.kind === 'broken') {
      // The environment never built: the state did not run, which is never read as "fails".
      const { name, checkout, overlay, testFiles } = req;
      states[name] = { name, checkout, overlay, testFiles, outcome: { kind: 'infra', reason: 'env_build', detail: era.problem }, runs: 0, tests: {}, collectionErrors: [], durationMs: 0 };
      continue;
    }
    const runs = [];
    for (let i = 0; i < opts.runs; i++) {
      opts.signal.throwIfAborted();
      const run = await era.env.runState({ checkout: req.checkout, overlay: req.overlay, testFiles: req.testFiles, overlayFiles: req.overlayFiles });
      // An abort removes the container under the run: what it returned is no outcome at all.
      opts.signal.throwIfAborted();
      execMs += run.durationMs;
      runs.push(run);
      if (run.kind !== 'report') break; // a broken state is not retried into a pass
    }
    states[req.name] = aggregateRuns(req, runs, era.runner.exitCodes);
  }
  return { states, cost: { execMs } };
}
