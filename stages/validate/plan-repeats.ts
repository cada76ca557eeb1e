import { createHash } from 'node:crypto';
import { computeSets, type FileOf } from './compute-sets.ts';
import { STATE_NAMES, type StateName, type StateResult } from '../../core/foundation/model/validated.ts';

/** What one repeat of a state runs: single tests, and whole files (those that did not import). */
export interface RepeatSelection {
  ids: string[];
  files: string[];
  /** How many of `ids` are the deterministic sample of non-candidates (the rest are candidates). */
  sampled: number;
}

/** Non-candidates sampled per repeated state: a tenth of them, at least this many. */
export const MIN_SAMPLE = 2;
const SAMPLE_SHARE = 0.1;

/**
 * Which states to run again, and which of their tests, given the runs so far (folded per state).
 *
 * More runs only ever remove a test from a set (one that changes is flaky and in no set), so a test in
 * no set now can never enter one: only the current members of FAIL_TO_PASS, PASS_TO_PASS,
 * p2p_excluded_gold_fail, PR2_FAIL_TO_PASS, PR2_PASS_TO_PASS and ANTICIPATION_FAIL_TO_PASS (the
 * candidates) need more runs. Each candidate is repeated in every state it ran in, or whose file failed
 * to import there, exactly as often as when every state is repeated: the sets are decided on the same
 * evidence. A state with no candidate is not run again. In a repeated state a deterministic sample of
 * the other tests (seeded by the chain's id, the same tests in every state) is run too, so flakiness
 * outside the sets is still looked for.
 */
export function planRepeats(states: Record<StateName, StateResult>, chainId: string, fileOf: FileOf): Map<StateName, RepeatSelection> {
  const sets = computeSets(states, fileOf);
  const candidates = new Set([
    ...sets.FAIL_TO_PASS,
    ...sets.PASS_TO_PASS,
    ...sets.p2p_excluded_gold_fail,
    ...sets.PR2_FAIL_TO_PASS,
    ...sets.PR2_PASS_TO_PASS,
    ...sets.ANTICIPATION_FAIL_TO_PASS,
  ]);
  const plan = new Map<StateName, RepeatSelection>();
  for (const name of STATE_NAMES) {
    const st = states[name];
    if (st.outcome.kind !== 'ran') continue; // not evidence: repeating cannot turn it into evidence
    const ids: string[] = [];
    const files = new Set<string>();
    const others: string[] = [];
    for (const [id, o] of Object.entries(st.tests)) {
      if (o === 'flaky') continue;
      (candidates.has(id) ? ids : others).push(id);
    }
    for (const id of candidates) {
      if (id in st.tests) continue;
      const file = fileOf(id, st.testFiles);
      if (file !== null && st.collectionErrors.includes(file)) files.add(file);
    }
    if (!ids.length && !files.size) continue;
    const sample = sampleOf(others, chainId, Math.max(MIN_SAMPLE, Math.ceil(others.length * SAMPLE_SHARE)));
    plan.set(name, { ids: [...ids.sort(), ...sample], files: [...files].sort(), sampled: sample.length });
  }
  return plan;
}

/** The `n` ids ranked first by a hash of the chain's id and the test's id: stable across runs and machines. */
export function sampleOf(ids: readonly string[], chainId: string, n: number): string[] {
  const rank = (id: string): string => createHash('sha256').update(`${chainId}\0${id}`).digest('hex');
  return [...ids].map((id) => [rank(id), id] as const).sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)).slice(0, n).map(([, id]) => id).sort();
}
