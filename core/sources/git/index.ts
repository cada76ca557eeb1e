import type { Reference } from '../../foundation/model/candidate.ts';
import type { Source } from '../types.ts';
import { findReferences, tracTickets, type RefResolver } from './find-references.ts';
import { commitToChange, prefixLookup } from '../../history/changes.ts';

/** References written in the messages themselves: needs nothing but the clone. */
export const gitSource: Source = {
  name: 'git',
  available: () => ({ ok: true }),
  async discover({ changes, tracker }) {
    const trac = tracker === 'trac';
    const byCommit = commitToChange(changes);
    const sorted = [...byCommit.keys()].sort();
    const earlier = new Set<string>();
    const firstFix = new Map<number, string>();
    const resolver: RefResolver = {
      pr: (n) => (earlier.has(String(n)) ? String(n) : null),
      sha(raw) {
        const sha = prefixLookup(sorted, raw);
        if (!sha) return null;
        const target = byCommit.get(sha) ?? null;
        return { target: target && earlier.has(target) ? target : null, sha };
      },
      ticket: trac ? (n) => firstFix.get(n) ?? null : undefined,
    };
    const references = new Map<string, Reference[]>();
    for (const pr of changes) {
      references.set(pr.id, findReferences(pr, resolver));
      earlier.add(pr.id);
      if (trac) for (const n of tracTickets(pr.title).fixed) if (!firstFix.has(n)) firstFix.set(n, pr.id);
    }
    return { references };
  },
};
