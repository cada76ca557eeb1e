import type { Labels } from '../../core/foundation/model/verdicts.ts';

export type Severity = 'major' | 'minor' | 'not_a_bug';

const IMPACT = { none: 0, low: 1, medium: 2, high: 3 } as const;
const REACH = { narrow: -1, moderate: 0, wide: 1 } as const;

/**
 * Severity from the three ODC-style axes, deterministically (never asked of a model, so it cannot drift):
 * - not_a_bug when there is no impact or no failure at all;
 * - otherwise points = impact (low 1, medium 2, high 3) + reach (narrow -1, moderate 0, wide +1)
 *   + detectability (silent +1: wrong results nobody notices cost more than a loud error; loud 0);
 * - major when points >= 3 and the impact is at least medium (a cosmetic defect stays minor however
 *   widespread); minor otherwise.
 */
export function severity(l: Pick<Labels, 'impact' | 'reach' | 'failure_mode'>): Severity {
  if (l.impact === 'none' || l.failure_mode === 'none') return 'not_a_bug';
  const points = IMPACT[l.impact] + REACH[l.reach] + (l.failure_mode === 'silent' ? 1 : 0);
  return points >= 3 && IMPACT[l.impact] >= 2 ? 'major' : 'minor';
}
