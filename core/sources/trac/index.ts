import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { PullRequest } from '../../foundation/model/change.ts';
import { ForesightError } from '../../foundation/errors.ts';
import type { Comment, Reference } from '../../foundation/model/candidate.ts';
import { tracTickets } from '../git/find-references.ts';
import { commitToChange, prefixLookup } from '../../history/changes.ts';
import { writeAtomic } from '../../foundation/artifacts.ts';
import { HttpCache } from '../../http/fetch-cache.ts';
import type { RetryOptions } from '../../http/retry.ts';
import type { ChangeContext, Source, SourceInput, SourceResult, SourceSettings } from '../types.ts';
import { TracClient } from './client.ts';
import { isBugType, type TracTicket } from './csv.ts';
import { reopenLinks, type Namer } from './reopen.ts';

export { TracClient } from './client.ts';
export { isBugType, parseTicketCsv, parseTracTime, type TracTicket } from './csv.ts';
export { htmlToText } from './html.ts';
export { fixedReopenings, reopenLinks, type ReopenLink } from './reopen.ts';
export { parseTicketRss, type TicketEvent, type TicketFeed } from './rss.ts';

export interface TracSourceOptions {
  /** FORESIGHT_TRAC_URL and FORESIGHT_TRAC_MAX_AGE_SEC (default: the run's settings, SourceInput.settings). */
  settings?: SourceSettings;
  /** Ticket ids per CSV query (id-range buckets). Default 100. */
  batchSize?: number;
  /** Requests in flight at once. Default 4. */
  concurrency?: number;
  /**
   * Serve cached answers younger than this without a request (see TracClientOptions.maxAgeMs). Default:
   * FORESIGHT_TRAC_MAX_AGE_SEC, else 0 (every answer is revalidated).
   */
  maxAgeMs?: number;
  /** Retry/timeout settings and an injectable fetch (tests). */
  http?: Omit<RetryOptions, 'log' | 'signal'>;
}

/** The ticket rows discover fetched, kept next to the HTTP cache so context() finds them without a query. */
const INDEX_FILE = 'tickets.json';

/** A base URL for the Trac site, or a reason why there is none. */
export function tracBaseUrl(env: SourceSettings): { ok: true; url: string } | { ok: false; reason: string } {
  const raw = env.FORESIGHT_TRAC_URL?.trim();
  if (!raw) return { ok: false, reason: 'FORESIGHT_TRAC_URL is not set (the Trac site, e.g. https://code.djangoproject.com)' };
  try {
    const u = new URL(raw);
    if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error('not http(s)');
  } catch {
    return { ok: false, reason: `FORESIGHT_TRAC_URL=${raw} is not an http(s) URL` };
  }
  return { ok: true, url: raw.replace(/\/+$/, '') };
}

/** Tickets a change's message fixes ("Fixed #N") and refers to ("Refs #N"), each once. */
export function ticketsOf(change: Pick<PullRequest, 'title' | 'body'>): { fixed: number[]; refs: number[] } {
  const { fixed, refs } = tracTickets(`${change.title}\n${change.body}`);
  const f = [...new Set(fixed)];
  return { fixed: f, refs: [...new Set(refs)].filter((n) => !f.includes(n)) };
}

/** svn revision -> change, from the "git-svn-id: <url>@<rev> <uuid>" trailers of histories converted from Subversion. */
function svnRevisions(changes: readonly PullRequest[]): Map<string, string> {
  const out = new Map<string, string>();
  for (const c of changes) {
    const m = /^git-svn-id: \S+@(\d+) /m.exec(c.body);
    if (m) out.set(m[1]!, c.id);
  }
  return out;
}

/**
 * Trac tickets around the changes (Django's "Fixed #N -- " / "Refs #N -- "):
 *  - discover: report times (ticket creation, from batched CSV queries) and, for Bug tickets reopened
 *    after a fix, a `refs` reference from the change that fixed the ticket again to the change whose fix
 *    was reopened (read from the ticket's RSS: the status change and the commit hook's "In <sha>:" comments);
 *  - context: the ticket description and comments as pr_comments of kind trac_ticket.
 * Every answer goes through an on-disk HTTP cache revalidated with ETag / Last-Modified.
 */
export function createTracSource(opts: TracSourceOptions = {}): Source {
  const caches = new Map<string, HttpCache>();
  const indexes = new Map<string, Promise<Map<number, TracTicket>>>();

  const clientFor = (input: SourceInput): TracClient => {
    const settings = opts.settings ?? input.settings;
    const base = tracBaseUrl(settings);
    if (!base.ok) throw new ForesightError(`the Trac source cannot run: ${base.reason}`, { remedy: 'set FORESIGHT_TRAC_URL or leave the Trac source out' });
    const dir = join(input.cacheDir, 'http');
    let cache = caches.get(dir);
    if (!cache) {
      cache = new HttpCache({ dir, concurrency: opts.concurrency ?? 4, userAgent: 'foresight (Trac ticket reader)', log: input.log, ...opts.http });
      caches.set(dir, cache);
    }
    const maxAgeSec = Number(settings.FORESIGHT_TRAC_MAX_AGE_SEC ?? 0);
    const maxAgeMs = opts.maxAgeMs ?? (Number.isFinite(maxAgeSec) && maxAgeSec > 0 ? maxAgeSec * 1000 : 0);
    return new TracClient({ baseUrl: base.url, cache, log: input.log, batchSize: opts.batchSize, maxAgeMs, signal: input.signal });
  };

  const readIndex = (cacheDir: string): Promise<Map<number, TracTicket>> => {
    let p = indexes.get(cacheDir);
    if (!p) {
      p = readFile(join(cacheDir, INDEX_FILE), 'utf8')
        .then((t) => new Map<number, TracTicket>((JSON.parse(t) as { tickets: TracTicket[] }).tickets.map((x) => [x.id, x])))
        .catch(() => new Map<number, TracTicket>());
      indexes.set(cacheDir, p);
    }
    return p;
  };

  return {
    name: 'trac',

    available(e, { tracker }) {
      if (tracker !== 'trac') return { ok: false, reason: `the history does not follow Trac conventions ("Fixed #N -- "), tracker is ${tracker}` };
      const base = tracBaseUrl(e);
      return base.ok ? { ok: true } : { ok: false, reason: base.reason };
    },

    async discover(input: SourceInput): Promise<SourceResult> {
      const { changes, log } = input;
      const client = clientFor(input);
      const cache = caches.get(join(input.cacheDir, 'http'))!;
      const before = { ...cache.stats };
      const named = new Map<string, { fixed: number[]; refs: number[] }>();
      const namers = new Map<number, Namer[]>();
      changes.forEach((c, order) => {
        const t = ticketsOf(c);
        if (!t.fixed.length && !t.refs.length) return;
        named.set(c.id, t);
        for (const [list, fixed] of [[t.fixed, true], [t.refs, false]] as const) {
          for (const n of list) {
            let l = namers.get(n);
            if (!l) namers.set(n, (l = []));
            l.push({ change: c, order, fixed });
          }
        }
      });
      const fixedIds = new Set([...named.values()].flatMap((t) => t.fixed));
      const tickets = await client.tickets(fixedIds);
      const missing = [...fixedIds].filter((n) => !tickets.has(n));
      if (missing.length) log.debug(`${missing.length} fixed tickets not returned by Trac (deleted or hidden)`, { sample: missing.slice(0, 10) });

      // Keep the rows for context(), merged with what earlier runs fetched.
      const index = new Map(await readIndex(input.cacheDir));
      for (const [id, t] of tickets) index.set(id, t);
      await writeAtomic(join(input.cacheDir, INDEX_FILE), JSON.stringify({ tickets: [...index.values()].sort((a, b) => a.id - b.id) }));
      indexes.set(input.cacheDir, Promise.resolve(index));

      // Reopened Bug tickets.
      const byCommit = commitToChange(changes);
      const byId = new Map(changes.map((c) => [c.id, c]));
      const sorted = [...byCommit.keys()].sort();
      const svn = svnRevisions(changes);
      const resolveChangeset = (rev: string): string | null => {
        if (/^\d{1,6}$/.test(rev) && svn.has(rev)) return svn.get(rev)!;
        if (rev.length < 7) return null;
        const sha = prefixLookup(sorted, rev);
        return sha ? byCommit.get(sha) ?? null : null;
      };
      // A feed is read only when some change names the ticket after a change that fixed it.
      const reopenCandidates = [...namers.entries()].filter(([n, list]) => {
        const last = Math.max(...list.map((x) => x.order));
        return list.some((x) => x.fixed && x.order < last) && isBugType(tickets.get(n)?.type ?? '');
      });
      const references = new Map<string, Reference[]>();
      const reopenedAt = new Map<string, Map<number, string>>();
      let reopened = 0;
      await Promise.all(
        reopenCandidates.map(async ([n, list]) => {
          const feed = await client.feed(n);
          if (!feed) return;
          const { links, reportedAt } = reopenLinks(n, feed, list, resolveChangeset);
          if (links.length) reopened++;
          for (const l of links) {
            const earlier = byId.get(l.earlier)!;
            const refs = references.get(l.later) ?? [];
            if (refs.some((r) => r.target === l.earlier)) continue;
            refs.push({
              kind: 'refs',
              target: l.earlier,
              sha: earlier.mergeSha,
              text: `Trac #${n} (Bug) reopened ${l.reopenedAt ?? ''} by ${l.reopenedBy || 'unknown'} (status ${l.statusChange}) after ${earlier.mergeSha.slice(0, 10)} fixed it; ${l.laterFixed ? 'fixed again' : 'referred to'} here (placed by ${l.placedBy})`.replace(/ {2,}/g, ' '),
              source: 'trac',
            });
            references.set(l.later, refs);
          }
          for (const [id, at] of reportedAt) {
            let m = reopenedAt.get(id);
            if (!m) reopenedAt.set(id, (m = new Map()));
            m.set(n, at);
          }
        }),
      );
      // Deterministic order whatever order the feeds arrived in.
      for (const refs of references.values()) refs.sort((a, b) => (a.text < b.text ? -1 : a.text > b.text ? 1 : 0));

      // Report time: the earliest ticket a change fixes was opened (or, for a fix after a reopening, reopened).
      const reportedAt = new Map<string, string>();
      for (const [id, t] of named) {
        let best: string | null = null;
        for (const n of t.fixed) {
          const at = reopenedAt.get(id)?.get(n) ?? tickets.get(n)?.time ?? null;
          if (at && (best === null || at < best)) best = at;
        }
        if (best) reportedAt.set(id, best);
      }
      log.info(
        `Trac: ${tickets.size}/${fixedIds.size} fixed tickets read, ${reportedAt.size} changes with a report time, ${reopened} reopened Bug tickets linking ${references.size} changes` +
          ` (${cache.stats.requests - before.requests} requests, ${cache.stats.notModified - before.notModified} not modified, ${cache.stats.fresh - before.fresh} served from cache)`,
      );
      return { references, reportedAt };
    },

    async context(input: SourceInput, change: PullRequest): Promise<ChangeContext> {
      const client = clientFor(input);
      const t = ticketsOf(change);
      const ids = t.fixed.length ? t.fixed : t.refs;
      const comments: Comment[] = [];
      if (!ids.length) return { comments, linkedIssues: [] };
      const index = await readIndex(input.cacheDir);
      const absent = ids.filter((n) => !index.has(n));
      const rows = absent.length ? await client.tickets(absent) : new Map<number, TracTicket>();
      const feeds = await Promise.all(ids.map((n) => client.feed(n)));
      ids.forEach((n, i) => {
        const feed = feeds[i];
        const row = index.get(n) ?? rows.get(n);
        if (!feed) return;
        const url = client.ticketUrl(n);
        if (feed.description || row) {
          comments.push({
            kind: 'trac_ticket',
            number: n,
            author: row?.reporter ?? '',
            url,
            created_at: row?.time ?? feed.events[0]?.date ?? '',
            body: feed.description,
          });
        }
        for (const e of feed.events) {
          if (!e.comment) continue; // property changes only
          comments.push({
            kind: 'trac_ticket',
            number: n,
            author: e.author,
            url: e.cnum !== null ? `${url}#comment:${e.cnum}` : e.link || url,
            created_at: e.date ?? '',
            body: e.comment,
          });
        }
      });
      return { comments, linkedIssues: [] };
    },
  };
}

/** The Trac source, configured from the environment (FORESIGHT_TRAC_URL). */
export const tracSource: Source = createTracSource();
