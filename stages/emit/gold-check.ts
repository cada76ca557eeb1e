import type { GradeResult } from '../../core/env/index.ts';

/**
 * Why the gold self-check failed, or null when it passed: graded with PR1's own patch, X must be 100%
 * (every FAIL_TO_PASS passes), Y 0% (every ANTICIPATION_FAIL_TO_PASS still fails: PR1 did not anticipate
 * it) and no PASS_TO_PASS test may regress. A run that is no evidence fails the check too: a row nobody
 * can grade does not belong in `test`.
 */
export function goldProblem(g: GradeResult): { reason: 'gold_check_failed'; detail: string } | null {
  const fail = (detail: string) => ({ reason: 'gold_check_failed' as const, detail });
  if (g.kind === 'patch_failed') return fail(`PR1's patch does not apply in the eval image: ${g.detail.split('\n')[0]}`);
  const notPassing = (m: Record<string, string>) => Object.entries(m).filter(([, s]) => s !== 'pass').map(([id]) => id);
  const problems: string[] = [];
  if (g.x.kind === 'infra') problems.push(`X run no evidence: ${g.x.detail}`);
  else if (g.x.kind === 'scored' && g.x.value < 1) problems.push(`FAIL_TO_PASS not passing: ${notPassing(g.f2p).join(', ')}`);
  if (g.p2pRegressions?.length) problems.push(`PASS_TO_PASS regressed: ${g.p2pRegressions.join(', ')}`);
  if (g.y.kind === 'infra') problems.push(`Y run no evidence: ${g.y.detail}`);
  else if (g.y.kind === 'scored' && g.y.value > 0) problems.push(`ANTICIPATION_FAIL_TO_PASS passing with PR1 alone: ${Object.entries(g.anti).filter(([, s]) => s === 'pass').map(([id]) => id).join(', ')}`);
  return problems.length ? fail(problems.join('; ')) : null;
}
