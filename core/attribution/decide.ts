/**
 * From a bisection to PR1: the change (PR or commit) holding the commit the tests name, and how it was
 * found. Execution wins over blame and references when it found a commit (`introduced`: unless what they
 * named lies below it, `executionOutweighs`); what they named instead is kept as a disagreement. A
 * bisection that ends without a commit leaves the blame/reference pick.
 */
import { commitToChange } from '../history/changes.ts';
import { ATTRIBUTION_METHODS, type AttributionMethod } from '../foundation/model/attribution.ts';
import type { PullRequest } from '../foundation/model/change.ts';
import type { BisectKind, BisectResult } from './types.ts';

export { ATTRIBUTION_METHODS, type AttributionMethod };

export interface Disagreement {
  /** `execution`: an `introduced` commit that did not outweigh an older pick (its change). */
  source: 'blame' | 'reference' | 'execution';
  /** The change (PullRequest.id) that source named. */
  change: string;
}

export type AttributionDecision =
  /** PR1 is `change`; `commit` is the first bad commit when execution found one (`found` or `introduced`). */
  | { kind: 'attributed'; change: string; commit: string | null; method: AttributionMethod; execution: BisectKind | null; disagreements: Disagreement[] }
  /** The tests stop passing at a mainline commit that belongs to no change (a direct commit in a PR history). */
  | { kind: 'unattributed'; commit: string; detail: string; disagreements: Disagreement[] }
  /** Nothing names a change: no bisection result and neither blame nor a reference. */
  | { kind: 'unknown'; execution: BisectKind | null };

export interface DecideOptions {
  bisect: BisectResult | null;
  changes: readonly PullRequest[];
  /** Blame's top candidate (PullRequest.id), or null. */
  blame: string | null;
  /** The change an explicit reference names (PullRequest.id), or null. */
  reference: string | null;
  /** Each first-parent commit's position, oldest first (the mainline's index). */
  order: ReadonlyMap<string, number>;
}

/**
 * Whether the bisection's commit replaces `named`, the commit blame or a reference named (null: none).
 * `found` always does: the tests pass just below it and fail from it, which no other commit explains.
 * `introduced` does unless `named` lies below it: below the introduced commit the tests could not import
 * or failed another way, so they say nothing of `named` (Django f80669d2f5: its test calls
 * lookup_allowed() with the `request` argument 594fcc2b74 added, and ends with TypeError at 45ecd9acca,
 * the regression the fix names). A `named` above it is contradicted: the tests already fail below it.
 */
export function executionOutweighs(bisect: { kind: 'found' | 'introduced'; commit: string }, named: string | null, order: ReadonlyMap<string, number>): boolean {
  if (bisect.kind === 'found' || named === null || named === bisect.commit) return true;
  const at = order.get(named);
  const born = order.get(bisect.commit);
  return at === undefined || born === undefined || at > born;
}

function label(sources: ReadonlyArray<'execution' | 'blame' | 'reference'>): AttributionMethod {
  return sources.join('+') as AttributionMethod;
}

export function decideAttribution(opts: DecideOptions): AttributionDecision {
  const execution = opts.bisect?.kind ?? null;
  const others = [
    ...(opts.blame !== null ? [{ source: 'blame' as const, change: opts.blame }] : []),
    ...(opts.reference !== null ? [{ source: 'reference' as const, change: opts.reference }] : []),
  ];
  // No commit from execution (or an introduced one below which the tests say nothing): the reference wins over blame, as stages/szz picks.
  const pick = opts.reference ?? opts.blame;
  const changeOf = commitToChange(opts.changes);
  const pickCommit = pick === null ? null : (opts.changes.find((c) => c.id === pick)?.mergeSha ?? null);
  if ((opts.bisect?.kind === 'found' || opts.bisect?.kind === 'introduced') && executionOutweighs(opts.bisect, pickCommit, opts.order)) {
    const commit = opts.bisect.commit;
    const change = changeOf.get(commit);
    if (change === undefined) {
      return { kind: 'unattributed', commit, detail: `the tests stop passing at ${commit.slice(0, 10)}, a commit of no change`, disagreements: others };
    }
    const agree = others.filter((o) => o.change === change).map((o) => o.source);
    return {
      kind: 'attributed',
      change,
      commit,
      method: label(['execution', ...agree]),
      execution,
      disagreements: others.filter((o) => o.change !== change),
    };
  }
  if (pick === null) return { kind: 'unknown', execution };
  const agree = others.filter((o) => o.change === pick).map((o) => o.source);
  const overruled = opts.bisect?.kind === 'introduced' ? [{ source: 'execution' as const, change: changeOf.get(opts.bisect.commit) ?? opts.bisect.commit }] : [];
  return { kind: 'attributed', change: pick, commit: null, method: label(agree), execution, disagreements: [...others.filter((o) => o.change !== pick), ...overruled] };
}
