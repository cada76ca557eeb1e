/**
 * From a bisection to PR1: the change (PR or commit) holding the commit the tests name, and how it was
 * found. Execution wins over blame and references when it found a commit; what they named instead is
 * kept as a disagreement. A bisection that ends without a commit leaves the blame/reference pick.
 */
import { commitToChange } from '../history/changes.ts';
import type { PullRequest } from '../model/change.ts';
import type { BisectKind, BisectResult } from './types.ts';

/** Which sources name PR1: execution, blame, an explicit reference, or an agreement of several. */
export const ATTRIBUTION_METHODS = ['execution', 'blame', 'reference', 'execution+blame', 'execution+reference', 'execution+blame+reference', 'blame+reference'] as const;
export type AttributionMethod = (typeof ATTRIBUTION_METHODS)[number];

export interface Disagreement {
  source: 'blame' | 'reference';
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
  if (opts.bisect?.kind === 'found' || opts.bisect?.kind === 'introduced') {
    const commit = opts.bisect.commit;
    const change = commitToChange(opts.changes).get(commit);
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
  // No commit from execution: the reference wins over blame, as stages/szz picks.
  const pick = opts.reference ?? opts.blame;
  if (pick === null) return { kind: 'unknown', execution };
  const agree = others.filter((o) => o.change === pick).map((o) => o.source);
  return { kind: 'attributed', change: pick, commit: null, method: label(agree), execution, disagreements: others.filter((o) => o.change !== pick) };
}
