import type { PullRequest } from '../../foundation/model/change.ts';
import type { TicketEvent, TicketFeed } from './rss.ts';

/** A change that names a ticket: its place in the history and whether it says "Fixed #N" (else "Refs #N"). */
export interface Namer {
  change: Pick<PullRequest, 'id' | 'mergedAt'>;
  /** Position in the first-parent history (input.changes order). */
  order: number;
  fixed: boolean;
}

export interface ReopenLink {
  ticket: number;
  /** The change that named the ticket after it was reopened (fixing it again, or referring to it). */
  later: string;
  /** Whether `later` says "Fixed #N" (else "Refs #N"). */
  laterFixed: boolean;
  /** The change whose fix was reopened. */
  earlier: string;
  reopenedAt: string | null;
  reopenedBy: string;
  /** How the later change was placed after the reopen: the commit hook's "In <sha>:" comment, or its date. */
  placedBy: 'changeset' | 'date';
  /** Human-readable status change, e.g. "closed → new". */
  statusChange: string;
}

interface Reopen {
  index: number;
  event: TicketEvent;
}

/**
 * The reopenings of a ticket that had been closed as fixed: an event that moves `status` away from
 * `closed` (or deletes resolution `fixed`) while the last closing resolution was `fixed`.
 * Reopenings after wontfix/duplicate/invalid closes say nothing about a fix and are not returned.
 */
export function fixedReopenings(feed: TicketFeed): Reopen[] {
  const out: Reopen[] = [];
  let resolution = '';
  feed.events.forEach((event, index) => {
    const status = event.fields.status;
    const res = event.fields.resolution;
    const reopened = (status && status.old === 'closed' && status.new !== 'closed') || (res && res.old !== '' && res.new === '');
    if (reopened) {
      if (resolution === 'fixed') out.push({ index, event });
      resolution = res ? res.new : '';
      return;
    }
    if (res) resolution = res.new;
  });
  return out;
}

/**
 * Where each naming change sits among the ticket's events: the first event whose changesets resolve to it
 * (Trac's commit hook comments "In <sha>:" when a commit names the ticket), else by its date between
 * events (x.5 positions). Null when neither is known.
 */
export function placeChanges(feed: TicketFeed, namers: readonly Namer[], resolveChangeset: (rev: string) => string | null): Map<string, { pos: number; by: 'changeset' | 'date' }> {
  const firstEvent = new Map<string, number>();
  feed.events.forEach((e, i) => {
    for (const rev of e.changesets) {
      const id = resolveChangeset(rev);
      if (id && !firstEvent.has(id)) firstEvent.set(id, i);
    }
  });
  const times = feed.events.map((e) => (e.date ? Date.parse(e.date) : NaN));
  const out = new Map<string, { pos: number; by: 'changeset' | 'date' }>();
  for (const n of namers) {
    const at = firstEvent.get(n.change.id);
    if (at !== undefined) {
      out.set(n.change.id, { pos: at, by: 'changeset' });
      continue;
    }
    const t = Date.parse(n.change.mergedAt);
    if (Number.isNaN(t) || times.some(Number.isNaN)) continue;
    const before = times.filter((x) => x <= t).length;
    out.set(n.change.id, { pos: before - 0.5, by: 'date' });
  }
  return out;
}

/**
 * Fix-again links for one ticket: for each reopening of a fixed ticket, every change naming the ticket after
 * the reopening (and before the next one) points to the last change that said "Fixed #N" before it.
 * Also the report time of each later change that fixes the ticket: the reopening, not the ticket's creation
 * (the defect it fixes was reported when the earlier fix was found wanting).
 */
export function reopenLinks(
  ticket: number,
  feed: TicketFeed,
  namers: readonly Namer[],
  resolveChangeset: (rev: string) => string | null,
): { links: ReopenLink[]; reportedAt: Map<string, string> } {
  const links: ReopenLink[] = [];
  const reportedAt = new Map<string, string>();
  const reopens = fixedReopenings(feed);
  if (!reopens.length || namers.length < 2) return { links, reportedAt };
  const placed = placeChanges(feed, namers, resolveChangeset);
  const at = (n: Namer) => placed.get(n.change.id);
  reopens.forEach((r, k) => {
    const next = reopens[k + 1]?.index ?? Infinity;
    const earlier = namers
      .filter((n) => n.fixed && (at(n)?.pos ?? Infinity) < r.index)
      .sort((a, b) => at(a)!.pos - at(b)!.pos || a.order - b.order)
      .at(-1);
    if (!earlier) return;
    for (const n of namers) {
      const p = at(n);
      if (!p || p.pos <= r.index || p.pos >= next || n.change.id === earlier.change.id || n.order <= earlier.order) continue;
      const s = r.event.fields.status;
      links.push({
        ticket,
        later: n.change.id,
        laterFixed: n.fixed,
        earlier: earlier.change.id,
        reopenedAt: r.event.date,
        reopenedBy: r.event.author,
        placedBy: p.by,
        statusChange: s ? `${s.old} → ${s.new}` : 'resolution fixed deleted',
      });
      if (n.fixed && r.event.date) reportedAt.set(n.change.id, r.event.date);
    }
  });
  return { links, reportedAt };
}
