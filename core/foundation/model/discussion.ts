import type { Comment, LinkedIssue } from './candidate.ts';
import type { PullRequest } from './change.ts';
import type { ExtractedChain } from './extracted.ts';

/**
 * The human text around a chain, as the statement writers and judges read it. PR1's side is its own
 * material only: what the sources collected for PR1 (role 'introducer'), the issues it closes and the
 * Trac ticket it is for, written before PR1 merged. Nothing of the fixer side and nothing from after
 * the merge can reach the agent's statement, since that would tell it about the future bug.
 */

/** What these functions read of a chain. */
export type ChainDiscussion = Pick<ExtractedChain, 'pr1' | 'pr_comments' | 'linked_issues'>;

type RoleComment = Comment & { role: 'fixer' | 'introducer' };
type RoleIssue = LinkedIssue & { role: 'fixer' | 'introducer' };

export interface OwnMaterialOptions {
  /** Also quote the comments on a closing issue written before PR1 merged. Default false: the report alone. */
  issueComments?: boolean;
}

/**
 * Strictly before `mergedAt`, comparing instants (GitHub's "Z" times and git's "+02:00" ones). A time that
 * cannot be read proves nothing, so the text is left out.
 */
function before(at: string, mergedAt: string): boolean {
  const t = Date.parse(at);
  const m = Date.parse(mergedAt);
  return Number.isFinite(t) && Number.isFinite(m) && t < m;
}

/** A Trac ticket's description entry: the ticket URL itself, where each comment's URL has "#comment:K". */
const isTicketDescription = (c: Comment): boolean => c.kind === 'trac_ticket' && !c.url.includes('#');

/**
 * PR1's own words beyond its title and body, one section per source, oldest first:
 *  - each GitHub issue PR1 closes ("closes"; a mention or a cross-reference may be about something else),
 *    opened before PR1 merged, as "Issue #N: title\n\nbody";
 *  - each Trac ticket PR1 is for, its description as "Ticket #N\n\ndescription" when the ticket was opened
 *    before PR1 merged (comments are left out: later ones are often about the follow-up fix).
 * Never anything of role 'fixer'. Trac shows a description as edited today: an edit after the merge cannot
 * be told apart, which is why the leak detector runs on the result as well.
 */
export function pr1OwnMaterial(chain: ChainDiscussion, opts: OwnMaterialOptions = {}): string[] {
  const mergedAt = chain.pr1.mergedAt;
  const sections: { at: string; text: string }[] = [];
  const seenIssues = new Set<number>();
  for (const issue of (chain.linked_issues ?? []) as RoleIssue[]) {
    if (issue.role !== 'introducer' || issue.ref_type !== 'closes' || seenIssues.has(issue.number)) continue;
    if (!before(issue.created_at, mergedAt)) continue;
    seenIssues.add(issue.number);
    const parts = [`Issue #${issue.number}: ${issue.title.trim()}`];
    if (issue.body.trim()) parts.push(issue.body.trim());
    if (opts.issueComments) {
      for (const c of issue.comments) if (c.body.trim() && before(c.created_at, mergedAt)) parts.push(`Comment by ${c.author}:\n${c.body.trim()}`);
    }
    sections.push({ at: issue.created_at, text: parts.join('\n\n') });
  }
  const seenTickets = new Set<string>();
  for (const c of (chain.pr_comments ?? []) as RoleComment[]) {
    if (c.role !== 'introducer' || !isTicketDescription(c) || seenTickets.has(c.url)) continue;
    if (!before(c.created_at, mergedAt)) continue;
    seenTickets.add(c.url);
    const head = c.number !== null ? `Ticket #${c.number}` : 'Ticket';
    sections.push({ at: c.created_at, text: c.body.trim() ? `${head}\n\n${c.body.trim()}` : head });
  }
  return sections.sort((a, b) => Date.parse(a.at) - Date.parse(b.at)).map((s) => s.text);
}

const KIND_LABEL: Record<Comment['kind'], string> = {
  pr: 'Comment',
  review: 'Review',
  review_comment: 'Review comment',
  trac_ticket: 'Ticket',
  issue: 'Issue comment',
};

/**
 * The fixer side's discussion as one text: PR2's comments and reviews, the Trac tickets it names
 * (description and comments) and the issues linked to it with their comments, in collection order.
 * Empty when no source collected any.
 */
export function pr2Discussion(chain: Pick<ExtractedChain, 'pr_comments' | 'linked_issues'>): string {
  const out: string[] = [];
  for (const c of (chain.pr_comments ?? []) as RoleComment[]) {
    if (c.role !== 'fixer' || !c.body.trim()) continue;
    const what = c.kind === 'trac_ticket' ? (isTicketDescription(c) ? `Ticket #${c.number ?? '?'}` : `Ticket #${c.number ?? '?'} comment`) : KIND_LABEL[c.kind];
    out.push(`${what} by ${c.author || 'unknown'}:\n${c.body.trim()}`);
  }
  for (const issue of (chain.linked_issues ?? []) as RoleIssue[]) {
    if (issue.role !== 'fixer') continue;
    const parts = [`Issue #${issue.number}: ${issue.title.trim()}`];
    if (issue.body.trim()) parts.push(issue.body.trim());
    for (const c of issue.comments) if (c.body.trim()) parts.push(`Comment by ${c.author}:\n${c.body.trim()}`);
    out.push(parts.join('\n\n'));
  }
  return out.join('\n\n');
}

/** A change's human text as written: title, blank line, body; then each section of its own material. */
export function rawStatement(pr: Pick<PullRequest, 'title' | 'body'>, ownMaterial: readonly string[] = []): string {
  const head = pr.body ? `${pr.title}\n\n${pr.body}` : pr.title;
  return [head, ...ownMaterial.filter((s) => s.trim())].join('\n\n');
}
