import type { PullRequest } from '../../foundation/model/change.ts';
import type { Reference } from '../../foundation/model/candidate.ts';
import type { GithubPr } from './list-prs.ts';

export interface Linked {
  /** GitHub PR number -> the change (PullRequest.id) it landed as. */
  changeOf: Map<number, string>;
  references: Map<string, Reference[]>;
  reportedAt: Map<string, string>;
  prNumbers: Map<string, number>;
}

/**
 * Ties GitHub's merged PRs to the changes of the git history, by the commit GitHub says landed the PR
 * (the change's merge commit first, then any of its commits), and derives from the timelines:
 *  - references: a later change B -> an earlier change A when B cross-references A, when B is
 *    cross-referenced from or connected to an issue A closed, or when B closes an issue A closed too;
 *  - reportedAt: the earliest creation time of the issues a change closes;
 *  - prNumbers: the PR number of changes the history shows only as commits.
 * "Later" is the order of `changes` (oldest first).
 */
export function linkPrs(changes: readonly PullRequest[], prs: readonly GithubPr[]): Linked {
  const bySha = new Map<string, string>();
  for (const c of changes) bySha.set(c.mergeSha, c.id);
  for (const c of changes) for (const sha of c.commits) if (!bySha.has(sha)) bySha.set(sha, c.id);
  const order = new Map(changes.map((c, i) => [c.id, i]));
  const change = new Map(changes.map((c) => [c.id, c]));

  const changeOf = new Map<number, string>();
  const prNumbers = new Map<string, number>();
  const taken = new Set<string>();
  for (const pr of prs) {
    const id = pr.mergeSha ? bySha.get(pr.mergeSha) : undefined;
    if (!id || taken.has(id)) continue;
    taken.add(id);
    changeOf.set(pr.number, id);
    if (change.get(id)!.number === null) prNumbers.set(id, pr.number);
  }

  const references = new Map<string, Reference[]>();
  const seen = new Set<string>();
  const add = (later: number, earlier: string, text: string): void => {
    const from = changeOf.get(later);
    if (!from || from === earlier || order.get(from)! <= order.get(earlier)!) return;
    if (seen.has(`${from}>${earlier}`)) return;
    seen.add(`${from}>${earlier}`);
    references.set(from, [...(references.get(from) ?? []), { kind: 'cross_reference', target: earlier, sha: null, text, source: 'github' }]);
  };

  const closers = new Map<number, number[]>();
  for (const pr of prs) for (const i of pr.closingIssues) closers.set(i.number, [...(closers.get(i.number) ?? []), pr.number]);

  const reportedAt = new Map<string, string>();
  for (const pr of prs) {
    const a = changeOf.get(pr.number);
    if (!a) continue;
    for (const r of pr.refs) {
      if (r.type === 'PullRequest') add(r.number, a, `#${r.number} ${r.event === 'connected' ? 'is connected to' : 'cross-references'} #${pr.number}`);
    }
    for (const issue of pr.closingIssues) {
      const at = reportedAt.get(a);
      if (!at || issue.createdAt < at) reportedAt.set(a, issue.createdAt);
      for (const r of issue.refs) {
        if (r.type !== 'PullRequest') continue;
        const verb = r.event === 'connected' ? 'is connected to' : 'cross-references';
        add(r.number, a, `#${r.number} ${verb} issue #${issue.number}, which #${pr.number} closed`);
      }
      for (const n of closers.get(issue.number) ?? []) if (n !== pr.number) add(n, a, `#${n} closes issue #${issue.number} again, which #${pr.number} closed`);
    }
  }
  return { changeOf, references, reportedAt, prNumbers };
}
