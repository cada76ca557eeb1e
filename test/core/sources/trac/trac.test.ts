import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../../../core/foundation/log.ts';
import { CommentSchema } from '../../../../core/foundation/model/candidate.ts';
import {
  createTracSource,
  fixedReopenings,
  htmlToText,
  parseTicketCsv,
  parseTicketRss,
  parseTracTime,
  reopenLinks,
  TracClient,
} from '../../../../core/sources/trac/index.ts';
import type { SourceInput } from '../../../../core/sources/types.ts';
import { renderCsv, renderRss, startFakeTrac, type FakeTrac } from '../../../helpers/fake-trac.ts';
import { C, CHANGES, TICKETS } from './fixtures.ts';

const http = { baseDelayMs: 5, maxDelayMs: 5_000, timeoutMs: 5_000 };

describe('Trac exports: parsing', () => {
  it('reads the time forms the CSV export uses, as UTC ISO', () => {
    expect(parseTracTime('2019-03-01T10:12:37Z')).toBe('2019-03-01T10:12:37Z');
    expect(parseTracTime('2019-03-01T11:12:37+01:00')).toBe('2019-03-01T10:12:37Z');
    expect(parseTracTime('Mar 1, 2019, 10:12:37\u202fPM')).toBe('2019-03-01T22:12:37Z');
    expect(parseTracTime('Mar 1, 2019 12:05:00 AM')).toBe('2019-03-01T00:05:00Z');
    expect(parseTracTime('Sep 30, 2005, 12:00:01 PM')).toBe('2005-09-30T12:00:01Z');
    expect(parseTracTime('03/01/19 10:12:37')).toBe('2019-03-01T10:12:37Z');
    expect(parseTracTime('07/13/05 12:03:27')).toBe('2005-07-13T12:03:27Z');
    expect(parseTracTime('')).toBeNull();
    expect(parseTracTime('3 years ago')).toBeNull();
  });

  it('parses a CSV with a BOM, CRLF, labels in the header and quoted cells', () => {
    const csv = renderCsv(TICKETS, ['id', 'summary', 'status', 'type', 'component', 'resolution', 'time', 'changetime', 'reporter'], true);
    expect(csv.startsWith('\ufeffid,Summary,Status,Type,Component,Resolution,Created,Modified,Reporter\r\n')).toBe(true);
    const { tickets, unreadableTimes } = parseTicketCsv(csv);
    expect(unreadableTimes).toBe(0);
    const t = tickets.find((x) => x.id === 30002)!;
    expect(t).toMatchObject({ summary: 'EmailValidator accepts trailing newline, "foo@example.com\\n"', type: 'Bug', reporter: 'Zoë Reporter', time: '2019-02-20T22:10:05Z' });
    // Older Trac: field names in the header, strftime times.
    const old = parseTicketCsv('\ufeffid,summary,time,changetime\r\n7,"a, b",07/13/05 12:03:27,07/14/05 01:00:00\r\n');
    expect(old.tickets[0]).toMatchObject({ id: 7, summary: 'a, b', time: '2005-07-13T12:03:27Z', changetime: '2005-07-14T01:00:00Z' });
  });

  it('parses a ticket feed: description, authors, dates, property changes and the commit hook changesets', () => {
    const feed = parseTicketRss(renderRss(TICKETS[0]!, 'https://code.example.org'));
    expect(feed.title).toBe('Django: Ticket #30000: QuerySet.union() crashes with ordering by an annotated field');
    expect(feed.description).toContain('Using QuerySet.union() with order_by() on an annotation crashes & the error is “confusing”:');
    expect(feed.description).toContain("qs1.union(qs2).order_by('-num')");
    expect(feed.description).toContain('café');
    expect(feed.description).not.toMatch(/<\w+/);
    expect(feed.events.map((e) => e.cnum)).toEqual([1, 2, 3, 4, 5]);
    expect(feed.events[1]).toMatchObject({ author: 'Tim Graham <timograham@…>', date: '2018-12-01T10:00:30Z', fields: { status: { old: 'assigned', new: 'closed' }, resolution: { old: '', new: 'fixed' } } });
    expect(feed.events[1]!.changesets).toContain('a1a1a1a1a1' + '0'.repeat(30));
    expect(feed.events[1]!.comment).toMatch(/^In a1a1a1a:\n\nFixed #30000 -- Fixed crash/);
    expect(feed.events[2]!.fields).toEqual({ status: { old: 'closed', new: 'new' }, resolution: { old: 'fixed', new: '' } });
    expect(feed.events[2]!.title).toBe('status changed; resolution deleted');
    expect(feed.events[3]!.comment).toBe('');
  });

  it('counts only reopenings of a ticket closed as fixed', () => {
    const feed = (id: number) => parseTicketRss(renderRss(TICKETS.find((t) => t.id === id)!, 'https://t.example'));
    expect(fixedReopenings(feed(30000)).map((r) => [r.index, r.event.date])).toEqual([[2, '2019-01-10T08:20:00Z']]);
    expect(fixedReopenings(feed(29999))).toEqual([]); // reopened after a wontfix
    expect(fixedReopenings(feed(30002))).toEqual([]);
  });

  it('places changes by svn revision or, without hook comments, by date', () => {
    const ev = (date: string, fields: Record<string, { old: string; new: string }>, commentHtml = '') => ({
      author: 'x', date, title: '', link: '', cnum: null, fields, commentHtml, comment: '', changesets: parseTicketRss(renderRss({ ...TICKETS[0]!, events: [{ author: 'x', date, cnum: 1, commentHtml }] }, 'https://t')).events[0]!.changesets,
    });
    const feed = {
      title: '', link: '', descriptionHtml: '', description: '',
      events: [
        ev('2010-01-02T00:00:00Z', { status: { old: 'new', new: 'closed' }, resolution: { old: '', new: 'fixed' } }, '<p>(In [12001]) Fixed #9 -- first.</p>'),
        ev('2010-02-01T00:00:00Z', { status: { old: 'closed', new: 'reopened' }, resolution: { old: 'fixed', new: '' } }),
        ev('2010-03-01T00:00:00Z', { status: { old: 'reopened', new: 'closed' }, resolution: { old: '', new: 'fixed' } }),
      ],
    };
    const namers = [
      { change: { id: 'first', mergedAt: '2009-12-31T00:00:00Z' }, order: 0, fixed: true },
      { change: { id: 'second', mergedAt: '2010-02-20T00:00:00Z' }, order: 1, fixed: true },
    ];
    const { links, reportedAt } = reopenLinks(9, feed, namers, (rev) => (rev === '12001' ? 'first' : null));
    expect(links).toEqual([{ ticket: 9, later: 'second', laterFixed: true, earlier: 'first', reopenedAt: '2010-02-01T00:00:00Z', reopenedBy: 'x', placedBy: 'date', statusChange: 'closed → reopened' }]);
    expect(Object.fromEntries(reportedAt)).toEqual({ second: '2010-02-01T00:00:00Z' });
    // A change dated before the reopening is not a fix of it.
    expect(reopenLinks(9, feed, [namers[0]!, { ...namers[1]!, change: { id: 'second', mergedAt: '2010-01-20T00:00:00Z' } }], () => null).links).toEqual([]);
  });

  it('strips HTML to text without decoding twice', () => {
    expect(htmlToText('<p>a &amp;lt; b</p><ul><li>one</li><li>two</li></ul>')).toBe('a &lt; b\n\n- one\n- two');
  });

  it('groups ids into stable id-range batches', () => {
    const client = new TracClient({ baseUrl: 'https://t.example/', cache: null as never, log: silentLogger, batchSize: 100 });
    expect(client.batches([30002, 29999, 30000, 30001, 30000])).toEqual([[29999], [30000, 30001, 30002]]);
    expect(client.csvUrl([1, 2])).toBe('https://t.example/query?format=csv&id=1%7C2&col=id&col=summary&col=status&col=type&col=component&col=resolution&col=time&col=changetime&col=reporter&max=0&order=id');
  });
});

describe('Trac source against a fake Trac', () => {
  let trac: FakeTrac;
  let root: string;
  beforeAll(async () => {
    trac = await startFakeTrac(TICKETS);
    root = await mkdtemp(join(tmpdir(), 'foresight-trac-'));
  });
  afterAll(async () => {
    await trac.close();
    await rm(root, { recursive: true, force: true });
  });
  afterEach(() => trac.reset());

  const input = (cacheDir: string): SourceInput => ({
    settings: {}, repo: 'django/django', clone: '/nonexistent', branch: 'main', changes: CHANGES, cacheDir, log: silentLogger, tracker: 'trac',
  });
  const source = (extra: Parameters<typeof createTracSource>[0] = {}) => createTracSource({ settings: { FORESIGHT_TRAC_URL: trac.baseUrl + '/' }, http, ...extra });

  it('is available only for a Trac history with a configured site', () => {
    const s = createTracSource();
    expect(s.available({ FORESIGHT_TRAC_URL: 'https://code.djangoproject.com' }, { repo: 'django/django', tracker: 'trac' })).toEqual({ ok: true });
    const noUrl = s.available({}, { repo: 'django/django', tracker: 'trac' });
    expect(noUrl.ok).toBe(false);
    expect(!noUrl.ok && noUrl.reason).toMatch(/FORESIGHT_TRAC_URL is not set/);
    expect(s.available({ FORESIGHT_TRAC_URL: 'https://code.djangoproject.com' }, { repo: 'psf/requests', tracker: 'github' }).ok).toBe(false);
    expect(s.available({ FORESIGHT_TRAC_URL: 'ftp://x' }, { repo: 'django/django', tracker: 'trac' }).ok).toBe(false);
  });

  it('gives each change the creation time of the earliest ticket it fixes, and the reopening for a fix after a reopen', async () => {
    const res = await source().discover(input(join(root, 'a')));
    expect(Object.fromEntries(res.reportedAt!)).toEqual({
      [C('a1').id]: '2018-11-20T09:15:00Z',
      [C('c3').id]: '2019-01-10T08:20:00Z', // #30000 was reopened then: that is when this defect was reported
      [C('d4').id]: '2019-02-01T13:00:00Z',
      [C('e5').id]: '2019-02-20T22:10:05Z',
      [C('f6').id]: '2018-11-01T07:00:00Z',
    });
  });

  it('links the change that fixed a reopened Bug ticket again to the change whose fix was reopened, and nothing else', async () => {
    const res = await source().discover(input(join(root, 'b')));
    expect([...res.references.keys()]).toEqual([C('c3').id]);
    const [ref] = res.references.get(C('c3').id)!;
    expect(ref).toMatchObject({ kind: 'refs', target: C('a1').id, sha: C('a1').mergeSha, source: 'trac' });
    expect(ref!.text).toMatch(/^Trac #30000 \(Bug\) reopened 2019-01-10T08:20:00Z by John Doe \(status closed → new\) after a1a1a1a1a1 fixed it/);
    expect(ref!.text).toMatch(/placed by changeset/);
    // Feeds were read only for Bug tickets a change names after a change fixed them: #30000, and #30002 (not reopened).
    const feeds = trac.requests.filter((r) => r.path.startsWith('/ticket/')).map((r) => r.path).sort();
    expect(feeds).toEqual(['/ticket/30000', '/ticket/30002']);
  });

  it('reads tickets in bulk CSV queries batched by id range', async () => {
    await source({ batchSize: 2 }).discover(input(join(root, 'c')));
    const csv = trac.requests.filter((r) => r.path === '/query');
    expect(csv.every((r) => r.query.get('format') === 'csv' && r.query.get('max') === '0')).toBe(true);
    expect(csv.every((r) => r.headers['accept-language']?.startsWith('en'))).toBe(true);
    expect(csv.map((r) => r.query.get('id')).sort()).toEqual(['29999', '30000|30001', '30002']);
    expect(csv[0]!.query.getAll('col')).toEqual(['id', 'summary', 'status', 'type', 'component', 'resolution', 'time', 'changetime', 'reporter']);
    trac.reset();
    await source().discover(input(join(root, 'c2')));
    expect(trac.requests.filter((r) => r.path === '/query').map((r) => r.query.get('id')).sort()).toEqual(['29999', '30000|30001|30002']);
  });

  it('revalidates its cache on a rerun: every request is conditional and answered 304', async () => {
    const dir = join(root, 'd');
    const first = await source().discover(input(dir));
    const firstCount = trac.requests.length;
    expect(trac.count(200)).toBe(firstCount);
    trac.reset();
    const again = await source().discover(input(dir));
    expect(trac.requests.length).toBe(firstCount);
    expect(trac.count(304)).toBe(firstCount);
    expect(trac.requests.every((r) => typeof r.headers['if-none-match'] === 'string')).toBe(true);
    expect(again).toEqual(first);
    // Writes are atomic: no temp files left behind.
    const shards = await readdir(join(dir, 'http'));
    for (const s of shards) expect((await readdir(join(dir, 'http', s))).filter((f) => f.endsWith('.incomplete'))).toEqual([]);
  });

  it('retries a 503, honouring Retry-After', async () => {
    trac.failOnce((path) => path === '/query', 503, { 'retry-after': '1' });
    trac.failOnce((path) => path === '/ticket/30000', 502);
    const started = Date.now();
    const res = await source().discover(input(join(root, 'e')));
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
    expect(trac.count(503)).toBe(1);
    expect(trac.count(502)).toBe(1);
    const queries = trac.requests.filter((r) => r.path === '/query');
    expect(queries[0]!.status).toBe(503);
    expect(queries.filter((r) => r.url === queries[0]!.url).map((r) => r.status)).toEqual([503, 200]);
    expect(res.references.get(C('c3').id)).toHaveLength(1);
  });

  it('fails with a ForesightError when Trac keeps failing', async () => {
    for (let i = 0; i < 3; i++) trac.failOnce((path, q) => path === '/query' && q.get('id') === '30000|30001|30002', 500);
    const s = source({ http: { ...http, retries: 2 } });
    await expect(s.discover(input(join(root, 'f')))).rejects.toMatchObject({ name: 'ForesightError', external: true, message: expect.stringMatching(/failed after 3 attempts: HTTP 500/) });
  });

  it('gives a change its tickets as trac_ticket comments: the description, then each comment', async () => {
    const s = source();
    const dir = join(root, 'g');
    await s.discover(input(dir));
    trac.reset();
    const ctx = await s.context!(input(dir), C('c3'));
    expect(ctx.linkedIssues).toEqual([]);
    for (const c of ctx.comments) CommentSchema.parse(c);
    expect(ctx.comments.map((c) => c.url)).toEqual([
      `${trac.baseUrl}/ticket/30000`,
      ...[1, 2, 3, 5].map((k) => `${trac.baseUrl}/ticket/30000#comment:${k}`), // #4 only changed properties
    ]);
    expect(ctx.comments.every((c) => c.kind === 'trac_ticket' && c.number === 30000)).toBe(true);
    const [desc, , , reopen] = ctx.comments;
    expect(desc).toMatchObject({ author: 'Jane Roe', created_at: '2018-11-20T09:15:00Z' });
    expect(desc!.body).toContain('DatabaseError: ORDER BY term does not match any column');
    expect(reopen).toMatchObject({ author: 'John Doe', created_at: '2019-01-10T08:20:00Z', body: 'This still crashes when the annotation is a Subquery, see attached test.' });
    // The ticket row came from discover's index: only the feed was asked for.
    expect(trac.requests.map((r) => r.path)).toEqual(['/ticket/30000']);

    // A change that only refers to a ticket gets that ticket; a change without tickets gets nothing.
    expect((await s.context!(input(dir), C('b2'))).comments[0]).toMatchObject({ number: 29999, author: 'Old Reporter' });
    expect((await s.context!(input(dir), C('0707'))).comments).toEqual([]);
  });

  it('skips a ticket Trac does not know', async () => {
    const s = source();
    const ghost = { ...C('a1'), id: 'ghost00000', title: 'Fixed #40404 -- Nothing.' };
    const dir = join(root, 'h');
    const res = await s.discover({ ...input(dir), changes: [ghost] });
    expect(res.reportedAt!.size).toBe(0);
    expect((await s.context!(input(dir), ghost)).comments).toEqual([]);
  });
});
