import { ForesightError } from '../../foundation/errors.ts';
import type { Logger } from '../../foundation/log.ts';
import type { HttpCache } from '../../http/fetch-cache.ts';
import { parseTicketCsv, TICKET_COLUMNS, type TracTicket } from './csv.ts';
import { parseTicketRss, type TicketFeed } from './rss.ts';

export interface TracClientOptions {
  /** The Trac site, e.g. https://code.djangoproject.com (a trailing slash is ignored). */
  baseUrl: string;
  cache: HttpCache;
  log: Logger;
  /** Tickets per CSV query: ids are grouped by id range of this width, so a batch's URL stays stable between runs. */
  batchSize?: number;
  /**
   * Serve cached answers younger than this without asking. Trac itself sends no ETag or Last-Modified on
   * the CSV and RSS exports (only attachments and changesets get validators), so against a bare Trac a
   * revalidation is a full download; a proxy in front may add validators. Default 0: always ask.
   */
  maxAgeMs?: number;
  signal?: AbortSignal;
}

/**
 * Babel formats the CSV's times for the request's language: English gives "Jul 13, 2005, 12:03:27 PM"
 * (four-digit years); with no language Trac falls back to strftime("%x %X"), two-digit years.
 */
const HEADERS = { 'accept-language': 'en-US,en;q=0.8' };

/** Read-only access to a Trac site's ticket query CSV export and ticket RSS feeds, through the HTTP cache. */
export class TracClient {
  readonly baseUrl: string;
  private readonly batchSize: number;

  constructor(private readonly opts: TracClientOptions) {
    this.baseUrl = opts.baseUrl.replace(/\/+$/, '');
    this.batchSize = Math.max(1, opts.batchSize ?? 100);
  }

  ticketUrl(id: number): string {
    return `${this.baseUrl}/ticket/${id}`;
  }

  /** /query?format=csv for these ids ("id=1|2|3", Trac's OR syntax), every column foresight reads, no paging. */
  csvUrl(ids: readonly number[]): string {
    const cols = TICKET_COLUMNS.map((c) => `col=${c}`).join('&');
    return `${this.baseUrl}/query?format=csv&id=${encodeURIComponent(ids.join('|'))}&${cols}&max=0&order=id`;
  }

  rssUrl(id: number): string {
    return `${this.ticketUrl(id)}?format=rss`;
  }

  /** Ids grouped into batches by id range (bucket = floor(id / batchSize)), each sorted. */
  batches(ids: Iterable<number>): number[][] {
    const buckets = new Map<number, number[]>();
    for (const id of new Set(ids)) {
      if (!Number.isInteger(id) || id <= 0) continue;
      const b = Math.floor(id / this.batchSize);
      let list = buckets.get(b);
      if (!list) buckets.set(b, (list = []));
      list.push(id);
    }
    return [...buckets.entries()].sort((a, b) => a[0] - b[0]).map(([, list]) => list.sort((a, b) => a - b));
  }

  /** Ticket rows for `ids`, in batched CSV queries. Tickets the site does not return (deleted, hidden) are absent. */
  async tickets(ids: Iterable<number>): Promise<Map<number, TracTicket>> {
    const out = new Map<number, TracTicket>();
    const batches = this.batches(ids);
    let unreadable = 0;
    await Promise.all(
      batches.map(async (batch) => {
        const url = this.csvUrl(batch);
        const res = await this.opts.cache.get(url, { headers: HEADERS, signal: this.opts.signal, ...(this.opts.maxAgeMs ? { maxAgeMs: this.opts.maxAgeMs } : {}) });
        if (res.status !== 200) throw this.failure(url, res.status);
        let parsed: ReturnType<typeof parseTicketCsv>;
        try {
          parsed = parseTicketCsv(res.body);
        } catch (err) {
          throw new ForesightError(`${url} did not answer a Trac ticket CSV: ${(err as Error).message}`, {
            remedy: 'check that FORESIGHT_TRAC_URL is the root of a Trac site (e.g. https://code.djangoproject.com)',
            external: true,
            cause: err,
          });
        }
        unreadable += parsed.unreadableTimes;
        const wanted = new Set(batch);
        for (const t of parsed.tickets) if (wanted.has(t.id)) out.set(t.id, t);
      }),
    );
    if (unreadable) this.opts.log.warn(`${unreadable} Trac ticket times could not be read; those tickets give no report time`);
    return out;
  }

  /** A ticket's RSS feed (description and every change), or null when the ticket does not exist or cannot be viewed. */
  async feed(id: number): Promise<TicketFeed | null> {
    const url = this.rssUrl(id);
    const res = await this.opts.cache.get(url, { headers: HEADERS, signal: this.opts.signal, ...(this.opts.maxAgeMs ? { maxAgeMs: this.opts.maxAgeMs } : {}) });
    if (res.status === 404 || res.status === 403) {
      this.opts.log.debug(`Trac ticket #${id}: HTTP ${res.status}, skipped`);
      return null;
    }
    if (res.status !== 200) throw this.failure(url, res.status);
    try {
      return parseTicketRss(res.body);
    } catch (err) {
      throw new ForesightError(`${url} did not answer a ticket RSS feed: ${(err as Error).message}`, {
        remedy: 'check that FORESIGHT_TRAC_URL is the root of a Trac site with the RSS export enabled',
        external: true,
        cause: err,
      });
    }
  }

  private failure(url: string, status: number): ForesightError {
    return new ForesightError(`Trac answered HTTP ${status} for ${url}`, {
      remedy: 'check FORESIGHT_TRAC_URL and that anonymous users may view tickets (TICKET_VIEW)',
      external: true,
    });
  }
}
