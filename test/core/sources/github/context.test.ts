import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { commitChangeId } from '../../../../core/foundation/model/change.ts';
import { CommentSchema, LinkedIssueSchema } from '../../../../core/foundation/model/candidate.ts';
import { harness, sha, type Harness } from './fixture.ts';

const rest = (h: Harness) => h.fake.requests.filter((r) => r.method === 'GET');

describe('github source: context', () => {
  let h: Harness;
  beforeEach(async () => {
    h = await harness();
  });
  afterEach(async () => {
    await h.close();
  });

  it('returns comments of every kind across REST pages, oldest first', async () => {
    const input = h.input();
    const ctx = await h.source().context!(input, input.changes.find((c) => c.id === '8')!);
    for (const c of ctx.comments) CommentSchema.parse(c);
    expect(ctx.comments.map((c) => [c.kind, c.author, c.body])).toEqual([
      ['pr', 'dev', 'Ready for review.'],
      ['review_comment', 'maint', 'This regex misses tabs.'],
      ['review', 'maint', 'A few comments.'],
      ['pr', 'maint', 'Can you add a unicode test?'],
      ['review_comment', 'dev', 'Fixed.'],
      ['review_comment', 'maint', 'Nit: rename.'], // the empty-bodied review at the same time is left out
      ['pr', 'dev', 'Added.'],
      ['review', 'maint', 'LGTM'],
    ]);
    expect(ctx.comments.every((c) => c.number === 8 && c.url.startsWith('https://github.com/acme/widgets/'))).toBe(true);
    expect(ctx.comments[0]!.created_at).toBe('2024-01-12T11:00:00Z');
    // Three items at two per page: the second page of each list was followed through the Link header.
    for (const path of ['/issues/8/comments', '/pulls/8/comments', '/pulls/8/reviews']) {
      expect(rest(h).filter((r) => r.path.includes(`/repos/acme/widgets${path}`)).map((r) => new URL(r.path, h.fake.url).searchParams.get('page') ?? '1')).toEqual(['1', '2']);
    }
  });

  it('returns the closing, cross-referencing and mentioned issues with reactions and their comments', async () => {
    const input = h.input();
    const ctx = await h.source().context!(input, input.changes.find((c) => c.id === '8')!);
    for (const i of ctx.linkedIssues) LinkedIssueSchema.parse(i);
    expect(ctx.linkedIssues.map((i) => [i.number, i.ref_type])).toEqual([
      [6, 'closes'],
      [7, 'closes'],
      [13, 'cross-referenced'],
      [12, 'mentions'],
    ]); // "#2" in the body is a PR, not an issue: not fetched
    expect(rest(h).some((r) => r.path.startsWith('/repos/acme/widgets/issues/2'))).toBe(false);
    const six = ctx.linkedIssues[0]!;
    expect(six).toMatchObject({
      url: 'https://github.com/acme/widgets/issues/6',
      title: 'slugify produces empty segments',
      body: "Since #2, slugify('a  b') gives 'a--b'.",
      labels: ['bug'],
      created_at: '2024-01-10T10:00:00Z',
      reactions: { '+1': 5, '-1': 0, laugh: 0, hooray: 0, confused: 0, heart: 1, rocket: 0, eyes: 2 },
    });
    expect(six.comments.map((c) => [c.author, c.body])).toEqual([
      ['alice', 'Same here on 1.0.'],
      ['bob', 'Breaks our URLs.'],
      ['carol', 'Workaround: collapse spaces first.'],
    ]);
    expect(six.comments[0]!.url).toMatch(/^https:\/\/github\.com\/acme\/widgets\/issues\/6#issuecomment-/);
    expect(ctx.linkedIssues[1]!.reactions.laugh).toBe(1);
    expect(ctx.linkedIssues[1]!.comments).toHaveLength(1);
    expect(ctx.linkedIssues[2]!.comments).toEqual([]);
    // An issue without comments costs no comments request.
    expect(rest(h).some((r) => r.path.startsWith('/repos/acme/widgets/issues/13/comments'))).toBe(false);
  });

  it('answers a rerun from conditional requests: every REST GET is a 304, no body fetched again', async () => {
    const input = h.input();
    const eight = input.changes.find((c) => c.id === '8')!;
    const first = await h.source().context!(input, eight);
    const firstGets = rest(h);
    expect(firstGets.every((r) => r.status === 200 && !r.headers['if-none-match'])).toBe(true);
    h.fake.reset();

    const again = await h.source().context!(input, eight);
    expect(again).toEqual(first);
    const gets = rest(h);
    expect(gets.map((r) => r.path)).toEqual(firstGets.map((r) => r.path));
    expect(gets.every((r) => r.status === 304 && r.headers['if-none-match']?.startsWith('W/"'))).toBe(true);
    expect(gets.filter((r) => r.status === 200)).toHaveLength(0);
    expect(h.fake.requests.filter((r) => r.path === '/graphql')).toHaveLength(1); // the PR list: page 1 only
  });

  it('gives a change without a PR number no context, and finds a commit-only change by its merge commit', async () => {
    const input = h.input();
    const direct = input.changes.find((c) => c.id === commitChangeId(sha('z')))!;
    expect(await h.source().context!(input, direct)).toEqual({ comments: [], linkedIssues: [] });
    const docs = input.changes.find((c) => c.id === commitChangeId(sha('d5')))!;
    expect(await h.source().context!(input, docs)).toEqual({ comments: [], linkedIssues: [] });
    expect(rest(h).some((r) => r.path.startsWith('/repos/acme/widgets/issues/5/comments'))).toBe(true);
  });

  it('gives a PR GitHub does not know an empty context', async () => {
    const input = h.input();
    const ghost = { ...input.changes[0]!, id: '77', number: 77, mergeSha: sha('s77'), commits: [sha('s77')] };
    expect(await h.source().context!(input, ghost)).toEqual({ comments: [], linkedIssues: [] });
  });

  it('reads no #N mentions with a Trac tracker (they are tickets)', async () => {
    const input = h.input({ tracker: 'trac' });
    const ctx = await h.source().context!(input, input.changes.find((c) => c.id === '8')!);
    expect(ctx.linkedIssues.map((i) => i.ref_type)).not.toContain('mentions');
  });
});
