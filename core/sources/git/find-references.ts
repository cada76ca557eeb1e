import type { PullRequest } from '../../foundation/model/change.ts';
import type { Reference } from '../../foundation/model/candidate.ts';

/** Resolves what a message names to an earlier change (PullRequest.id), or null. */
export interface RefResolver {
  /** "#N" as a GitHub PR number. */
  pr(n: number): string | null;
  /** A commit sha, possibly abbreviated: the full sha and the change holding it (null when none does). */
  sha(raw: string): { target: string | null; sha: string } | null;
  /** "#N" as a Trac ticket: the change that first fixed it. Absent when the tracker is not Trac. */
  ticket?(n: number): string | null;
}

const REVERT_SHA = /This reverts commit ([0-9a-f]{7,40})/gi;
const REGRESSION = /\b(?:regression|bug|broken|introduced)\s+(?:in|by|from|since)\s+(?:PR\s*)?(#\d+|[0-9a-f]{7,40}\b)/gi;
const REFS = /\b(?:refs?|follow[- ]up (?:to|of|on)|see|related to|added in|introduced in|was added in)\s+(?:PR\s*)?#(\d+)/gi;
const MENTION = /(?:^|[^\w&])#(\d+)\b/g;
/** Django's Trac convention: "Fixed #N -- ...", "Refs #N -- ...", several tickets joined by commas. */
const TRAC_TICKETS = /\b(Fixed|Refs)\s+((?:#\d+(?:\s*,\s*|\s+and\s+)?)+)/gi;

/** Tickets a Trac-style message fixes ("Fixed #N") and refers to ("Refs #N"). */
export function tracTickets(text: string): { fixed: number[]; refs: number[] } {
  const fixed: number[] = [];
  const refs: number[] = [];
  for (const m of text.matchAll(TRAC_TICKETS)) {
    const nums = [...m[2]!.matchAll(/#(\d+)/g)].map((x) => Number(x[1]));
    (m[1]!.toLowerCase() === 'fixed' ? fixed : refs).push(...nums);
  }
  return { fixed, refs };
}

/**
 * Explicit references from a change's title and body to earlier changes: "Regression in #N / <sha>",
 * "Refs #N", "This reverts commit <sha>", plain "#N" mentions, and with a Trac tracker "Fixed #N" /
 * "Refs #N" pointing at the change that first fixed ticket N. Self-references are dropped.
 */
export function findReferences(pr: PullRequest, resolve: RefResolver): Reference[] {
  const text = `${pr.title}\n${pr.body}`;
  const refs: Reference[] = [];
  const seen = new Set<string>();
  const add = (kind: Reference['kind'], target: string | null, sha: string | null, match: string): void => {
    if (target === pr.id || (target === null && sha === null)) return;
    const key = `${target ?? ''}:${sha ?? ''}`;
    if (seen.has(key)) return;
    seen.add(key);
    refs.push({ kind, target, sha, text: match.trim(), source: 'git' });
  };
  const bySha = (kind: Reference['kind'], raw: string, match: string): void => {
    const hit = resolve.sha(raw);
    if (hit) add(kind, hit.target, hit.sha, match);
  };

  for (const m of text.matchAll(REVERT_SHA)) bySha('revert', m[1]!, m[0]);
  for (const m of text.matchAll(REGRESSION)) {
    const t = m[1]!;
    if (t.startsWith('#')) {
      if (!resolve.ticket) add('regression', resolve.pr(Number(t.slice(1))), null, m[0]);
    } else bySha('regression', t, m[0]);
  }
  if (resolve.ticket) {
    // Trac: "#N" is a ticket. A later change on a ticket someone already fixed points at that fix.
    const { fixed, refs: mentioned } = tracTickets(text);
    for (const n of [...fixed, ...mentioned]) add('refs', resolve.ticket(n), null, `#${n}`);
    return refs;
  }
  for (const m of text.matchAll(REFS)) add('refs', resolve.pr(Number(m[1])), null, m[0]);
  for (const m of text.matchAll(MENTION)) add('mention', resolve.pr(Number(m[1])), null, m[0]);
  return refs;
}

/** A subject git's revert command wrote, possibly after a backport's "[5.0.x] " marker. */
export const REVERT_SUBJECT = /^(\[[\w.]+\]\s*)?Revert\s+"/i;

export function isRevert(pr: Pick<PullRequest, 'title' | 'body'>): boolean {
  return REVERT_SUBJECT.test(pr.title) || /This reverts commit [0-9a-f]{7,40}/i.test(pr.body);
}

const FIX_WORDS = /\b(fix(e[sd])?|bug(fix)?|regression|crash(es|ed)?|broken|incorrect|wrong|mishandl\w*|error)\b/i;

/** Whether a title reads as a fix; a Trac prefix ("Fixed #N -- ") says nothing about that and is skipped. */
export function hasFixKeywords(title: string): boolean {
  return FIX_WORDS.test(title.replace(/^(\[[\w.]+\]\s*)?(Fixed|Refs)\s+(#\d+[\s,]*(and\s+)?)+(--\s*)?/i, ''));
}
