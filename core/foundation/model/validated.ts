import { z } from 'zod';
import { AttributionSchema } from './attribution.ts';
import { ExtractedChainSchema } from './extracted.ts';

export const STATE_NAMES = ['S1', 'S2', 'S3', 'S4', 'S5'] as const;
export type StateName = (typeof STATE_NAMES)[number];

/** A test's outcome over a state's repeated runs. */
export const OutcomeSchema = z.enum(['pass', 'fail', 'skip', 'flaky']);
export type Outcome = z.infer<typeof OutcomeSchema>;

/**
 * A state's outcome over its repeated runs. `ran`: every run produced a report the runner read, with at
 * least one requested test collected (or a collection error): evidence. `infra`: our environment failed to
 * show anything (never evidence about the chain, never retried into a pass). `chain`: the repository's own
 * code crashed the test runner before any test (e.g. PR tests overlaid on a base that lacks what they import).
 */
export const INFRA_REASONS = ['env_build', 'timeout', 'no_report', 'runner_exit', 'no_tests_collected'] as const;
export const CHAIN_REASONS = ['runner_crash'] as const;
export const StateOutcomeSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('ran') }),
  z.object({ kind: z.literal('infra'), reason: z.enum(INFRA_REASONS), detail: z.string() }),
  z.object({ kind: z.literal('chain'), reason: z.enum(CHAIN_REASONS), detail: z.string() }),
]);
export type StateOutcome = z.infer<typeof StateOutcomeSchema>;

export const StateResultSchema = z.object({
  name: z.enum(STATE_NAMES),
  checkout: z.string(),
  overlay: z.string().nullable(),
  testFiles: z.array(z.string()),
  /** Whether the state is evidence, and when it is not, whose failure that is (see StateOutcomeSchema). */
  outcome: StateOutcomeSchema,
  runs: z.number().int(),
  tests: z.record(z.string(), OutcomeSchema),
  /** Test files that could not be imported/collected. */
  collectionErrors: z.array(z.string()),
  /**
   * A failing test's id -> the exception it ended with, when every run of the state named the same one
   * (the bisection compares the exceptions of older commits with PR2's base's: core/attribution).
   */
  failureKinds: z.record(z.string(), z.string()).optional(),
  durationMs: z.number(),
  /**
   * Set when the state was not decided by its own overlaid run. `base_version_after_overlay_crash` (S1): the
   * runner crashed at the base on the PR's overlaid test files (a Django test app's models use an option the
   * PR adds; `crash` quotes it), so the state ran the base's own version of those files instead (`overlay`
   * null): its passing tests are theirs, and every other test of the PR's test files that the head reports
   * counts as failing, as a module that cannot be imported does (compute-sets.ts). When that run is no
   * evidence either, the state's outcome says why.
   */
  decidedBy: z.object({ reason: z.literal('base_version_after_overlay_crash'), overlay: z.string(), crash: z.string() }).optional(),
});
export type StateResult = z.infer<typeof StateResultSchema>;

const TestList = z.array(z.string());

export const ValidatedChainSchema = ExtractedChainSchema.extend({
  states: z.array(StateResultSchema),
  FAIL_TO_PASS: TestList,
  PASS_TO_PASS: TestList,
  p2p_excluded_gold_fail: TestList,
  PR2_FAIL_TO_PASS: TestList,
  PR2_PASS_TO_PASS: TestList,
  ANTICIPATION_FAIL_TO_PASS: TestList,
  /** Tests whose outcome changed between repeated runs of one state: in no set. */
  flaky_tests: TestList,
  /** PR2 tests dropped because their file cannot be imported at pr1_head for reasons outside PR1. */
  anticipation_not_gradeable: TestList,
  /** FAIL_TO_PASS, PASS_TO_PASS and ANTICIPATION_FAIL_TO_PASS non-empty and every state ran. */
  gradeable: z.boolean(),
  /** The runner and the images the PR1-era (S1–S3) and PR2-era (S4, S5) states ran in. */
  runner: z.string(),
  /** The recipe's install commands (run in the repository at the era's commit when the env image was built). */
  install_cmd: z.string(),
  env_image_pr1: z.string().nullable(),
  env_image_pr2: z.string().nullable(),
  /**
   * The database backend the sets come from (core/env/services): `sqlite`, no service (the default), or
   * the sidecar the chain fell back to when its tests were skipped on the backends before it.
   */
  db_backend: z.string().min(1).default('sqlite'),
  /** The test environment of PR1's era as validation ran it (a detected recipe's chosen candidate may set some): eval images get the same. */
  test_env: z.record(z.string(), z.string()).default({}),
  /** Execution-confirmed attribution of PR1 (null when it did not run: turned off, no PR2 fail->pass test). */
  attribution: AttributionSchema.nullable().default(null),
  /** What validating it cost (null when it was not validated). */
  cost: z.object({ containerStarts: z.number().int(), execMs: z.number(), wallMs: z.number() }).nullable(),
});
export type ValidatedChain = z.infer<typeof ValidatedChainSchema>;
