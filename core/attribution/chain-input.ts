/** What a validated chain gives a bisection: PR2's fail->pass tests and files, and what blame and references named. */
import type { PullRequest } from '../foundation/model/change.ts';
import type { ValidatedChain } from '../foundation/model/validated.ts';
import type { BisectOptions } from './bisect.ts';

export type ChainBisectInput = Pick<BisectOptions, 'fix' | 'failToPass' | 'testFiles' | 'overlayFiles' | 'candidates'> & {
  /** Blame's top change (PullRequest.id), or null. */
  blame: string | null;
  /** The change an explicit reference (or a revert) named as PR1, or null. */
  reference: string | null;
};

/**
 * The bisection input of a chain: PR2's base (where its fail->pass tests fail) and head (whose test and
 * support files are laid over), and blame's candidates as the commits that merged them, best first.
 */
export function chainBisectInput(chain: ValidatedChain, changes: readonly PullRequest[]): ChainBisectInput {
  const byId = new Map(changes.map((c) => [c.id, c]));
  const candidates = chain.szz.candidates.map((c) => byId.get(c.change)?.mergeSha).filter((s): s is string => s !== undefined);
  const referenced = chain.szz.pickedBy === 'reference' || chain.szz.pickedBy === 'reference_confirmed_by_blame' || chain.szz.pickedBy === 'revert_target';
  return {
    fix: { baseSha: chain.pr2_base, headSha: chain.pr2_head },
    failToPass: chain.PR2_FAIL_TO_PASS,
    testFiles: chain.anticipation_test_files,
    overlayFiles: chain.anticipation_overlay_files,
    candidates,
    blame: chain.szz.candidates[0]?.change ?? null,
    reference: referenced ? chain.pr1.id : null,
  };
}
