/**
 * Published rows validated again: a release re-validates every row of the previous one from the row alone
 * (its four commits, its sets), as `recheck` does a stored chain. The chain is rebuilt from the clone — the
 * two changes whose mainline commits the row names, extracted again (no discussion: it changes no set) —
 * and validated from scratch with attribution off (the row's PR1 as published). The row holds when the rerun
 * is not excluded and its FAIL_TO_PASS, PASS_TO_PASS and ANTICIPATION_FAIL_TO_PASS are the published ones;
 * otherwise it fails with the rerun's exclusion, or `sets_changed` naming what moved.
 */
import type { ExclusionReason } from '../../core/foundation/model/change.ts';
import type { Chain } from '../../core/foundation/model/chain.ts';
import type { ExtractedChain } from '../../core/foundation/model/extracted.ts';
import { extractChain, repoShortName } from '../../core/extract/chain.ts';
import type { ContextCollector } from '../../core/extract/context.ts';
import { listChanges } from '../../core/history/changes.ts';
import { rerunEach, type RecheckOptions } from './recheck.ts';

/** The fields of a published row a re-validation reads (test lists as the row's JSON text). */
export interface PublishedRow {
  instance_id: string;
  repo: string;
  base_commit: string;
  pr1_head_sha: string;
  pr2_base_sha: string;
  pr2_head_sha: string;
  FAIL_TO_PASS: string;
  PASS_TO_PASS: string;
  ANTICIPATION_FAIL_TO_PASS: string;
  mining_category?: string;
}

/** The sets a published row must keep. */
const ROW_SETS = ['FAIL_TO_PASS', 'PASS_TO_PASS', 'ANTICIPATION_FAIL_TO_PASS'] as const;

export type RowVerdict =
  | { verdict: 'holds' }
  | { verdict: 'fails'; reason: ExclusionReason; detail: string }
  /** Could not run (the commits are not in the clone, Docker failed): no evidence either way. */
  | { verdict: 'error'; detail: string };

export type RowRecheck = { instance_id: string; wallMs: number } & RowVerdict;

export interface RowRecheckOptions extends Omit<RecheckOptions, 'onResult'> {
  onResult?: (r: RowRecheck, done: number, total: number) => void;
}

const NO_DISCUSSION: ContextCollector = { collect: async () => ({ pr_comments: null, linked_issues: null, complete: true }) };

function list(text: string): string[] {
  const v: unknown = JSON.parse(text);
  return Array.isArray(v) ? v.map(String) : [];
}

/** The chain a row names, extracted again from the clone; throws when the clone does not hold its changes. */
export async function chainOfRow(row: PublishedRow, opts: Pick<RowRecheckOptions, 'repo' | 'discover'>): Promise<ExtractedChain> {
  const listed = await listChanges(opts.repo.clone, opts.discover);
  const find = (head: string, base: string, which: string) => {
    const c = listed.changes.find((x) => x.mergeSha === head && x.baseSha === base);
    if (!c) throw new Error(`${which} (${head.slice(0, 10)} on ${base.slice(0, 10)}) is not a change of ${opts.repo.name}'s ${opts.discover.branch} history in ${opts.repo.clone}`);
    return c;
  };
  const pr1 = find(row.pr1_head_sha, row.base_commit, 'PR1');
  const pr2 = find(row.pr2_head_sha, row.pr2_base_sha, 'PR2');
  const chain: Chain = {
    repo: opts.repo.name, tracker: listed.tracker, pr2, references: [], signals: [], reportedAt: null, advisories: [], duplicates: [], excluded: null,
    pr1, mining_category: row.mining_category === 'szz' || row.mining_category === 'advisory' ? row.mining_category : 'cross_reference',
    szz: { pickedBy: 'reference', candidates: [], unattributedScore: 0, blamedLines: 0, addOnly: false, filteredByTime: 0, metaSkipped: [] },
  };
  const { chain: extracted } = await extractChain(chain, { clone: opts.repo.clone, repoName: repoShortName(opts.repo.name), discussion: NO_DISCUSSION });
  return { ...extracted, instance_id: row.instance_id };
}

/** Validate each published row again (one at a time) and say whether it holds. */
export async function recheckRows(rows: readonly PublishedRow[], opts: RowRecheckOptions): Promise<RowRecheck[]> {
  return rerunEach(rows, opts, (r) => r.instance_id, async (work, row): Promise<Exclude<RowVerdict, { verdict: 'error' }>> => {
    const { chain } = await work.run(await chainOfRow(row, opts), opts.signal);
    if (chain.excluded) return { verdict: 'fails', reason: chain.excluded.reason, detail: chain.excluded.detail };
    const moved = ROW_SETS.flatMap((field) => {
      const was = new Set(list(row[field]));
      const now = new Set(chain[field]);
      const gone = [...was].filter((t) => !now.has(t)).sort();
      const added = [...now].filter((t) => !was.has(t)).sort();
      return gone.length || added.length ? [`${field}: ${[...gone.map((t) => `-${t}`), ...added.map((t) => `+${t}`)].join(' ')}`] : [];
    });
    return moved.length ? { verdict: 'fails', reason: 'sets_changed', detail: moved.join('; ').slice(0, 1000) } : { verdict: 'holds' };
  });
}
