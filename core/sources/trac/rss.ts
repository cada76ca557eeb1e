import { XMLParser } from 'fast-xml-parser';
import { isoSeconds } from './csv.ts';
import { decodeEntities, htmlToText } from './html.ts';

/** A property change in one ticket event ("status: closed -> new"). Empty string = unset. */
export interface FieldChange {
  old: string;
  new: string;
}

/** One item of a ticket's RSS feed: a comment and/or property changes made at one time by one person. */
export interface TicketEvent {
  author: string;
  /** ISO 8601 UTC, or null when pubDate is missing or unreadable. */
  date: string | null;
  title: string;
  /** Absolute link to the event, normally <ticket url>#comment:K. */
  link: string;
  /** K of "#comment:K", or null. */
  cnum: number | null;
  fields: Record<string, FieldChange>;
  /** The comment as HTML (the property-change list removed) and as text. */
  commentHtml: string;
  comment: string;
  /** Changesets the event names (commit hooks write "In <changeset>:"): hex shas, or svn revisions as digits. */
  changesets: string[];
}

export interface TicketFeed {
  /** "Django: Ticket #N: summary" as Trac titles the channel. */
  title: string;
  link: string;
  /** The ticket description, rendered HTML and text. */
  descriptionHtml: string;
  description: string;
  events: TicketEvent[];
}

const parser = new XMLParser({
  ignoreAttributes: true,
  // Decoded by hand below, in one pass, so that escaped HTML inside <description> decodes exactly once.
  processEntities: false,
  parseTagValue: false,
  trimValues: false,
  isArray: (name) => name === 'item',
});

function text(v: unknown): string {
  if (v === undefined || v === null) return '';
  if (typeof v === 'string') return decodeEntities(v);
  if (typeof v === 'object' && '#text' in (v as Record<string, unknown>)) return text((v as Record<string, unknown>)['#text']);
  return String(v);
}

/** Split Trac's "<ul><li><strong>field</strong> ...</li></ul>" change list from the comment that follows it. */
export function splitChangeList(html: string): { fields: Record<string, FieldChange>; commentHtml: string } {
  const fields: Record<string, FieldChange> = {};
  const lead = /^\s*<ul>\s*(?=<li>\s*<strong>)([\s\S]*?)<\/ul>/i.exec(html);
  if (!lead) return { fields, commentHtml: html.trim() };
  for (const li of lead[1]!.matchAll(/<li>\s*<strong>([^<]+)<\/strong>([\s\S]*?)<\/li>/gi)) {
    const name = htmlToText(li[1]!).trim().toLowerCase();
    const change = parseChange(li[2]!);
    if (name && change) fields[name] = change;
  }
  return { fields, commentHtml: html.slice(lead[0].length).trim() };
}

function parseChange(html: string): FieldChange | null {
  const span = (cls: string) => new RegExp(`<span[^>]*class="[^"]*\\b${cls}\\b[^"]*"[^>]*>([\\s\\S]*?)</span>`, 'i').exec(html)?.[1];
  const t = (s: string | undefined) => (s === undefined ? '' : htmlToText(s).trim());
  // Trac >= 1.0: <span class="trac-field-old">a</span> → <span class="trac-field-new">b</span>, or trac-field-deleted.
  const oldV = span('trac-field-old');
  const newV = span('trac-field-new');
  const deleted = span('trac-field-deleted');
  if (oldV !== undefined || newV !== undefined || deleted !== undefined) {
    return deleted !== undefined ? { old: t(deleted), new: '' } : { old: t(oldV), new: t(newV) };
  }
  // Trac 0.11/0.12: "changed from <em>a</em> to <em>b</em>", "set to <em>b</em>", "<em>a</em> deleted".
  let m = /changed from <em>([\s\S]*?)<\/em> to <em>([\s\S]*?)<\/em>/i.exec(html);
  if (m) return { old: t(m[1]), new: t(m[2]) };
  m = /set to <em>([\s\S]*?)<\/em>/i.exec(html);
  if (m) return { old: '', new: t(m[1]) };
  m = /<em>([\s\S]*?)<\/em>\s*deleted/i.exec(html);
  if (m) return { old: t(m[1]), new: '' };
  return null;
}

/** Changesets named in an event: links to /changeset/<rev>, "In [rev]" / "(In [rev])", "[changeset:"rev" ...]". */
export function changesetsIn(html: string): string[] {
  const found = new Set<string>();
  const add = (rev: string | undefined) => {
    if (rev) found.add(rev.toLowerCase());
  };
  for (const m of html.matchAll(/\/changeset\/([0-9a-f]{1,40})(?=[/"?#]|$)/gim)) add(m[1]);
  const plain = htmlToText(html);
  // Rendered hook comments: "In 4a5c7d0:" (git), "In 12345:" and "(In [12345]) ..." (svn era), unrendered wiki.
  for (const m of plain.matchAll(/(?:^|\s|\()In \[?(?:changeset:)?"?(\d{1,6}|[0-9a-f]{7,40})"?(?:\s[^\]\n]*)?\]?(?::|\))/g)) add(m[1]);
  return [...found];
}

/** Parse /ticket/N?format=rss. */
export function parseTicketRss(xml: string): TicketFeed {
  const doc = parser.parse(xml.replace(/^\ufeff/, '')) as { rss?: { channel?: Record<string, unknown> } };
  const channel = doc.rss?.channel;
  if (!channel) throw new Error('not an RSS document: no <rss><channel>');
  const descriptionHtml = text(channel.description);
  const events: TicketEvent[] = [];
  for (const item of (channel.item as Record<string, unknown>[] | undefined) ?? []) {
    const html = text(item.description);
    const { fields, commentHtml } = splitChangeList(html);
    const link = text(item.link).trim() || text(item.guid).trim();
    const cnum = /#comment:(\d+)/.exec(link)?.[1];
    const pub = Date.parse(text(item.pubDate).trim());
    events.push({
      author: (text(item['dc:creator']) || text(item.author) || text(item.creator)).trim(),
      date: Number.isNaN(pub) ? null : isoSeconds(pub),
      title: text(item.title).trim(),
      link,
      cnum: cnum ? Number(cnum) : null,
      fields,
      commentHtml,
      comment: htmlToText(commentHtml),
      changesets: changesetsIn(commentHtml),
    });
  }
  return {
    title: text(channel.title).trim(),
    link: text(channel.link).trim(),
    descriptionHtml,
    description: htmlToText(descriptionHtml),
    events,
  };
}
