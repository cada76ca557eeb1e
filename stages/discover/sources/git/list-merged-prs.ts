import type { PullRequest } from '../../../../pipeline/chain.ts';
import { git, gitRecords } from '../../../../pipeline/git.ts';

const MERGE_SUBJECT = /^Merge pull request #(\d+) from (\S+)/;
const SQUASH_SUBJECT = /^(.*\S)\s+\(#(\d+)\)\s*$/;

export interface MainlineCommit {
  sha: string;
  parents: string[];
  author: string;
  date: string;
  subject: string;
  body: string;
}

/** The first-parent history of `branch`, oldest first, streamed from git log. */
export async function readMainline(clone: string, branch: string): Promise<MainlineCommit[]> {
  const out: MainlineCommit[] = [];
  const args = ['log', '--first-parent', '--reverse', '--format=%x1e%H%x1f%P%x1f%an%x1f%aI%x1f%B', branch];
  for await (const rec of gitRecords(clone, args, '\x1e')) {
    if (!rec.trim()) continue;
    const [sha, parents, author, date, message] = rec.split('\x1f');
    const msg = (message ?? '').replace(/\s+$/, '');
    const nl = msg.indexOf('\n');
    out.push({
      sha: sha!.trim(),
      parents: (parents ?? '').split(' ').filter(Boolean),
      author: author ?? '',
      date: date ?? '',
      subject: nl < 0 ? msg : msg.slice(0, nl),
      body: nl < 0 ? '' : msg.slice(nl + 1).trim(),
    });
  }
  return out;
}

/** Recognise merged PRs on the mainline: GitHub merge commits and squash commits titled `... (#N)`. */
export async function listMergedPrs(clone: string, mainline: readonly MainlineCommit[]): Promise<PullRequest[]> {
  const prs: PullRequest[] = [];
  for (const c of mainline) {
    const base = c.parents[0];
    if (!base) continue; // the root commit has nothing to diff against
    const merge = MERGE_SUBJECT.exec(c.subject);
    if (merge && c.parents.length >= 2) {
      const [title = merge[2]!, ...rest] = c.body.split('\n');
      const commits = (await git(clone, ['rev-list', '--reverse', `${base}..${c.parents[1]}`])).split('\n').filter(Boolean);
      prs.push({
        number: Number(merge[1]),
        title: title.trim() || merge[2]!,
        body: rest.join('\n').trim(),
        author: c.author,
        mergedAt: c.date,
        mergeSha: c.sha,
        baseSha: base,
        style: 'merge',
        commits,
      });
      continue;
    }
    const squash = SQUASH_SUBJECT.exec(c.subject);
    if (squash && c.parents.length === 1) {
      prs.push({
        number: Number(squash[2]),
        title: squash[1]!,
        body: c.body,
        author: c.author,
        mergedAt: c.date,
        mergeSha: c.sha,
        baseSha: base,
        style: 'squash',
        commits: [c.sha],
      });
    }
  }
  return prs;
}
