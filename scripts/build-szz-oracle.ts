/**
 * Build an SZZ oracle from a repository's own history: fix commits whose message names the commit the
 * bug came from ("Regression in <sha>", "Bug in <sha>", Django's convention). Writes JSONL lines
 * {fix, inducing: [sha]} for foresight's `szz-eval`. The evaluation itself never reads these messages.
 *
 *   node_modules/.bin/tsx scripts/build-szz-oracle.ts <clone> <out.jsonl> [--branch HEAD] [--since 2015-01-01] [--until 2022-01-01]
 *
 * --since/--until (committer date of the fix) split it: tune on one part, hold the other out.
 */
import { writeFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { git, gitRecords } from '../core/foundation/git.ts';

const NAMED = /\b(?:Regression|Bug) (?:in|from|introduced in) ([0-9a-f]{7,40})\b/g;

export async function buildOracle(clone: string, opts: { branch?: string; since?: string; until?: string } = {}): Promise<Array<{ fix: string; inducing: string[] }>> {
  const args = ['log', '--first-parent', '--no-merges', '--format=%x1e%H%x1f%B', ...(opts.since ? [`--since=${opts.since}`] : []), ...(opts.until ? [`--until=${opts.until}`] : []), opts.branch ?? 'HEAD'];
  const out: Array<{ fix: string; inducing: string[] }> = [];
  for await (const rec of gitRecords(clone, args, '\x1e')) {
    const [fix, body = ''] = rec.split('\x1f');
    if (!fix?.trim()) continue;
    const inducing: string[] = [];
    for (const m of body.matchAll(NAMED)) {
      // The named commit must exist and be an ancestor of the fix: anything else is a typo or a backport.
      const full = (await git(clone, ['rev-parse', '--verify', '--quiet', `${m[1]}^{commit}`]).catch(() => '')).trim();
      if (!full) continue;
      const ancestor = await git(clone, ['merge-base', '--is-ancestor', full, fix.trim()]).then(() => true, () => false);
      if (ancestor && !inducing.includes(full)) inducing.push(full);
    }
    if (inducing.length) out.push({ fix: fix.trim(), inducing });
  }
  return out.reverse();
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { positionals, values } = parseArgs({ allowPositionals: true, options: { branch: { type: 'string' }, since: { type: 'string' }, until: { type: 'string' } } });
  const [clone, outPath] = positionals;
  if (!clone || !outPath) {
    process.stderr.write('usage: build-szz-oracle.ts <clone> <out.jsonl> [--branch REV] [--since DATE] [--until DATE]\n');
    process.exit(2);
  }
  const oracle = await buildOracle(clone, values);
  await writeFile(outPath, oracle.map((o) => JSON.stringify(o)).join('\n') + '\n');
  process.stderr.write(`wrote ${oracle.length} fixes to ${outPath}\n`);
}
