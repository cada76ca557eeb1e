import { attributionJudge } from './attribution/index.ts';
import { eligibilityJudge } from './eligibility/index.ts';
import { fairnessJudge } from './fairness/index.ts';
import { labelsJudge } from './labels/index.ts';
import { pr1RepairWriter } from './pr1-repair/index.ts';
import { pr2SolvabilityJudge } from './pr2-solvability/index.ts';
import { pr2StatementWriter } from './pr2-statement/index.ts';
import { solvabilityJudge } from './solvability/index.ts';
import type { Judge, JudgeName } from './types.ts';

/** Every judge and writer, by name. */
export const JUDGES = {
  eligibility: eligibilityJudge,
  attribution: attributionJudge,
  solvability: solvabilityJudge,
  fairness: fairnessJudge,
  labels: labelsJudge,
  pr2_solvability: pr2SolvabilityJudge,
  pr1_repair: pr1RepairWriter,
  pr2_statement: pr2StatementWriter,
} as const satisfies Record<JudgeName, Judge<any>>;
