/**
 * Database backends: a chain is validated on the first backend its recipe names (SQLite by
 * default, no service); when the deciding tests were skipped there (pr1_tests_skipped /
 * pr2_tests_skipped: the environment cannot show the fix, e.g. a PostgreSQL-only edge case), it is
 * validated again on the next backend, and so on. The row keeps the sets of the backend it ended on
 * (`db_backend`). Only a skip moves on: any other outcome, a set or another exclusion, is the answer,
 * except that a backend the environment cannot run (env_failed_*, e.g. no driver this era accepts) is
 * no answer: the previous backend's evidence-based exclusion stands.
 */
import type { ExclusionReason } from '../../core/foundation/model/change.ts';

/** The exclusions that say "this backend could not run the deciding tests": the next backend may. */
export const FALLBACK_REASONS: ReadonlySet<ExclusionReason> = new Set<ExclusionReason>(['pr1_tests_skipped', 'pr2_tests_skipped']);

/** The exclusions that say "the environment produced no outcome": never evidence, never the answer of a fallback. */
export const ENV_FAILED_REASONS: ReadonlySet<ExclusionReason> = new Set<ExclusionReason>(['env_failed_pr1', 'env_failed_pr2']);

export interface BackendOutcome {
  exclusion: { reason: ExclusionReason } | null;
}

export interface OnBackends<T> {
  /** The backend whose result is kept. */
  backend: string;
  result: T;
  /** Backends tried before it and why each was left (their exclusion reason). */
  left: Array<{ backend: string; reason: ExclusionReason }>;
  /** The fallback backend tried after it whose environment failed (its result is dropped). */
  failedAfter?: { backend: string; reason: ExclusionReason };
}

/**
 * Run `validateOn` on each backend in order until one is not excluded for skipped tests; the last
 * backend's result stands when every one skipped (or failed otherwise), the previous one's when a
 * fallback backend's environment failed.
 */
export async function validateOnBackends<T extends BackendOutcome>(backends: readonly [string, ...string[]], validateOn: (backend: string) => Promise<T>): Promise<OnBackends<T>> {
  const left: OnBackends<T>['left'] = [];
  let previous: { backend: string; result: T } | null = null;
  for (let i = 0; ; i++) {
    const backend = backends[i]!;
    const result = await validateOn(backend);
    const reason = result.exclusion?.reason;
    if (previous !== null && reason !== undefined && ENV_FAILED_REASONS.has(reason)) {
      return { ...previous, left: left.slice(0, -1), failedAfter: { backend, reason } };
    }
    if (i === backends.length - 1 || reason === undefined || !FALLBACK_REASONS.has(reason)) return { backend, result, left };
    left.push({ backend, reason });
    previous = { backend, result };
  }
}
