import { inspect } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { commitChangeId } from '../../../../core/foundation/model/change.ts';
import { ForesightError } from '../../../../core/foundation/errors.ts';
import { createGithubSource, githubSource, NO_TOKEN_REASON } from '../../../../core/sources/github/index.ts';
import { harness, sha, type Harness } from './fixture.ts';

const graphqlCalls = (h: Harness) => h.fake.requests.filter((r) => r.path === '/graphql');

describe('github source: discover', () => {
  let h: Harness;
  beforeEach(async () => {
    h = await harness();
  });
  afterEach(async () => {
    await h.close();
  });

  it('is available with a token, or against a loopback test server; otherwise says why not', () => {
    const s = createGithubSource();
    expect(s.available({}, { repo: 'acme/widgets', tracker: 'github' })).toEqual({ ok: false, reason: NO_TOKEN_REASON });
    expect(s.available({ FORESIGHT_GITHUB_API_URL: 'https://ghe.example.com/api/v3' }, { repo: 'acme/widgets', tracker: 'github' }).ok).toBe(false);
    expect(s.available({ GITHUB_TOKEN: 'x' }, { repo: 'acme/widgets', tracker: 'github' })).toEqual({ ok: true });
    expect(s.available({ FORESIGHT_GITHUB_API_URL: h.fake.url }, { repo: 'acme/widgets', tracker: 'github' })).toEqual({ ok: true });
    expect(githubSource.name).toBe('github');
  });

  it('lists every merged PR over several GraphQL pages and links them to the history', async () => {
    const result = await h.source().discover(h.input());
    // 8 merged PRs at 3 per page: 3 pages, each following the previous page's endCursor.
    const calls = graphqlCalls(h);
    expect(calls.map((c) => c.variables?.after ?? null)).toHaveLength(3);
    expect(calls[0]!.variables).toMatchObject({ owner: 'acme', name: 'widgets', first: 3, after: null });
    expect(calls.every((c) => c.status === 200 && c.headers.authorization === '<present>')).toBe(true);
    expect(h.log.lines.some((l) => l.level === 'info' && /8 merged PRs \(3 pages, 3 fetched, 0 from cache\), 7 matched/.test(l.msg))).toBe(true);

    // Later PRs that cross-reference an earlier one (directly, through its closed issue, or by closing it again).
    const refs = Object.fromEntries([...result.references].map(([id, rs]) => [id, rs.map((r) => [r.kind, r.target, r.source])]));
    expect(refs).toEqual({
      '8': [['cross_reference', '2', 'github']],
      '11': [['cross_reference', '4', 'github']],
      '16': [['cross_reference', '8', 'github']],
    });
    expect(result.references.get('8')![0]).toEqual({ kind: 'cross_reference', target: '2', sha: null, text: '#8 cross-references #2', source: 'github' });
    expect(result.references.get('11')![0]!.text).toBe('#11 is connected to issue #3, which #4 closed');
    expect(result.references.get('10')).toBeUndefined(); // referenced by the earlier #8 and by another repository only

    // The earliest issue each PR closes.
    expect(Object.fromEntries(result.reportedAt!)).toEqual({
      '2': '2024-01-01T10:00:00Z',
      '4': '2024-01-03T10:00:00Z',
      '8': '2024-01-10T10:00:00Z',
      '11': '2024-01-14T10:00:00Z',
      '16': '2024-01-11T10:00:00Z',
    });
    // PR numbers only for changes the history knows as commits.
    expect(Object.fromEntries(result.prNumbers!)).toEqual({ [commitChangeId(sha('d5'))]: 5 });
  });

  it('costs one request on a rerun when the repository did not change, one per page when it did', async () => {
    await h.source().discover(h.input());
    h.fake.reset();
    const again = await h.source().discover(h.input());
    expect(graphqlCalls(h)).toHaveLength(1);
    expect(again.references.get('8')?.[0]?.target).toBe('2');

    // A new merged PR (a push): every page is asked for again, and the new PR is seen.
    h.fake.repo.pushedAt = '2024-02-01T00:00:00Z';
    h.fake.repo.prs.push({
      number: 20, title: 'Fix slugify again', body: '', user: 'dev', created_at: '2024-02-01T00:00:00Z', merged_at: '2024-02-01T01:00:00Z',
      mergeSha: sha('s20'), labels: [], closes: [6], refs: [], comments: [], reviewComments: [], reviews: [],
    });
    h.fake.reset();
    const changes = [...h.input().changes, { ...h.input().changes[0]!, id: '20', number: 20, mergeSha: sha('s20'), commits: [sha('s20')] }];
    const third = await h.source().discover(h.input({ changes }));
    expect(graphqlCalls(h)).toHaveLength(3);
    expect(third.references.get('20')?.map((r) => r.target)).toEqual(['8']);
  });

  it('turns a rejected token into a ForesightError that never shows the token', async () => {
    const wrong = ['ghp', 'wrongTokenValue987654321'].join('_');
    const err = await h.source({ token: wrong }).discover(h.input()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ForesightError);
    expect((err as ForesightError).message).toMatch(/GitHub rejected GITHUB_TOKEN/);
    expect((err as ForesightError).remedy).toMatch(/GITHUB_TOKEN/);
    expect(h.fake.requests.map((r) => r.status)).toEqual([401]); // not retried
    expect(inspect(err, { depth: 8 })).not.toContain(wrong);
    expect(JSON.stringify(h.log.lines)).not.toContain(wrong);
  });

  it('names owner/name when GitHub has no such repository', async () => {
    const err = await h.source().discover(h.input({ repo: 'acme/nope' })).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ForesightError);
    expect((err as ForesightError).message).toContain('acme/nope');
    expect((err as ForesightError).remedy).toContain('acme/nope');
  });

  it('keeps the token out of every cache file', async () => {
    const s = h.source();
    const input = h.input();
    await s.discover(input);
    await s.context!(input, input.changes.find((c) => c.id === '8')!);
    const files = await h.cacheFiles();
    expect(files.length).toBeGreaterThan(5);
    expect(files.some((f) => f.path.endsWith('.incomplete'))).toBe(false);
    for (const f of files) {
      expect(f.text).not.toContain(h.fake.token);
      expect(f.path).not.toContain(h.fake.token);
    }
  });
});
