/**
 * `foresight eval`: score an agent's predictions, or the gold patches, on an emitted dataset.
 * X = share of FAIL_TO_PASS passing, Y = share of ANTICIPATION_FAIL_TO_PASS passing, gap = X − Y, per
 * instance and aggregated, graded in each row's tier-3 eval image (core/env gradeInstance).
 *  - rows.ts         the split's rows (zod; list fields and the grading bundle are JSON strings), --merged-after's filter
 *  - predictions.ts  SWE-bench predictions, or the gold ones
 *  - run.ts          grading, resumable per instance
 *  - report.ts       the JSON report and the printed table
 */
export { gradeLimits } from '../../core/env/index.ts';
export { runEval, runName, type EvalOptions, type EvalOutcome } from './run.ts';
export { GOLD_MODEL, goldPredictions, PredictionSchema, readPredictions, type Prediction } from './predictions.ts';
export { EvalRowSchema, readRows, shownDate, SPLITS, splitPath, type DatasetRows, type EvalRow, type MergedAfter, type Split } from './rows.ts';
export { aggregate, formatReport, instanceReport, InstanceReportSchema, type EvalAggregate, type EvalReport, type InstanceReport } from './report.ts';
