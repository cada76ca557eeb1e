import type { PullRequest } from '../../../../pipeline/chain.ts';
import type { Reference } from '../../schema.ts';
import type { Source } from '../types.ts';
import { findReferences } from './find-references.ts';
import { listMergedPrs, readMainline } from './list-merged-prs.ts';

/** Commit sha -> the PR that contains it (squash commit, merge commit or one of a merged branch's commits). */
export function commitToPr(prs: readonly PullRequest[]): Map<string, number> {
  const map = new Map<string, number>();
  for (const pr of prs) {
    map.set(pr.mergeSha, pr.number);
    for (const c of pr.commits) if (!map.has(c)) map.set(c, pr.number);
  }
  return map;
}

/** Git-only source: merged PRs and message references from a local clone, no network. */
export const gitSource: Source = {
  name: 'git',
  available: () => ({ ok: true }),
  async discover({ clone, branch }) {
    const mainline = await readMainline(clone, branch);
    const prs = await listMergedPrs(clone, mainline);
    const byCommit = commitToPr(prs);
    const mainlineShas = mainline.map((c) => c.sha);
    const resolveSha = (raw: string): { pr: number | null; sha: string } | null => {
      const sha = mainlineShas.find((s) => s.startsWith(raw)) ?? [...byCommit.keys()].find((s) => s.startsWith(raw));
      return sha ? { pr: byCommit.get(sha) ?? null, sha } : null;
    };
    const references = new Map<number, Reference[]>();
    const earlier = new Set<number>();
    for (const pr of prs) {
      references.set(pr.number, findReferences(pr, earlier, resolveSha));
      earlier.add(pr.number);
    }
    return { prs, references };
  },
};
