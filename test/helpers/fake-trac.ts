import { createHash } from 'node:crypto';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A Trac site on 127.0.0.1 (random port) answering the two read-only exports foresight uses, shaped like
 * Trac 1.6 renders them:
 *  - /query?format=csv&id=1|2|3&col=...: UTF-8 BOM, CRLF rows, field labels in the header ("id,Summary,
 *    ...,Created,Modified,..."), quoting only where needed, times as Babel's English medium form
 *    ("Jul 13, 2005, 12:03:27\u202fPM") for an English Accept-Language, else strftime "%x %X";
 *  - /ticket/N?format=rss: the ticket.rss template (escaped HTML description, one <item> per change with
 *    <dc:creator>, RFC 822 <pubDate>, "#comment:K" links, the property-change list, the comment).
 * Every 200 carries an ETag; a matching If-None-Match gets 304. Scripted failures answer a status once.
 */

export interface FakeTracEvent {
  author: string;
  /** ISO time. */
  date: string;
  cnum: number;
  fields?: Record<string, { old: string; new: string }>;
  /** Rendered comment HTML (what wiki_to_html gives). */
  commentHtml?: string;
}

export interface FakeTracTicket {
  id: number;
  summary: string;
  status: string;
  type: string;
  component: string;
  resolution: string;
  reporter: string;
  /** ISO creation time. */
  created: string;
  modified: string;
  /** Rendered description HTML. */
  descriptionHtml: string;
  events: FakeTracEvent[];
}

export interface FakeTracRequest {
  method: string;
  url: string;
  path: string;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  status: number;
}

export interface FakeTrac {
  readonly baseUrl: string;
  readonly requests: FakeTracRequest[];
  tickets: Map<number, FakeTracTicket>;
  /** The next request whose path+query matches `match` answers `status` once (e.g. 503 with Retry-After). */
  failOnce(match: (path: string, query: URLSearchParams) => boolean, status: number, headers?: Record<string, string>): void;
  /** Count of answers with this status. */
  count(status: number): number;
  reset(): void;
  close(): Promise<void>;
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const DAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
const pad = (n: number) => String(n).padStart(2, '0');

/** Babel en medium datetime (CLDR 42+: narrow no-break space before AM/PM), in UTC. */
function babelEn(iso: string): string {
  const d = new Date(iso);
  const h = d.getUTCHours();
  return `${MONTHS[d.getUTCMonth()]} ${d.getUTCDate()}, ${d.getUTCFullYear()}, ${h % 12 || 12}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}\u202f${h < 12 ? 'AM' : 'PM'}`;
}

/** C-locale strftime("%x %X"). */
function strftimeC(iso: string): string {
  const d = new Date(iso);
  return `${pad(d.getUTCMonth() + 1)}/${pad(d.getUTCDate())}/${pad(d.getUTCFullYear() % 100)} ${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`;
}

/** trac.util.datefmt.http_date. */
function httpDate(iso: string): string {
  const d = new Date(iso);
  return `${DAYS[d.getUTCDay()]}, ${pad(d.getUTCDate())} ${MONTHS[d.getUTCMonth()]} ${d.getUTCFullYear()} ${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())} GMT`;
}

/** Python csv.writer, QUOTE_MINIMAL, lineterminator \r\n. */
function csvRow(values: string[]): string {
  return values.map((v) => (/[",\r\n]/.test(v) ? `"${v.replace(/"/g, '""')}"` : v)).join(',') + '\r\n';
}

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&#34;').replace(/'/g, '&#39;');

const LABELS: Record<string, string> = {
  summary: 'Summary', status: 'Status', type: 'Type', component: 'Component', resolution: 'Resolution',
  time: 'Created', changetime: 'Modified', reporter: 'Reporter', owner: 'Owner',
};

export function renderCsv(tickets: FakeTracTicket[], cols: string[], english: boolean): string {
  const fmt = english ? babelEn : strftimeC;
  let out = '\ufeff' + csvRow(cols.map((c) => LABELS[c] ?? c));
  for (const t of tickets) {
    out += csvRow(
      cols.map((c) => {
        if (c === 'id') return String(t.id);
        if (c === 'time') return fmt(t.created);
        if (c === 'changetime') return fmt(t.modified);
        return String((t as unknown as Record<string, unknown>)[c] ?? '');
      }),
    );
  }
  return out;
}

/** Trac 1.6 _render_property_diff default rendering, then the ticket.rss <li> wrapper. */
function renderFields(fields: Record<string, { old: string; new: string }>): string {
  let html = '<ul>';
  for (const [name, { old, new: nu }] of Object.entries(fields)) {
    const rendered =
      old && nu
        ? `<span class="trac-field-old">${esc(old)}</span> → <span class="trac-field-new">${esc(nu)}</span>`
        : !old && nu
          ? `→ <span class="trac-field-new">${esc(nu)}</span>`
          : `<span class="trac-field-deleted">${esc(old)}</span>`;
    html += `\n          <li><strong>${esc(name)}</strong>\n        ${rendered}\n          </li>`;
  }
  return html + '\n        </ul>';
}

function eventTitle(e: FakeTracEvent): string {
  const changed: string[] = [];
  const set: string[] = [];
  const deleted: string[] = [];
  for (const [name, v] of Object.entries(e.fields ?? {})) {
    if (name === 'description') changed.push(name);
    else if (!v.old) set.push(name);
    else if (!v.new) deleted.push(name);
    else changed.push(name);
  }
  return [changed.length ? `${changed.join(', ')} changed` : '', set.length ? `${set.join(', ')} set` : '', deleted.length ? `${deleted.join(', ')} deleted` : '']
    .filter(Boolean)
    .join('; ');
}

export function renderRss(t: FakeTracTicket, base: string): string {
  const link = `${base}/ticket/${t.id}`;
  const items = t.events
    .map((e) => {
      const who = e.author.includes('@') ? `<author>${esc(e.author)}</author>` : `<dc:creator>${esc(e.author)}</dc:creator>`;
      const body = (e.fields && Object.keys(e.fields).length ? renderFields(e.fields) : '') + '\n        ' + (e.commentHtml ?? '').replaceAll('{BASE}', base);
      return `
    <item>
      ${who}
      <pubDate>${httpDate(e.date)}</pubDate>
      <title>${esc(eventTitle(e))}</title>
      <link>${link}#comment:${e.cnum}
      </link>
      <guid isPermaLink="false">${link}#comment:${e.cnum}</guid>
      <description>
        ${esc(body)}
      </description>
      <category>Ticket</category>
    </item>`;
    })
    .join('');
  return `<?xml version="1.0"?>
<rss version="2.0" xmlns:dc="http://purl.org/dc/elements/1.1/">
  <channel>
    <title>Django: Ticket #${t.id}: ${esc(t.summary)}</title>
    <link>${link}</link>
    <description>${esc(t.descriptionHtml)}</description>
    <language>en-us</language>
    <image>
      <title>Django</title>
      <url>https://www.djangoproject.com/s/img/site/hdr_logo.gif</url>
      <link>${link}</link>
    </image>
    <generator>Trac 1.6</generator>
${items}
 </channel>
</rss>
`;
}

export async function startFakeTrac(initial: FakeTracTicket[]): Promise<FakeTrac> {
  const tickets = new Map(initial.map((t) => [t.id, t]));
  const requests: FakeTracRequest[] = [];
  const failures: Array<{ match: (path: string, query: URLSearchParams) => boolean; status: number; headers: Record<string, string> }> = [];
  let baseUrl = '';

  const server = createServer((req, res) => {
    const u = new URL(req.url ?? '/', 'http://127.0.0.1');
    const record = (status: number) => requests.push({ method: req.method ?? '', url: req.url ?? '', path: u.pathname, query: u.searchParams, headers: req.headers, status });
    const fail = failures.findIndex((f) => f.match(u.pathname, u.searchParams));
    if (fail >= 0) {
      const [f] = failures.splice(fail, 1);
      record(f!.status);
      res.writeHead(f!.status, { 'content-type': 'text/html', ...f!.headers });
      res.end(`<html><body><h1>${f!.status}</h1></body></html>`);
      return;
    }
    let body: string | null = null;
    let type = 'text/plain';
    const ticketMatch = /^\/ticket\/(\d+)$/.exec(u.pathname);
    if (u.pathname === '/query' && u.searchParams.get('format') === 'csv') {
      const ids = new Set(
        u.searchParams
          .getAll('id')
          .flatMap((v) => v.split('|'))
          .map(Number),
      );
      let cols = u.searchParams.getAll('col');
      if (!cols.length) cols = ['id', 'summary', 'status', 'owner', 'component', 'version', 'changetime'];
      if (!cols.includes('id')) cols.unshift('id');
      const english = /^en\b/i.test(String(req.headers['accept-language'] ?? ''));
      body = renderCsv([...tickets.values()].filter((t) => ids.has(t.id)).sort((a, b) => a.id - b.id), cols, english);
      type = 'text/csv;charset=utf-8';
    } else if (ticketMatch && u.searchParams.get('format') === 'rss') {
      const t = tickets.get(Number(ticketMatch[1]));
      if (!t) {
        record(404);
        res.writeHead(404, { 'content-type': 'text/html;charset=utf-8' });
        res.end('<h1>Error: Invalid ticket number</h1>');
        return;
      }
      body = renderRss(t, baseUrl);
      type = 'application/rss+xml;charset=utf-8';
    }
    if (body === null) {
      record(404);
      res.writeHead(404, { 'content-type': 'text/plain' });
      res.end('not found');
      return;
    }
    const etag = `W/"${createHash('sha1').update(body).digest('hex')}"`;
    if (req.headers['if-none-match'] === etag) {
      record(304);
      res.writeHead(304, { etag });
      res.end();
      return;
    }
    record(200);
    res.writeHead(200, { 'content-type': type, etag });
    res.end(body);
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    baseUrl,
    requests,
    tickets,
    failOnce: (match, status, headers = {}) => void failures.push({ match, status, headers }),
    count: (status) => requests.filter((r) => r.status === status).length,
    reset: () => {
      requests.length = 0;
      failures.length = 0;
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((err) => (err ? reject(err) : resolve()));
        server.closeAllConnections();
      }),
  };
}

/** A comment posted by Trac's commit hook (tracopt CommitTicketUpdater), rendered as Django's Trac shows it; {BASE} is the site. */
export function hookComment(sha: string, message: string): string {
  const [subject] = message.split('\n');
  return `<p>\nIn <a class="changeset" href="{BASE}/changeset/${sha}/" title="${esc(subject!)}">${sha.slice(0, 7)}</a>:\n</p>\n<div class="message"><p>\n${esc(message).replace(/\n/g, '<br />\n')}\n</p></div>`;
}
