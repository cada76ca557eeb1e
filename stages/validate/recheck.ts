/**
 * Recheck: validate stored chains again from scratch (no checkpoint, attribution off: the chain's PR1 as
 * stored) and say, field by field, whether the rerun gives the same sets and the same exclusion. What
 * "every row's sets hold when rerun" is measured with; a flaky test caught in one run only shows here.
 */
import { errorMessage } from '../../core/foundation/errors.ts';
import { ExtractedChainSchema, type ExtractedChain } from '../../core/foundation/model/extracted.ts';
import type { ValidatedChain } from '../../core/foundation/model/validated.ts';
import { ChainWork, type ChainWorkOptions } from './validate-and-attribute.ts';

/** The fields a rerun must reproduce. */
export const RECHECKED_SETS = ['FAIL_TO_PASS', 'PASS_TO_PASS', 'p2p_excluded_gold_fail', 'ANTICIPATION_FAIL_TO_PASS', 'PR2_FAIL_TO_PASS', 'PR2_PASS_TO_PASS'] as const;

export interface SetDifference {
  field: (typeof RECHECKED_SETS)[number];
  /** In the stored chain only. */
  stored: string[];
  /** In the rerun only. */
  rerun: string[];
}

/** What a rerun shows of one chain. */
export type RecheckVerdict =
  | { verdict: 'same' }
  | {
      verdict: 'differs';
      sets: SetDifference[];
      /** `reason` (or null) stored → rerun, when the exclusion changed; the rerun's detail says why (an env failure's run). */
      exclusion: { stored: string | null; rerun: string | null; rerunDetail: string | null } | null;
      backend: { stored: string; rerun: string } | null;
      /** How S1 was decided (S1Decision) stored → rerun, when that changed: the same sets from other evidence do not hold. */
      s1: { stored: S1Decision; rerun: S1Decision } | null;
    }
  /** The rerun could not run (Docker, an image): no evidence either way. */
  | { verdict: 'error'; detail: string };

export type RecheckResult = { instance_id: string; wallMs: number } & RecheckVerdict;

/**
 * How a chain's S1 was decided: `overlay`, PR1's test files laid over pr1_base; `base_version`, their base's own
 * version, after the overlaid ones crashed the runner (StateResult.decidedBy); `none`, S1 did not run.
 */
export type S1Decision = 'overlay' | 'base_version' | 'none';

export function s1Decision(v: Pick<ValidatedChain, 'states'>): S1Decision {
  const s1 = v.states.find((s) => s.name === 'S1');
  if (!s1) return 'none';
  return s1.decidedBy ? 'base_version' : 'overlay';
}

/** The chain as extract gave it to validate (validate's own exclusion and sets dropped). */
export function asExtracted(v: ValidatedChain): ExtractedChain {
  const chain = ExtractedChainSchema.parse(v);
  return { ...chain, excluded: v.excluded?.stage === 'extract' ? v.excluded : null };
}

export function compareValidated(stored: ValidatedChain, rerun: ValidatedChain): Omit<Extract<RecheckResult, { verdict: 'differs' }>, 'instance_id' | 'wallMs' | 'verdict'> | null {
  const sets: SetDifference[] = [];
  for (const field of RECHECKED_SETS) {
    const a = new Set(stored[field]);
    const b = new Set(rerun[field]);
    const onlyStored = [...a].filter((t) => !b.has(t)).sort();
    const onlyRerun = [...b].filter((t) => !a.has(t)).sort();
    if (onlyStored.length || onlyRerun.length) sets.push({ field, stored: onlyStored, rerun: onlyRerun });
  }
  const was = stored.excluded?.reason ?? null;
  const now = rerun.excluded?.reason ?? null;
  const exclusion = was === now ? null : { stored: was, rerun: now, rerunDetail: rerun.excluded?.detail ?? null };
  const backend = stored.db_backend === rerun.db_backend ? null : { stored: stored.db_backend, rerun: rerun.db_backend };
  const [s1Was, s1Now] = [s1Decision(stored), s1Decision(rerun)];
  const s1 = s1Was === s1Now ? null : { stored: s1Was, rerun: s1Now };
  return sets.length || exclusion || backend || s1 ? { sets, exclusion, backend, s1 } : null;
}

export interface RecheckOptions extends Omit<ChainWorkOptions, 'poolSize'> {
  signal: AbortSignal;
  onResult?: (r: RecheckResult, done: number, total: number) => void;
}

/**
 * Each item validated again, one at a time, on one ChainWork (`opts.validate` as given but attribution off):
 * `verdictOf` runs it and says what the rerun shows; a rerun that throws (Docker, an image) is `error`, no
 * evidence either way, unless the run was aborted.
 */
export async function rerunEach<T, V extends { verdict: string }>(
  items: readonly T[],
  opts: Omit<RecheckOptions, 'onResult'> & { onResult?: (r: { instance_id: string; wallMs: number } & (V | { verdict: 'error'; detail: string }), done: number, total: number) => void },
  idOf: (item: T) => string,
  verdictOf: (work: ChainWork, item: T) => Promise<V>,
): Promise<Array<{ instance_id: string; wallMs: number } & (V | { verdict: 'error'; detail: string })>> {
  const work = await ChainWork.open({ ...opts, validate: { ...opts.validate, attribution: 'off' }, poolSize: 1 });
  const out: Array<{ instance_id: string; wallMs: number } & (V | { verdict: 'error'; detail: string })> = [];
  try {
    for (const item of items) {
      opts.signal.throwIfAborted();
      const t0 = Date.now();
      let verdict: V | { verdict: 'error'; detail: string };
      try {
        verdict = await verdictOf(work, item);
      } catch (err) {
        if (opts.signal.aborted) throw err;
        verdict = { verdict: 'error', detail: errorMessage(err) };
      }
      const result = { instance_id: idOf(item), wallMs: Date.now() - t0, ...verdict };
      out.push(result);
      opts.onResult?.(result, out.length, items.length);
    }
  } finally {
    await work.close();
  }
  return out;
}

/** Validate each chain again (one at a time, `opts.validate` as given but attribution off) and compare. */
export async function recheckChains(chains: readonly ValidatedChain[], opts: RecheckOptions): Promise<RecheckResult[]> {
  return rerunEach(chains, opts, (c) => c.instance_id, async (work, stored): Promise<Exclude<RecheckVerdict, { verdict: 'error' }>> => {
    const { chain } = await work.run(asExtracted(stored), opts.signal);
    const diff = compareValidated(stored, chain);
    return diff ? { verdict: 'differs', ...diff } : { verdict: 'same' };
  });
}
