import { createHash } from 'node:crypto';
import type { Logger } from '../../foundation/log.ts';
import type { GithubClient } from './client.ts';

/** The other side of a timeline event: the issue or PR that cross-referenced, or was connected to, an item. */
export interface TimelineRef {
  event: 'cross_referenced' | 'connected';
  type: 'Issue' | 'PullRequest';
  number: number;
}

export interface ClosingIssue {
  number: number;
  createdAt: string;
  url: string;
  title: string;
  refs: TimelineRef[];
}

/** A merged PR as GitHub records it. */
export interface GithubPr {
  number: number;
  title: string;
  body: string;
  author: string;
  createdAt: string;
  mergedAt: string;
  /** The commit that landed on the base branch (squash, merge or last rebased commit); null when GitHub lost it. */
  mergeSha: string | null;
  labels: string[];
  closingIssues: ClosingIssue[];
  refs: TimelineRef[];
}

// Same-repository events only: a number from another repository names something else.
const REF_FIELDS = `__typename
  ... on CrossReferencedEvent { isCrossRepository source { __typename ... on Issue { number } ... on PullRequest { number } } }
  ... on ConnectedEvent { isCrossRepository source { __typename ... on Issue { number } ... on PullRequest { number } } subject { __typename ... on Issue { number } ... on PullRequest { number } } }`;

export const MERGED_PRS_QUERY = `query ForesightMergedPrs($owner: String!, $name: String!, $first: Int!, $after: String) {
  rateLimit { cost remaining resetAt }
  repository(owner: $owner, name: $name) {
    pushedAt
    pullRequests(states: [MERGED], first: $first, after: $after, orderBy: { field: CREATED_AT, direction: ASC }) {
      totalCount
      pageInfo { hasNextPage endCursor }
      nodes {
        number title body createdAt mergedAt
        author { login }
        mergeCommit { oid }
        labels(first: 20) { nodes { name } }
        closingIssuesReferences(first: 10) {
          nodes {
            number createdAt url title
            timelineItems(first: 25, itemTypes: [CROSS_REFERENCED_EVENT, CONNECTED_EVENT]) { nodes { ${REF_FIELDS} } }
          }
        }
        timelineItems(first: 50, itemTypes: [CROSS_REFERENCED_EVENT, CONNECTED_EVENT]) { nodes { ${REF_FIELDS} } }
      }
    }
  }
}`;

interface Subject { __typename?: string; number?: number }
interface RawEvent { __typename?: string; isCrossRepository?: boolean; source?: Subject | null; subject?: Subject | null }
interface RawIssue { number: number; createdAt: string; url: string; title: string; timelineItems?: { nodes?: (RawEvent | null)[] } | null }
interface RawPr {
  number: number; title: string; body: string | null; createdAt: string; mergedAt: string | null;
  author: { login: string } | null; mergeCommit: { oid: string } | null;
  labels?: { nodes?: ({ name: string } | null)[] } | null;
  closingIssuesReferences?: { nodes?: (RawIssue | null)[] } | null;
  timelineItems?: { nodes?: (RawEvent | null)[] } | null;
}
interface RawPage { totalCount: number; pageInfo: { hasNextPage: boolean; endCursor: string | null }; nodes: (RawPr | null)[] }
interface RawAnswer { repository: { pushedAt: string | null; pullRequests: RawPage } | null }

/** What says the list may have changed: any push (a merge is one) or a change in the number of merged PRs. */
interface RepoVersion { pushedAt: string | null; merged: number }
interface PageRecord { version: RepoVersion; page: RawPage }

function refsOf(self: number, nodes: readonly (RawEvent | null)[] | undefined): TimelineRef[] {
  const out: TimelineRef[] = [];
  for (const e of nodes ?? []) {
    if (!e || e.isCrossRepository) continue;
    const connected = e.__typename === 'ConnectedEvent';
    // ConnectedEvent: source and subject are the two linked items; the other one is whichever is not us.
    const other = connected && e.source?.number === self ? e.subject : e.source;
    const type = other?.__typename;
    if (typeof other?.number !== 'number' || other.number === self || (type !== 'Issue' && type !== 'PullRequest')) continue;
    out.push({ event: connected ? 'connected' : 'cross_referenced', type, number: other.number });
  }
  return out;
}

function toPr(p: RawPr): GithubPr {
  return {
    number: p.number, title: p.title, body: p.body ?? '', author: p.author?.login ?? 'ghost', createdAt: p.createdAt,
    mergedAt: p.mergedAt ?? '', mergeSha: p.mergeCommit?.oid ?? null,
    labels: (p.labels?.nodes ?? []).flatMap((l) => (l ? [l.name] : [])),
    closingIssues: (p.closingIssuesReferences?.nodes ?? []).flatMap((i) =>
      i ? [{ number: i.number, createdAt: i.createdAt, url: i.url, title: i.title, refs: refsOf(i.number, i.timelineItems?.nodes) }] : []),
    refs: refsOf(p.number, p.timelineItems?.nodes),
  };
}

export interface ListedPrs {
  prs: GithubPr[];
  pages: number;
  /** GraphQL requests sent (the rest of the pages came from the cache). */
  requests: number;
}

/**
 * Every merged PR of owner/name, oldest first, 100 per GraphQL page.
 *
 * Caching (GraphQL is a POST, so there are no ETags): each page is stored under its query + variables
 * together with the repository's version — `pushedAt` and the merged-PR count — as seen on page 1.
 * Page 1 is always asked for live, because it carries that version; a later page is reused from disk
 * when its stored version equals the current one, and asked for (and re-stored) otherwise. So a rerun on
 * an unchanged repository costs exactly one request, and a changed one at most one request per page.
 * A push is the signal because PRs only join the list by merging (a push), and a later PR that
 * cross-references an earlier one only matters once merged; newer discussion is read by `context`
 * through ETag-validated REST. A cached page is never mixed into a walk of a different version.
 */
export async function listGithubPrs(
  client: GithubClient,
  repo: string,
  opts: { log: Logger; pageSize?: number },
): Promise<ListedPrs> {
  const [owner, name] = repo.split('/') as [string, string];
  const first = opts.pageSize ?? 100;
  const queryId = createHash('sha256').update(MERGED_PRS_QUERY).digest('hex').slice(0, 16);
  const prs: GithubPr[] = [];
  let version: RepoVersion | null = null;
  let after: string | null = null;
  let pages = 0;
  let requests = 0;
  for (;;) {
    const vars: { owner: string; name: string; first: number; after: string | null } = { owner, name, first, after };
    const key: string = `graphql ${client.baseUrl} ${queryId} ${JSON.stringify(vars)}`;
    let page: RawPage | null = null;
    if (version) {
      const rec: PageRecord | null = await client.pages.get<PageRecord>(key);
      if (rec && rec.version.pushedAt === version.pushedAt && rec.version.merged === version.merged) page = rec.page;
    }
    if (!page) {
      const answer: RawAnswer = await client.octokit.graphql<RawAnswer>(MERGED_PRS_QUERY, vars);
      requests++;
      const r = answer.repository;
      if (!r) throw new Error(`GitHub returned no repository for ${repo}`);
      page = r.pullRequests;
      version ??= { pushedAt: r.pushedAt, merged: page.totalCount };
      await client.pages.put(key, { version, page } satisfies PageRecord);
    }
    pages++;
    for (const p of page.nodes) if (p && p.mergedAt) prs.push(toPr(p));
    opts.log.progress('GitHub merged PRs', prs.length, Math.max(prs.length, version?.merged ?? 0));
    if (!page.pageInfo.hasNextPage || !page.pageInfo.endCursor) break;
    after = page.pageInfo.endCursor;
  }
  return { prs, pages, requests };
}
