import type { PullRequest } from '../../../../pipeline/chain.ts';
import type { Reference } from '../../schema.ts';

const REVERT_SHA = /This reverts commit ([0-9a-f]{7,40})/gi;
const REGRESSION = /\b(?:regression|bug|broken|introduced)\s+(?:in|by|from|since)\s+(?:PR\s*)?(#\d+|[0-9a-f]{7,40}\b)/gi;
const REFS = /\b(?:refs?|follow[- ]up (?:to|of|on)|see|related to|added in|introduced in|was added in)\s+(?:PR\s*)?#(\d+)/gi;
const MENTION = /(?:^|[^\w&])#(\d+)\b/g;

/** Resolves a commit sha (possibly abbreviated) to the PR that contains it. */
export type ShaResolver = (sha: string) => { pr: number | null; sha: string } | null;

/**
 * Explicit references from a PR's title and body to earlier PRs: "Regression in #N", "Refs #N",
 * "Regression in <sha>", "This reverts commit <sha>", and plain "#N" mentions.
 * A reference to the PR itself or to a PR merged later is dropped.
 */
export function findReferences(pr: PullRequest, earlier: ReadonlySet<number>, resolveSha: ShaResolver): Reference[] {
  const text = `${pr.title}\n${pr.body}`;
  const refs: Reference[] = [];
  const seen = new Set<string>();
  const add = (kind: Reference['kind'], prNum: number | null, sha: string | null, match: string): void => {
    if (prNum !== null && (prNum === pr.number || !earlier.has(prNum))) return;
    const key = `${prNum ?? ''}:${sha ?? ''}`;
    if (seen.has(key)) return;
    seen.add(key);
    refs.push({ kind, pr: prNum, sha, text: match.trim(), source: 'git' });
  };
  const bySha = (kind: Reference['kind'], raw: string, match: string): void => {
    const hit = resolveSha(raw);
    if (hit) add(kind, hit.pr, hit.sha, match);
  };

  for (const m of text.matchAll(REVERT_SHA)) bySha('revert', m[1]!, m[0]);
  for (const m of text.matchAll(REGRESSION)) {
    const target = m[1]!;
    if (target.startsWith('#')) add('regression', Number(target.slice(1)), null, m[0]);
    else bySha('regression', target, m[0]);
  }
  for (const m of text.matchAll(REFS)) add('refs', Number(m[1]), null, m[0]);
  for (const m of text.matchAll(MENTION)) add('mention', Number(m[1]), null, m[0]);
  return refs;
}

const REVERT_TITLE = /^Revert\s+"/i;

export function isRevert(pr: Pick<PullRequest, 'title' | 'body'>): boolean {
  return REVERT_TITLE.test(pr.title) || /This reverts commit [0-9a-f]{7,40}/i.test(pr.body);
}

const FIX_WORDS = /\b(fix(e[sd])?|bug(fix)?|regression|crash(es|ed)?|broken|incorrect|wrong|mishandl\w*|error)\b/i;

export function hasFixKeywords(title: string): boolean {
  return FIX_WORDS.test(title);
}
