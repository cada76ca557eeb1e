import type { Logger } from '../../foundation/log.ts';
import type { Comment, LinkedIssue } from '../../foundation/model/candidate.ts';
import type { ChangeContext } from '../types.ts';
import { statusOf, type GithubClient } from './client.ts';
import type { GithubPr } from './list-prs.ts';

/** The reaction counts of GitHub's REST `reactions` rollup. */
export const REACTIONS = ['+1', '-1', 'laugh', 'hooray', 'confused', 'heart', 'rocket', 'eyes'] as const;
const MENTION = /(?:^|[^\w&/])#(\d+)\b/g;
/** Linked issues fetched per change at most (closing ones first): each costs one or two requests. */
const MAX_LINKED = 20;

export interface ContextOptions {
  log: Logger;
  tracker: 'github' | 'trac';
  /** REST page size (GitHub's maximum, 100, unless a test shrinks it). */
  perPage?: number;
  /** Numbers known to be PRs: a `#N` mention of one is not an issue and costs no request. */
  knownPrs?: ReadonlySet<number>;
}

/** The answer, or null when GitHub says the thing is not there (404) or gone (410). */
async function optional<T>(p: Promise<T>): Promise<T | null> {
  try {
    return await p;
  } catch (err) {
    if (statusOf(err) === 404 || statusOf(err) === 410) return null;
    throw err;
  }
}

const login = (u: { login: string } | null | undefined): string => u?.login ?? 'ghost';

function byTime(a: Comment, b: Comment): number {
  return a.created_at < b.created_at ? -1 : a.created_at > b.created_at ? 1 : 0;
}

/**
 * The discussion around PR `number`: its issue comments, review comments and reviews with a body
 * (oldest first), and the issues it closes, is cross-referenced from, or mentions (`#N` in its body,
 * not with a Trac tracker, whose `#N` are tickets), each with its reactions and its own comments.
 * A PR GitHub does not know (404) has no context.
 */
export async function fetchContext(
  client: GithubClient,
  repo: string,
  number: number,
  pr: GithubPr | undefined,
  body: string,
  opts: ContextOptions,
): Promise<ChangeContext> {
  const { octokit } = client;
  const [owner, name] = repo.split('/') as [string, string];
  const base = { owner, repo: name, per_page: opts.perPage ?? 100 };

  const issueComments = await optional(octokit.paginate(octokit.rest.issues.listComments, { ...base, issue_number: number }));
  if (!issueComments) {
    opts.log.debug(`GitHub has no PR #${number} in ${repo}: no discussion`);
    return { comments: [], linkedIssues: [] };
  }
  const reviewComments = (await optional(octokit.paginate(octokit.rest.pulls.listReviewComments, { ...base, pull_number: number }))) ?? [];
  const reviews = (await optional(octokit.paginate(octokit.rest.pulls.listReviews, { ...base, pull_number: number }))) ?? [];
  const comments: Comment[] = [
    ...issueComments.map((c) => ({ kind: 'pr' as const, number, author: login(c.user), url: c.html_url, created_at: c.created_at, body: c.body ?? '' })),
    ...reviewComments.map((c) => ({ kind: 'review_comment' as const, number, author: login(c.user), url: c.html_url, created_at: c.created_at, body: c.body })),
    ...reviews
      .filter((r) => r.body?.trim() && r.submitted_at && r.state !== 'PENDING')
      .map((r) => ({ kind: 'review' as const, number, author: login(r.user), url: r.html_url, created_at: r.submitted_at!, body: r.body })),
  ].sort(byTime);

  const wanted = new Map<number, LinkedIssue['ref_type']>();
  const want = (n: number, type: LinkedIssue['ref_type']): void => {
    if (n !== number && !wanted.has(n) && !(type === 'mentions' && opts.knownPrs?.has(n))) wanted.set(n, type);
  };
  for (const i of pr?.closingIssues ?? []) want(i.number, 'closes');
  // A connected issue is one linked by hand to close with the PR.
  for (const r of pr?.refs ?? []) if (r.type === 'Issue') want(r.number, r.event === 'connected' ? 'closes' : 'cross-referenced');
  if (opts.tracker !== 'trac') for (const m of (pr?.body ?? body).matchAll(MENTION)) want(Number(m[1]), 'mentions');

  const linkedIssues: LinkedIssue[] = [];
  for (const [n, refType] of [...wanted].slice(0, MAX_LINKED)) {
    const issue = (await optional(octokit.rest.issues.get({ owner, repo: name, issue_number: n })))?.data;
    if (!issue || issue.pull_request) continue; // a PR, not a reporter-side issue
    const own = issue.comments > 0 ? ((await optional(octokit.paginate(octokit.rest.issues.listComments, { ...base, issue_number: n }))) ?? []) : [];
    const rollup = (issue.reactions ?? {}) as Partial<Record<(typeof REACTIONS)[number], number>>;
    linkedIssues.push({
      number: n,
      url: issue.html_url,
      title: issue.title,
      body: issue.body ?? '',
      labels: issue.labels.map((l) => (typeof l === 'string' ? l : (l.name ?? ''))).filter(Boolean),
      reactions: Object.fromEntries(REACTIONS.map((k) => [k, rollup[k] ?? 0])),
      ref_type: refType,
      created_at: issue.created_at,
      comments: own.map((c) => ({ author: login(c.user), created_at: c.created_at, body: c.body ?? '', url: c.html_url })),
    });
  }
  return { comments, linkedIssues };
}
