import { git, gitBytes, gitRecords } from '../../core/foundation/git.ts';
import type { OracleEntry } from './evaluate.ts';

/**
 * How a fix names the commit its bug came from, in the words projects use: Django's "Regression in
 * <sha>", curl's "Regression from <sha>", git's "this bug was introduced by <sha>", "regressed in <sha>".
 * A bare "introduced in <sha>" is left out: it names where a feature came from as often as a bug.
 */
const NAMED = [
  /\b(?:regression|bug|breakage)s? (?:was |were |has been )?(?:in|from|since|introduced (?:in|by)|caused by) (?:commit )?([0-9a-f]{7,40})\b/gi,
  /\bregressed (?:in|by|with|since) (?:commit )?([0-9a-f]{7,40})\b/gi,
];

/** The abbreviated shas a message names as where its bug came from, in order, each once. */
export function namedInducers(message: string): string[] {
  const flat = message.replace(/\s+/g, ' ');
  const out: Array<{ at: number; sha: string }> = [];
  for (const re of NAMED) for (const m of flat.matchAll(re)) out.push({ at: m.index ?? 0, sha: m[1]!.toLowerCase() });
  return [...new Set(out.sort((a, b) => a.at - b.at).map((m) => m.sha))];
}

/**
 * The repository's own oracle: fixes (non-merge commits reachable from `rev`) whose message names the
 * commit the bug came from, when that commit exists and is an ancestor of the fix. Newest first, at most
 * `limit` fixes. One streamed `git log`, one `cat-file --batch-check` and one ancestry check per pair.
 */
export async function ownOracle(clone: string, opts: { rev?: string; limit?: number } = {}): Promise<OracleEntry[]> {
  const limit = opts.limit ?? Infinity;
  const named: Array<{ fix: string; shas: string[] }> = [];
  for await (const rec of gitRecords(clone, ['log', '--no-merges', '--format=%x1e%H%x1f%B', '--end-of-options', opts.rev ?? 'HEAD'], '\x1e')) {
    const sep = rec.indexOf('\x1f');
    if (sep < 0) continue;
    const shas = namedInducers(rec.slice(sep + 1));
    if (shas.length) named.push({ fix: rec.slice(0, sep).trim(), shas });
  }
  const abbrevs = [...new Set(named.flatMap((n) => n.shas))];
  const full = await resolveCommits(clone, abbrevs);
  const out: OracleEntry[] = [];
  for (const n of named) {
    if (out.length >= limit) break;
    const inducing: string[] = [];
    for (const s of n.shas) {
      const f = full.get(s);
      if (!f || f === n.fix || inducing.includes(f)) continue;
      // A named commit that is not an ancestor is a backport's original or a typo.
      if (await git(clone, ['merge-base', '--is-ancestor', f, n.fix]).then(() => true, () => false)) inducing.push(f);
    }
    if (inducing.length) out.push({ fix: n.fix, inducing });
  }
  return out;
}

/** Abbreviated sha -> the full sha of the commit it names (absent when none or ambiguous). */
async function resolveCommits(clone: string, abbrevs: readonly string[]): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  if (!abbrevs.length) return out;
  const text = (await gitBytes(clone, ['cat-file', '--batch-check=%(objectname) %(objecttype)'], { input: abbrevs.map((a) => `${a}^{commit}`).join('\n') + '\n' })).toString('utf8');
  const lines = text.split('\n');
  abbrevs.forEach((a, i) => {
    const m = /^([0-9a-f]{40}) commit$/.exec(lines[i] ?? '');
    if (m) out.set(a, m[1]!);
  });
  return out;
}
