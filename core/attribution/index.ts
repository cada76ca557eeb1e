/**
 * Execution-confirmed attribution: bisect PR2's fail->pass tests along the first-parent
 * history to the commit where they stop passing, and turn it into PR1. The one public surface:
 *  - bisect.ts     bisectInducer: probes as execs in validate's containers, the result and its cost
 *  - search.ts     the search over first-parent indices (good end from blame's candidates or a window, skips)
 *  - probe-order.ts  which commit to probe next (good-end order, stepping around skips)
 *  - classify-run.ts  one run of the fail->pass tests as good / bad / skip
 *  - era-pool.ts   one container per environment era
 *  - chain-input.ts  a validated chain's bisection input (PR2's fail->pass tests, blame's candidates)
 *  - decide.ts     the change holding the found commit, and the method (execution, blame, reference, agreements)
 *  - predates.ts   whether the defect is older than PR1: PR2's source change applied at PR1's base
 */
export { bisectInducer, type BisectOptions } from './bisect.ts';
export { BISECT_DEFAULTS, bisectBudget, type BisectBudget } from '../foundation/bisect-defaults.ts';
export { goodEndOrder } from './probe-order.ts';
export { searchFirstBad, type SearchOptions } from './search.ts';
export { classifyRun } from './classify-run.ts';
export { EraPool, type EraImage, type EraPoolOptions } from './era-pool.ts';
export { ATTRIBUTION_METHODS, decideAttribution, executionOutweighs, type AttributionDecision, type AttributionMethod, type DecideOptions, type Disagreement } from './decide.ts';
export { chainBisectInput, type ChainBisectInput } from './chain-input.ts';
export { probePredates, sourceFilesOf, type PredatesOptions } from './predates.ts';
export { BISECT_KINDS } from './types.ts';
export type { BisectCost, BisectKind, BisectResult, ProbeEnv, SearchResult, SkipReason, Step, StepRole, Verdict } from './types.ts';
