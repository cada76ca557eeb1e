import { attributionJudge } from './attribution/index.ts';
import { eligibilityJudge } from './eligibility/index.ts';
import { fairnessJudge } from './fairness/index.ts';
import type { JudgeName } from './types.ts';

/** Every judge, by name. */
export const JUDGES = {
  eligibility: eligibilityJudge,
  attribution: attributionJudge,
  fairness: fairnessJudge,
} as const satisfies Record<JudgeName, { name: JudgeName }>;
