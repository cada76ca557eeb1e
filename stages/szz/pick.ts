import type { PullRequest } from '../../core/foundation/model/change.ts';
import type { Candidate, Reference } from '../../core/foundation/model/candidate.ts';
import type { Attribution } from './attribute.ts';
import type { Chain, SzzEvidence } from '../../core/foundation/model/chain.ts';

/** Fold commit-level blame into changes (a merged PR owns all of its branch commits). */
export function toEvidence(att: Attribution, changeOf: ReadonlyMap<string, string>, self: string): Omit<SzzEvidence, 'pickedBy'> {
  const byChange = new Map<string, SzzEvidence['candidates'][number]>();
  let unattributedScore = 0;
  for (const c of att.commits) {
    const change = changeOf.get(c.sha);
    if (change === undefined || change === self) {
      unattributedScore += c.score;
      continue;
    }
    const entry = byChange.get(change) ?? { change, score: 0, lines: [] };
    entry.score += c.score;
    entry.lines.push(...c.lines.map((l) => ({ ...l, sha: c.sha })));
    byChange.set(change, entry);
  }
  // Highest score first; ties keep the order of `att.commits` (more recent first).
  const candidates = [...byChange.values()].sort((a, b) => b.score - a.score);
  return {
    candidates,
    unattributedScore,
    blamedLines: att.blamedLines,
    addOnly: att.addOnly,
    filteredByTime: att.filteredByTime,
    metaSkipped: att.metaSkipped,
  };
}

const REF_STRENGTH: Record<Reference['kind'], number> = { regression: 0, cross_reference: 1, refs: 2, mention: 3, revert: 4 };

/**
 * Choose PR1: an explicit reference (preferring one blame confirms), else the top blame candidate.
 * An advisory-derived candidate keeps the category `advisory` whichever way PR1 was found.
 */
export function pickIntroducer(
  cand: Candidate,
  evidence: Omit<SzzEvidence, 'pickedBy'>,
  changes: ReadonlyMap<string, PullRequest>,
): Pick<Chain, 'pr1' | 'mining_category' | 'szz'> | null {
  const refs = cand.references
    .filter((r): r is Reference & { target: string } => r.target !== null && changes.has(r.target) && r.kind !== 'revert')
    .sort((a, b) => REF_STRENGTH[a.kind] - REF_STRENGTH[b.kind]);
  const advisory = cand.advisories.length > 0;
  const category = (found: 'cross_reference' | 'szz'): Chain['mining_category'] => (advisory ? 'advisory' : found);
  const confirmed = evidence.candidates.find((c) => refs.some((r) => r.target === c.change));
  if (confirmed) return { pr1: changes.get(confirmed.change)!, mining_category: category('cross_reference'), szz: { ...evidence, pickedBy: 'reference_confirmed_by_blame' } };
  const ref = refs[0];
  if (ref) return { pr1: changes.get(ref.target)!, mining_category: category('cross_reference'), szz: { ...evidence, pickedBy: 'reference' } };
  const top = evidence.candidates[0];
  if (top) return { pr1: changes.get(top.change)!, mining_category: category('szz'), szz: { ...evidence, pickedBy: 'blame' } };
  return null;
}
