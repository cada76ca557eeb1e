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
});
export type Attribution = z.infer<typeof AttributionSchema>;
