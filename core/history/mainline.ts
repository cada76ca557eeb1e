import { commitChangeId, type PullRequest } from '../foundation/model/change.ts';
import type { ChangeUnits } from '../foundation/settings.ts';
import { gitRecords, gitRecordsRaw, pathText } from '../foundation/git.ts';

const MERGE_SUBJECT = /^Merge pull request #(\d+) from (\S+)/;
const SQUASH_SUBJECT = /^(.*\S)\s+\(#(\d+)\)\s*$/;

export interface MainlineCommit {
  sha: string;
  parents: string[];
  author: string;
  /**
   * The committer date: when the commit landed on this branch. A merge or a committed patch lands on its
   * commit date; its author date can be months older (a patch that waited for review in commit-style
   * histories such as Django's), so windows, `created_at` and `gap_days` read this one.
   */
  date: string;
  subject: string;
  body: string;
}

/** Each first-parent commit's position in `mainline` (oldest first: an older commit has the smaller one). */
export function positions(mainline: ReadonlyArray<{ sha: string }>): Map<string, number> {
  return new Map(mainline.map((c, i) => [c.sha, i]));
}

/** The first-parent history of `branch`, oldest first, streamed from git log. */
export async function readMainline(clone: string, branch: string): Promise<MainlineCommit[]> {
  const out: MainlineCommit[] = [];
  // --end-of-options: the branch comes from the configuration; "--output=FILE" must stay a revision.
  const args = ['log', '--first-parent', '--reverse', '--format=%x1e%H%x1f%P%x1f%an%x1f%cI%x1f%B', '--end-of-options', branch];
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

/** The commits each merge brought in (reachable from its second parent, not from its first). */
async function branchCommits(clone: string, merges: readonly MainlineCommit[]): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>();
  // One rev-list per merge; merges are few next to commits, and each walk stops at the mainline.
  for (const m of merges) {
    const shas: string[] = [];
    for await (const l of gitRecords(clone, ['rev-list', '--reverse', '--end-of-options', `${m.parents[0]}..${m.parents[1]}`])) if (l) shas.push(l);
    out.set(m.sha, shas);
  }
  return out;
}

/** GitHub PRs on the mainline: merge commits "Merge pull request #N from ..." and squash commits "Title (#N)". */
export async function listMergedPrs(clone: string, mainline: readonly MainlineCommit[]): Promise<PullRequest[]> {
  const merges = mainline.filter((c) => c.parents.length >= 2 && MERGE_SUBJECT.test(c.subject));
  const branches = await branchCommits(clone, merges);
  const prs: PullRequest[] = [];
  for (const c of mainline) {
    const base = c.parents[0];
    if (!base) continue; // the root commit has nothing to diff against
    const merge = MERGE_SUBJECT.exec(c.subject);
    if (merge && c.parents.length >= 2) {
      const [title = merge[2]!, ...rest] = c.body.split('\n');
      const number = Number(merge[1]);
      prs.push({
        id: String(number), number, title: title.trim() || merge[2]!, body: rest.join('\n').trim(), author: c.author,
        mergedAt: c.date, mergeSha: c.sha, baseSha: base, style: 'merge', commits: branches.get(c.sha) ?? [],
      });
      continue;
    }
    const squash = SQUASH_SUBJECT.exec(c.subject);
    if (squash && c.parents.length === 1) {
      const number = Number(squash[2]);
      prs.push({
        id: String(number), number, title: squash[1]!, body: c.body, author: c.author,
        mergedAt: c.date, mergeSha: c.sha, baseSha: base, style: 'squash', commits: [c.sha],
      });
    }
  }
  return prs;
}

/** Every non-merge mainline commit as a change of its own (histories that record no PRs). */
export function listCommitChanges(mainline: readonly MainlineCommit[]): PullRequest[] {
  return mainline
    .filter((c) => c.parents.length === 1)
    .map((c) => ({
      id: commitChangeId(c.sha), number: null, title: c.subject, body: c.body, author: c.author,
      mergedAt: c.date, mergeSha: c.sha, baseSha: c.parents[0]!, style: 'commit' as const, commits: [c.sha],
    }));
}

/**
 * Merged PRs where the history records them, and every other non-merge mainline commit as a change of its
 * own (maintainers who merge contributors' PRs and commit their own work directly), oldest first.
 */
export async function listMixedChanges(clone: string, mainline: readonly MainlineCommit[]): Promise<PullRequest[]> {
  const prs = await listMergedPrs(clone, mainline);
  const merged = new Set(prs.map((p) => p.mergeSha));
  const at = positions(mainline);
  return [...prs, ...listCommitChanges(mainline.filter((c) => !merged.has(c.sha)))].sort((a, b) => at.get(a.mergeSha)! - at.get(b.mergeSha)!);
}

/** A mainline commit that records a merged GitHub PR (merge commit or squash commit). */
export function isPrCommit(c: MainlineCommit): boolean {
  return (c.parents.length >= 2 && MERGE_SUBJECT.test(c.subject)) || (c.parents.length === 1 && SQUASH_SUBJECT.test(c.subject));
}

/** PRs when the history records them for a good share of its commits, else commits. */
export function chooseUnits(mainline: readonly MainlineCommit[], units: ChangeUnits): 'prs' | 'commits' | 'mixed' {
  if (units !== 'auto') return units;
  const prs = mainline.filter(isPrCommit).length;
  return prs >= 0.3 * Math.max(1, mainline.length - 1) ? 'prs' : 'commits';
}

/**
 * Files each mainline commit changed (against its first parent), from one streamed `git log -z`.
 * Without -z git quotes unusual names ("tests/test_gr\303\274\303\237e.py"), which then
 * match no test pattern. With -z every path ends in NUL, the one byte a path cannot hold; the
 * format starts with a NUL too, so an empty field (never a path) announces the next commit:
 *   \0<sha>\0 [\n<path>\0 <path>\0 ...]   per commit (git writes "\n" between a commit and its files).
 * The fields are read as bytes: a name that is not UTF-8 is listed as pathText writes it.
 */
export async function mainlineFiles(clone: string, branch: string): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>();
  const args = ['log', '-z', '--first-parent', '--diff-merges=first-parent', '--no-renames', '--name-only', '--format=%x00%H', '--end-of-options', branch];
  let files: string[] | null = null;
  let next: 'sha' | 'first' | 'path' = 'path';
  for await (const field of gitRecordsRaw(clone, args, '\0')) {
    if (next === 'sha') {
      out.set(field.toString('latin1'), (files = []));
      next = 'first';
    } else if (field.length === 0) {
      next = 'sha';
    } else if (files) {
      files.push(pathText(next === 'first' && field[0] === 0x0a ? field.subarray(1) : field));
      next = 'path';
    }
  }
  return out;
}
