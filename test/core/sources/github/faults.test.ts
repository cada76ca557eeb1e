import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ForesightError } from '../../../../core/foundation/errors.ts';
import { createGithubSource } from '../../../../core/sources/github/index.ts';
import { harness, type Harness } from './fixture.ts';

const page2 = (r: { path: string; variables?: Record<string, unknown> }) => r.path === '/graphql' && typeof r.variables?.after === 'string';

describe('github source: rate limits and server errors', () => {
  let h: Harness;
  beforeEach(async () => {
    h = await harness();
  });
  afterEach(async () => {
    await h.close();
  });

  it('waits out a secondary rate limit and retries a 502 in the middle of pagination without losing a page', async () => {
    h.fake.fault({ kind: 'secondary-rate-limit', match: page2 }, { kind: 'bad-gateway', match: page2 });
    const result = await h.source().discover(h.input());
    expect(h.fake.pendingFaults()).toBe(0);
    const calls = h.fake.requests.filter((r) => r.path === '/graphql');
    expect(calls.map((r) => r.status)).toEqual([200, 403, 502, 200, 200]);
    // The retried page asked for the same cursor; the full list arrived.
    expect(calls[1]!.variables).toEqual(calls[3]!.variables);
    expect(result.references.get('16')?.[0]?.target).toBe('8');
    expect(Object.keys(Object.fromEntries(result.reportedAt!)).sort()).toEqual(['11', '16', '2', '4', '8']);
    expect(h.log.lines.filter((l) => l.level === 'warn').map((l) => l.msg)).toContainEqual(
      expect.stringMatching(/^GitHub secondary rate limit on POST \/graphql: waiting 1s before retry 1\/3$/),
    );
    expect(h.log.lines.some((l) => l.level === 'info' && /8 merged PRs \(3 pages/.test(l.msg))).toBe(true);
  });

  it('waits until x-ratelimit-reset on a 429 while paginating REST, and keeps every comment', async () => {
    const commentsPage2 = (r: { path: string }) => r.path.startsWith('/repos/acme/widgets/issues/8/comments') && r.path.includes('page=2');
    h.fake.fault({ kind: 'rate-limit-429', match: commentsPage2 }, { kind: 'bad-gateway', match: commentsPage2 });
    const input = h.input();
    const ctx = await h.source().context!(input, input.changes.find((c) => c.id === '8')!);
    expect(h.fake.pendingFaults()).toBe(0);
    expect(ctx.comments.filter((c) => c.kind === 'pr').map((c) => c.body)).toEqual(['Ready for review.', 'Can you add a unicode test?', 'Added.']);
    const warned = h.log.lines.filter((l) => l.level === 'warn').map((l) => l.msg);
    expect(warned).toContainEqual(expect.stringMatching(/^GitHub rate limit on GET .*: waiting [1-3]s before retry 1\/3$/));
  });

  it('gives up after the allowed retries with an external ForesightError naming the status and URL', async () => {
    const any = () => true;
    h.fake.fault(...Array.from({ length: 4 }, () => ({ kind: 'bad-gateway' as const, match: any })));
    const err = await h.source({ maxRetries: 2 }).discover(h.input()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ForesightError);
    const fe = err as ForesightError;
    expect(fe.external).toBe(true);
    expect(fe.message).toMatch(/^GitHub answered 502 to POST http:\/\/127\.0\.0\.1:\d+\/graphql after the allowed retries/);
    expect(h.fake.requests.map((r) => r.status)).toEqual([502, 502, 502]); // first try + 2 retries
  });

  it('gives up on a rate limit that outlasts the retries, as an external ForesightError', async () => {
    const any = () => true;
    h.fake.fault(...Array.from({ length: 5 }, () => ({ kind: 'secondary-rate-limit' as const, match: any })));
    const err = await h.source({ maxRetries: 2 }).discover(h.input()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ForesightError);
    expect((err as ForesightError).external).toBe(true);
    expect((err as ForesightError).message).toMatch(/kept rate-limiting POST .*\/graphql \(403\)/);
    expect(h.fake.requests.map((r) => r.status)).toEqual([403, 403, 403]);
  });

  it('reports an unreachable server as an external ForesightError after retrying', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const source = createGithubSource({ settings: { FORESIGHT_GITHUB_API_URL: `http://127.0.0.1:${port}` }, client: { secondMs: 1, graphqlSpacingMs: 0, maxRetries: 1 } });
    const err = await source.discover(h.input()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ForesightError);
    expect((err as ForesightError).external).toBe(true);
    expect((err as ForesightError).message).toMatch(/^Could not reach GitHub for POST http:\/\/127\.0\.0\.1:\d+\/graphql/);
  });
});
