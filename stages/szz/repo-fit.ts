import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import PQueue from 'p-queue';
import { git } from '../../core/foundation/git.ts';
import type { Logger } from '../../core/foundation/log.ts';
import { attributeFix } from './attribute.ts';
import { FixDiffs } from './diff-lines.ts';
import { ENOUGH, fitHorizon, type HorizonCase, type HorizonFit } from './fit.ts';
import type { MetaChanges } from './meta.ts';
import { ownOracle } from './own-oracle.ts';

/** The newest own fixes blamed to choose the horizon: enough to choose it, few enough to cost a few percent of the stage. */
export const OWN_FIXES = 120;

/** Bumped when what the fit reads or how it chooses changes: an older cached fit is then redone. */
const FIT_VERSION = 1;

/** The parameters foresight's SZZ takes from the repository it mines, and what they were chosen on. */
export interface RepositoryFit {
  /** The commit whose history was read. */
  head: string;
  horizon: HorizonFit;
}

/**
 * Choose the history horizon on the repository's own fixes whose message names the commit their bug
 * came from (own-oracle.ts): blame each of the newest OWN_FIXES over the whole history once, then score
 * every horizon by cutting the blamed commits older than it (what `git blame --since` leaves). Fewer
 * than ENOUGH such fixes: no horizon, the whole history. Cached in `cacheDir` by the head commit.
 */
export async function fitRepository(clone: string, opts: { meta: MetaChanges; cacheDir?: string | null; concurrency?: number; log?: Logger; rev?: string }): Promise<RepositoryFit> {
  const head = (await git(clone, ['rev-parse', '--verify', '--end-of-options', `${opts.rev ?? 'HEAD'}^{commit}`])).trim();
  const cache = opts.cacheDir ? join(opts.cacheDir, 'szz-fit.json') : null;
  if (cache) {
    const stored = await readFile(cache, 'utf8').then((t) => JSON.parse(t) as { version: number; fit: RepositoryFit }, () => null);
    if (stored?.version === FIT_VERSION && stored.fit.head === head) return stored.fit;
  }
  const oracle = await ownOracle(clone, { rev: head, limit: OWN_FIXES });
  let cases: HorizonCase[] = [];
  if (oracle.length >= ENOUGH) {
    opts.log?.info(`szz: choosing the history horizon on ${oracle.length} of the repository's own fixes that name their inducing commit`);
    cases = await horizonCases(clone, oracle, opts.meta, opts.concurrency ?? 2);
  }
  const fit: RepositoryFit = { head, horizon: oracle.length >= ENOUGH ? fitHorizon(cases) : { horizon: null, basis: 'too_few', fixes: oracle.length, f1: 0, f1Without: 0 } };
  if (cache) {
    await mkdir(opts.cacheDir!, { recursive: true });
    await writeFile(cache, JSON.stringify({ version: FIT_VERSION, fit }) + '\n');
  }
  return fit;
}

/** Blame-only attribution over the whole history of each fix, with its parent's commit time. */
export async function horizonCases(clone: string, oracle: ReadonlyArray<{ fix: string; inducing: string[] }>, meta: MetaChanges, concurrency: number): Promise<HorizonCase[]> {
  if (!oracle.length) return [];
  // One log for every fix's parent and its time (a root commit has no parent: nothing to blame).
  const parents = new Map<string, { base: string; time: number }>();
  const log = await git(clone, ['log', '--no-walk=unsorted', '--format=%H %P', ...oracle.map((e) => e.fix)]);
  const bases = new Map<string, string>();
  for (const l of log.split('\n')) {
    const [fix = '', base] = l.trim().split(' ');
    if (fix && base) bases.set(fix, base);
  }
  const times = await git(clone, ['log', '--no-walk=unsorted', '--format=%H %ct', ...new Set(bases.values())]);
  const timeOf = new Map(times.split('\n').filter(Boolean).map((l) => [l.split(' ')[0]!, Number(l.split(' ')[1])]));
  for (const [fix, base] of bases) parents.set(fix, { base, time: timeOf.get(base) ?? 0 });
  const diffs = new FixDiffs(clone, oracle.flatMap((e) => (parents.has(e.fix) ? [{ baseSha: parents.get(e.fix)!.base, mergeSha: e.fix }] : [])));
  const queue = new PQueue({ concurrency });
  const out: Array<HorizonCase & { fix: string }> = [];
  await Promise.all(
    oracle.map((e) =>
      queue.add(async () => {
        const p = parents.get(e.fix);
        if (!p) return;
        const att = await attributeFix(clone, { baseSha: p.base, mergeSha: e.fix }, { variant: 'foresight', meta, horizon: null, diffs });
        out.push({ fix: e.fix, baseTime: p.time, commits: att.commits.map((c) => ({ sha: c.sha, time: c.time })), inducing: e.inducing });
      }),
    ),
  );
  // In the oracle's order, whatever order the blames finished in.
  const order = new Map(oracle.map((e, i) => [e.fix, i]));
  return out.sort((a, b) => order.get(a.fix)! - order.get(b.fix)!);
}
