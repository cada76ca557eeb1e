import type { PullRequest } from '../../pipeline/chain.ts';
import { isBlankOrComment } from '../../pipeline/files.ts';
import type { Candidate, Reference } from '../discover/schema.ts';
import { blameLines } from './blame.ts';
import { fixedLines } from './diff-lines.ts';
import type { Chain, SzzEvidence } from './schema.ts';

type Blamed = SzzEvidence['candidates'];

/** Blame the lines PR2's source diff deletes or modifies (or, for a pure addition, the line above it). */
export async function blameFix(clone: string, pr2: PullRequest, prOfCommit: ReadonlyMap<string, number>): Promise<Omit<SzzEvidence, 'pickedBy'>> {
  const files = await fixedLines(clone, pr2.baseSha, pr2.mergeSha);
  const addOnly = files.every((f) => f.removed.length === 0);
  const byPr = new Map<number, Blamed[number]>();
  let unattributedScore = 0;
  let blamedLines = 0;
  for (const f of files) {
    const targets = addOnly ? f.anchors : f.removed.filter((r) => !isBlankOrComment(r.text, f.file)).map((r) => r.line);
    const weight = addOnly ? 0.5 : 1;
    for (const b of await blameLines(clone, pr2.baseSha, f.file, targets)) {
      if (isBlankOrComment(b.text, f.file)) continue;
      blamedLines++;
      const pr = prOfCommit.get(b.sha);
      if (pr === undefined || pr === pr2.number) {
        unattributedScore += weight;
        continue;
      }
      const entry = byPr.get(pr) ?? { pr, score: 0, lines: [] };
      entry.score += weight;
      entry.lines.push({ file: f.file, line: b.line, sha: b.sha });
      byPr.set(pr, entry);
    }
  }
  // Highest score first; on a tie the more recent PR (it touched the lines last).
  const candidates = [...byPr.values()].sort((a, b) => b.score - a.score || b.pr - a.pr);
  return { candidates, unattributedScore, blamedLines, addOnly };
}

const REF_STRENGTH: Record<Reference['kind'], number> = { regression: 0, refs: 1, mention: 2, revert: 3 };

/** Choose PR1: an explicit reference (preferring one blame confirms), else the top blame candidate. */
export function pickIntroducer(
  cand: Candidate,
  evidence: Omit<SzzEvidence, 'pickedBy'>,
  prs: ReadonlyMap<number, PullRequest>,
): Pick<Chain, 'pr1' | 'mining_category' | 'szz'> | null {
  const refs = cand.references
    .filter((r): r is Reference & { pr: number } => r.pr !== null && prs.has(r.pr) && r.kind !== 'revert')
    .sort((a, b) => REF_STRENGTH[a.kind] - REF_STRENGTH[b.kind]);
  const blamed = new Set(evidence.candidates.map((c) => c.pr));
  const confirmed = evidence.candidates.find((c) => refs.some((r) => r.pr === c.pr));
  if (confirmed) return { pr1: prs.get(confirmed.pr)!, mining_category: 'cross_reference', szz: { ...evidence, pickedBy: 'reference_confirmed_by_blame' } };
  const ref = refs.find((r) => !blamed.has(r.pr)) ?? refs[0];
  if (ref) return { pr1: prs.get(ref.pr)!, mining_category: 'cross_reference', szz: { ...evidence, pickedBy: 'reference' } };
  const top = evidence.candidates[0];
  if (top) return { pr1: prs.get(top.pr)!, mining_category: 'szz', szz: { ...evidence, pickedBy: 'blame' } };
  return null;
}
