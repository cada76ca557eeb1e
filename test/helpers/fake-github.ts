import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Level, Logger } from '../../core/foundation/log.ts';

/**
 * A GitHub API on 127.0.0.1 (random port) for one repository: the REST endpoints the github source reads
 * (issue/PR comments, review comments, reviews, issues) with Link pagination and ETags, and POST /graphql
 * answering the merged-PR listing with cursor pagination. Faults can be scripted; every request is recorded.
 */

export interface FakeUserText { user: string; body: string; created_at: string }
export interface FakeReview extends FakeUserText { state: 'APPROVED' | 'COMMENTED' | 'CHANGES_REQUESTED' | 'PENDING' }
/** A timeline event on an item: another item cross-referenced it, or was connected to it. */
export interface FakeRef {
  event: 'CrossReferencedEvent' | 'ConnectedEvent'; type: 'Issue' | 'PullRequest'; number: number; crossRepo?: boolean;
  /** ConnectedEvent: the other item as `subject` and this one as `source` (GitHub fills either way round). */
  reversed?: boolean;
}

export interface FakeIssue {
  number: number; title: string; body: string; user: string; created_at: string;
  labels: string[]; reactions: Partial<Record<'+1' | '-1' | 'laugh' | 'hooray' | 'confused' | 'heart' | 'rocket' | 'eyes', number>>;
  comments: FakeUserText[]; refs: FakeRef[];
}

export interface FakePr {
  number: number; title: string; body: string; user: string; created_at: string; merged_at: string | null;
  mergeSha: string | null; labels: string[]; closes: number[]; refs: FakeRef[];
  comments: FakeUserText[]; reviewComments: FakeUserText[]; reviews: FakeReview[];
}

export interface FakeRepo { owner: string; name: string; pushedAt: string; issues: FakeIssue[]; prs: FakePr[] }

export interface RecordedRequest {
  method: string;
  /** Path and query. */
  path: string;
  /** Request headers; an authorization header's value is replaced by '<present>'. */
  headers: Record<string, string>;
  status: number;
  /** GraphQL variables, for POST /graphql. */
  variables?: Record<string, unknown>;
}

export type FaultKind = 'secondary-rate-limit' | 'rate-limit-429' | 'bad-gateway';
export interface Fault { kind: FaultKind; match?: (req: { method: string; path: string; variables?: Record<string, unknown> }) => boolean }

export interface FakeGithub {
  /** The API base URL (FORESIGHT_GITHUB_API_URL). */
  readonly url: string;
  /** The token the server accepts (any other gets 401). */
  readonly token: string;
  /** The served data: tests may change it between runs. */
  readonly repo: FakeRepo;
  readonly requests: RecordedRequest[];
  /** Queue faults: each is answered to the next request it matches, in order, once. */
  fault(...faults: Fault[]): void;
  pendingFaults(): number;
  reset(): void;
  close(): Promise<void>;
}

export const SECONDARY_LIMIT_MESSAGE =
  'You have exceeded a secondary rate limit. Please wait a few minutes before you try again. If you reach out to GitHub Support for help, please include the request ID 0000:1111:2222.';
const DOCS = 'https://docs.github.com/rest';

function etagOf(text: string): string {
  return `W/"${createHash('sha1').update(text).digest('hex')}"`;
}

export async function startFakeGithub(opts: { repo: FakeRepo; token?: string }): Promise<FakeGithub> {
  // A fake value, built so no scanner mistakes it for a real token.
  const token = opts.token ?? ['ghp', 'fakeTokenForTests0123456789'].join('_');
  const repo = opts.repo;
  const requests: RecordedRequest[] = [];
  const faults: Fault[] = [];
  let remaining = 5000;
  let url = '';

  const send = (res: ServerResponse, rec: RecordedRequest, status: number, body: unknown, headers: Record<string, string> = {}): void => {
    rec.status = status;
    requests.push(rec);
    const reset = String(Math.floor(Date.now() / 1000) + 3600);
    const limits = { 'x-ratelimit-limit': '5000', 'x-ratelimit-remaining': String(remaining), 'x-ratelimit-reset': reset, 'x-ratelimit-resource': rec.path.startsWith('/graphql') ? 'graphql' : 'core' };
    if (body === undefined) {
      res.writeHead(status, { ...limits, ...headers });
      res.end();
      return;
    }
    res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...limits, ...headers });
    res.end(JSON.stringify(body));
  };

  const answerFault = (res: ServerResponse, rec: RecordedRequest, kind: FaultKind): void => {
    if (kind === 'secondary-rate-limit') {
      send(res, rec, 403, { message: SECONDARY_LIMIT_MESSAGE, documentation_url: `${DOCS}/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits` }, { 'retry-after': '1' });
    } else if (kind === 'rate-limit-429') {
      const reset = String(Math.floor(Date.now() / 1000) + 1);
      send(res, rec, 429, { message: 'API rate limit exceeded for user ID 1.', documentation_url: `${DOCS}/overview/rate-limits-for-the-rest-api` }, { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': reset });
    } else {
      send(res, rec, 502, { message: 'Server Error' });
    }
  };

  const rest = (req: IncomingMessage, res: ServerResponse, rec: RecordedRequest, u: URL): void => {
    const m = /^\/repos\/([^/]+)\/([^/]+)\/(issues|pulls)\/(\d+)(?:\/(comments|reviews))?$/.exec(u.pathname);
    const notFound = () => send(res, rec, 404, { message: 'Not Found', documentation_url: DOCS, status: '404' });
    if (req.method !== 'GET' || !m || m[1] !== repo.owner || m[2] !== repo.name) return notFound();
    const [, , , kind, num, sub] = m;
    const n = Number(num);
    const pr = repo.prs.find((p) => p.number === n);
    const issue = repo.issues.find((i) => i.number === n);
    const html = `https://github.com/${repo.owner}/${repo.name}`;
    const user = (login: string) => ({ login, id: login.length, type: 'User' });
    let list: unknown[] | null = null;
    let single: unknown = null;
    if (kind === 'issues' && !sub && (issue || pr)) {
      const it = (issue ?? pr)!;
      const reactions = { url: `${url}/repos/${repo.owner}/${repo.name}/issues/${n}/reactions`, total_count: 0, '+1': 0, '-1': 0, laugh: 0, hooray: 0, confused: 0, heart: 0, rocket: 0, eyes: 0, ...(issue?.reactions ?? {}) };
      reactions.total_count = Object.entries(reactions).reduce((a, [k, v]) => (k === 'url' || k === 'total_count' ? a : a + Number(v)), 0);
      single = {
        number: n, title: it.title, body: it.body, user: user(it.user), state: 'closed', created_at: it.created_at,
        html_url: `${html}/${pr ? 'pull' : 'issues'}/${n}`, labels: it.labels.map((name) => ({ name, color: 'ededed' })),
        comments: it.comments.length, reactions,
        ...(pr ? { pull_request: { url: `${url}/repos/${repo.owner}/${repo.name}/pulls/${n}`, html_url: `${html}/pull/${n}`, merged_at: pr.merged_at } } : {}),
      };
    } else if (kind === 'issues' && sub === 'comments' && (issue || pr)) {
      list = (issue ?? pr)!.comments.map((c, i) => ({ id: n * 1000 + i, user: user(c.user), body: c.body, created_at: c.created_at, html_url: `${html}/issues/${n}#issuecomment-${n * 1000 + i}` }));
    } else if (kind === 'pulls' && sub === 'comments' && pr) {
      list = pr.reviewComments.map((c, i) => ({ id: n * 2000 + i, user: user(c.user), body: c.body, created_at: c.created_at, path: 'src/x.py', html_url: `${html}/pull/${n}#discussion_r${n * 2000 + i}` }));
    } else if (kind === 'pulls' && sub === 'reviews' && pr) {
      list = pr.reviews.map((r, i) => ({ id: n * 3000 + i, user: user(r.user), body: r.body, state: r.state, submitted_at: r.state === 'PENDING' ? undefined : r.created_at, html_url: `${html}/pull/${n}#pullrequestreview-${n * 3000 + i}` }));
    } else return notFound();

    let body: unknown = single;
    const headers: Record<string, string> = {};
    if (list) {
      const perPage = Math.min(100, Number(u.searchParams.get('per_page') ?? 30));
      const page = Number(u.searchParams.get('page') ?? 1);
      const last = Math.max(1, Math.ceil(list.length / perPage));
      body = list.slice((page - 1) * perPage, page * perPage);
      const link = (p: number, rel: string) => {
        const l = new URL(u.toString(), url);
        l.searchParams.set('page', String(p));
        return `<${url}${l.pathname}${l.search}>; rel="${rel}"`;
      };
      const links = [page < last ? link(page + 1, 'next') : '', page < last ? link(last, 'last') : '', page > 1 ? link(1, 'first') : '', page > 1 ? link(page - 1, 'prev') : ''].filter(Boolean);
      if (links.length) headers.link = links.join(', ');
    }
    const text = JSON.stringify(body);
    headers.etag = etagOf(text + (headers.link ?? ''));
    if (req.headers['if-none-match'] === headers.etag) return send(res, rec, 304, undefined, headers);
    remaining--;
    send(res, rec, 200, body, headers);
  };

  const refNodes = (self: { type: 'Issue' | 'PullRequest'; number: number }, refs: FakeRef[]) =>
    refs.map((r) =>
      r.event === 'CrossReferencedEvent'
        ? { __typename: r.event, isCrossRepository: r.crossRepo ?? false, source: { __typename: r.type, number: r.number } }
        : (() => {
            // GitHub's ConnectedEvent names both linked items; the other one may be either side.
            const other = { __typename: r.type, number: r.number };
            const me = { __typename: self.type, number: self.number };
            return { __typename: r.event, isCrossRepository: r.crossRepo ?? false, source: r.reversed ? me : other, subject: r.reversed ? other : me };
          })(),
    );

  const graphql = (res: ServerResponse, rec: RecordedRequest, body: { query?: string; variables?: Record<string, unknown> }): void => {
    const q = body.query ?? '';
    const v = body.variables ?? {};
    if (!/pullRequests\(/.test(q) || !/pageInfo\s*\{\s*hasNextPage\s+endCursor/.test(q)) return send(res, rec, 200, { errors: [{ message: 'fake-github: unsupported query' }] });
    if (v.owner !== repo.owner || v.name !== repo.name) {
      return send(res, rec, 200, { data: { repository: null }, errors: [{ type: 'NOT_FOUND', path: ['repository'], message: `Could not resolve to a Repository with the name '${v.owner}/${v.name}'.` }] });
    }
    const first = Number(v.first);
    if (!(first >= 1 && first <= 100)) return send(res, rec, 200, { errors: [{ message: `Requesting ${first} records on the \`pullRequests\` connection exceeds the \`first\` limit of 100 records.` }] });
    const merged = repo.prs.filter((p) => p.merged_at).sort((a, b) => a.created_at.localeCompare(b.created_at));
    const start = typeof v.after === 'string' ? Number(Buffer.from(v.after, 'base64').toString().split(':')[1]) + 1 : 0;
    const slice = merged.slice(start, start + first);
    const cursor = (i: number) => Buffer.from(`cursor:${i}`).toString('base64');
    const issueNode = (n: number) => {
      const i = repo.issues.find((x) => x.number === n)!;
      return { number: n, createdAt: i.created_at, url: `https://github.com/${repo.owner}/${repo.name}/issues/${n}`, title: i.title, timelineItems: { nodes: refNodes({ type: 'Issue', number: n }, i.refs) } };
    };
    remaining--;
    send(res, rec, 200, {
      data: {
        rateLimit: { cost: 1, remaining, resetAt: new Date(Date.now() + 3600_000).toISOString() },
        repository: {
          pushedAt: repo.pushedAt,
          pullRequests: {
            totalCount: merged.length,
            pageInfo: { hasNextPage: start + first < merged.length, endCursor: slice.length ? cursor(start + slice.length - 1) : null },
            nodes: slice.map((p) => ({
              number: p.number, title: p.title, body: p.body, createdAt: p.created_at, mergedAt: p.merged_at,
              author: { login: p.user }, mergeCommit: p.mergeSha ? { oid: p.mergeSha } : null,
              labels: { nodes: p.labels.map((name) => ({ name })) },
              closingIssuesReferences: { nodes: p.closes.map(issueNode) },
              timelineItems: { nodes: refNodes({ type: 'PullRequest', number: p.number }, p.refs) },
            })),
          },
        },
      },
    });
  };

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const u = new URL(req.url ?? '/', 'http://127.0.0.1');
      const headers: Record<string, string> = {};
      for (const [k, val] of Object.entries(req.headers)) if (typeof val === 'string') headers[k] = k === 'authorization' ? '<present>' : val;
      const rec: RecordedRequest = { method: req.method ?? '', path: u.pathname + u.search, headers, status: 0 };
      let body: { query?: string; variables?: Record<string, unknown> } = {};
      if (req.method === 'POST') {
        try {
          body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        } catch {
          return send(res, rec, 400, { message: 'Problems parsing JSON', documentation_url: DOCS });
        }
        rec.variables = body.variables;
      }
      const auth = req.headers.authorization;
      if (auth !== undefined && auth !== `token ${token}` && auth !== `bearer ${token}`) {
        return send(res, rec, 401, { message: 'Bad credentials', documentation_url: DOCS, status: '401' });
      }
      const head = faults[0];
      if (head && (!head.match || head.match({ method: rec.method, path: rec.path, variables: rec.variables }))) {
        faults.shift();
        return answerFault(res, rec, head.kind);
      }
      if (req.method === 'POST' && u.pathname === '/graphql') return graphql(res, rec, body);
      rest(req, res, rec, u);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    url, token, repo, requests,
    fault: (...f) => void faults.push(...f),
    pendingFaults: () => faults.length,
    reset() {
      requests.length = 0;
      faults.length = 0;
    },
    close: () => new Promise<void>((resolve, reject) => server.close((err) => (err ? reject(err) : resolve()))),
  };
}

/** A Logger that keeps what it is told (for asserting warnings). */
export function recordingLogger(): Logger & { lines: { level: Level; msg: string }[] } {
  const lines: { level: Level; msg: string }[] = [];
  const logger = {
    lines,
    debug: (msg: string) => void lines.push({ level: 'debug', msg }),
    info: (msg: string) => void lines.push({ level: 'info', msg }),
    warn: (msg: string) => void lines.push({ level: 'warn', msg }),
    error: (msg: string) => void lines.push({ level: 'error', msg }),
    progress: () => {},
    note: () => {},
    setup: () => () => {},
    child: () => logger,
    toFile: () => {},
  };
  return logger;
}
