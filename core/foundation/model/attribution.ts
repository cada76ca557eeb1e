/**
 * How a chain's PR1 was attributed: what execution (the bisection of PR2's fail->pass tests),
 * blame and references named, the steps the bisection ran and what it cost. Emitted in `mining_evidence`.
 */
import { z } from 'zod';

/** Which sources name PR1: execution, blame, an explicit reference, or an agreement of several. */
export const ATTRIBUTION_METHODS = ['execution', 'blame', 'reference', 'execution+blame', 'execution+reference', 'execution+blame+reference', 'blame+reference'] as const;
export type AttributionMethod = (typeof ATTRIBUTION_METHODS)[number];

/** Every way a bisection can end (core/attribution's BisectKind, as a list for schemas; the two are checked against each other there). */
export const BISECT_KINDS = ['found', 'ambiguous', 'budget', 'no_bad_end', 'introduced', 'no_good_end', 'all_skipped', 'not_on_mainline', 'flaky'] as const;

export const AttributionStepSchema = z.object({
  commit: z.string(),
  role: z.enum(['bad_end', 'good_end', 'bisect', 'confirm']),
  outcome: z.enum(['good', 'bad', 'skip']),
  /** Why a skip is no evidence (import_error, infra, env_broken, ...); null for good and bad. */
  reason: z.string().nullable(),
  seconds: z.number(),
  /** Not probed: the outcome validate's S4 state already showed at PR2's base. */
  reused: z.boolean().default(false),
  /** PR2's whole test module could not import: the outcome of PR2's test changes applied to the commit's own modules. */
  transplanted: z.boolean().default(false),
});

/**
 * What the probe of PR1's base showed (core/attribution predates.ts): PR2's source change applied there,
 * the anticipation tests run with it and, when they all pass with it, without it.
 * `predates`: every one passes with the change and fails without it as at PR2's base: the defect is
 * older than PR1 (the chain is excluded `defect_predates_pr1`). `partly`: some of them do.
 * `passes_without`: they pass at PR1's base without the change too (the defect came with PR1 or later).
 * `fails_otherwise`: without the change they fail another way than at PR2's base, or do not run (the tested
 * code is not there yet). `fix_fails`: with the change not every one passes. `not_applied`: the source
 * change does not apply three-way there. `no_evidence`: a run showed nothing (environment, runner crash,
 * timeout): never read either way.
 */
export const PREDATES_VERDICTS = ['predates', 'partly', 'passes_without', 'fails_otherwise', 'fix_fails', 'not_applied', 'no_evidence'] as const;
export type PredatesVerdict = (typeof PREDATES_VERDICTS)[number];

/** One anticipation test in one probe run; `fail_otherwise`: it failed with another exception than at PR2's base. */
export const PROBE_TEST_OUTCOMES = ['pass', 'fail', 'fail_otherwise', 'skip', 'missing'] as const;

export const PredatesProbeSchema = z.object({
  /** The commit probed: PR1's base. */
  commit: z.string(),
  /** PR2's source change applied there: `git diff base head` of `files` (its files that are not tests). */
  applied: z.object({ base: z.string(), head: z.string(), files: z.array(z.string()) }),
  /** PR2's test changes laid on the commit's own test modules (its whole test files could not import or crashed the runner). */
  transplanted: z.boolean(),
  /** Each anticipation test with and without the change (null: not run without it). */
  tests: z.array(z.object({ id: z.string(), with_fix: z.enum(PROBE_TEST_OUTCOMES), without_fix: z.enum(PROBE_TEST_OUTCOMES).nullable() })),
  verdict: z.enum(PREDATES_VERDICTS),
  detail: z.string(),
  runs: z.number().int(),
  seconds: z.number(),
});
export type PredatesProbe = z.infer<typeof PredatesProbeSchema>;

export const AttributionSchema = z.object({
  /**
   * `attributed`: PR1 is `change`; `unattributed`: the tests stop passing at a commit of no change (the chain
   * is excluded); `unknown`: nothing names a change; `error`: the bisection could not run (our
   * infrastructure: never evidence, blame's PR1 stands).
   */
  decision: z.enum(['attributed', 'unattributed', 'unknown', 'error']),
  /** Which sources agree on PR1 (null unless attributed). */
  method: z.enum(ATTRIBUTION_METHODS).nullable(),
  /** The change (PullRequest.id) named PR1, or null. */
  change: z.string().nullable(),
  /** The first commit where the tests stop passing (`found` or `introduced`), or null. */
  commit: z.string().nullable(),
  /** How the bisection ended (null when none ran). */
  execution: z.enum(BISECT_KINDS).nullable(),
  /** The PR1 blame or a reference had named when execution moved the chain to another PR1; else null. */
  moved_from: z.string().nullable(),
  /**
   * What blame or a reference named instead of the decision's change; `execution`: the change of an
   * `introduced` commit above the pick, below which the tests said nothing of it (core/attribution executionOutweighs).
   */
  disagreements: z.array(z.object({ source: z.enum(['blame', 'reference', 'execution']), change: z.string() })),
  /** `ambiguous` / `budget`: the commits the first bad one lies in (oldest first). */
  range: z.array(z.string()),
  /**
   * The fail->pass tests the bisection followed when its good end passed only those (the others failed
   * there too: they test what PR2 itself changed); empty when it followed all of them.
   */
  followed: z.array(z.string()).default([]),
  steps: z.array(AttributionStepSchema),
  cost: z.object({ containers: z.number().int(), runs: z.number().int(), seconds: z.number() }).nullable(),
  detail: z.string().nullable(),
  /**
   * The probe of PR1's base with PR2's source change, when the bisection named no commit (blame's or the
   * reference's PR1 stood) and the chain was not excluded; null when it did not run.
   */
  predates: PredatesProbeSchema.nullable().default(null),
});
export type Attribution = z.infer<typeof AttributionSchema>;
