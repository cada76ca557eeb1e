import type { PullRequest } from '../foundation/model/change.ts';
import type { ChangeUnits, Tracker } from '../foundation/settings.ts';
import { chooseUnits, listCommitChanges, listMergedPrs, listMixedChanges, readMainline, type MainlineCommit } from './mainline.ts';

/** Commit sha -> the change that contains it (squash commit, merge commit, a merged branch's commit, or itself). */
export function commitToChange(prs: readonly PullRequest[]): Map<string, string> {
  const map = new Map<string, string>();
  for (const pr of prs) {
    map.set(pr.mergeSha, pr.id);
    for (const c of pr.commits) if (!map.has(c)) map.set(c, pr.id);
  }
  return map;
}

/** Trac when a good share of the history follows Django's "Fixed #N -- " / "Refs #N -- " convention. */
export function detectTracker(mainline: readonly MainlineCommit[], tracker: Tracker): 'github' | 'trac' {
  if (tracker !== 'auto') return tracker;
  const trac = mainline.filter((c) => /^(\[[\w.]+\]\s*)?(Fixed|Refs) #\d+/.test(c.subject)).length;
  return trac >= 0.2 * Math.max(1, mainline.length) ? 'trac' : 'github';
}

export interface ListedChanges {
  mainline: MainlineCommit[];
  changes: PullRequest[];
  tracker: 'github' | 'trac';
}

/** The merged changes of a clone, oldest first: PRs, or commits when the history records no PRs. */
export async function listChanges(
  clone: string,
  opts: { branch: string; units: ChangeUnits; tracker: Tracker },
): Promise<ListedChanges> {
  const mainline = await readMainline(clone, opts.branch);
  // Decide on the units from the subjects alone: listing merged branches' commits costs a walk per merge.
  const units = chooseUnits(mainline, opts.units);
  const changes = units === 'prs' ? await listMergedPrs(clone, mainline) : units === 'mixed' ? await listMixedChanges(clone, mainline) : listCommitChanges(mainline);
  return { mainline, changes, tracker: detectTracker(mainline, opts.tracker) };
}

/** Resolve an abbreviated sha against sorted full shas (binary search on the prefix). */
export function prefixLookup(sorted: readonly string[], raw: string): string | null {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (sorted[mid]! < raw) lo = mid + 1;
    else hi = mid;
  }
  return sorted[lo]?.startsWith(raw) ? sorted[lo]! : null;
}

