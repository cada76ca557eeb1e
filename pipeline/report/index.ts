/**
 * `foresight report`: one self-contained HTML page of an emitted dataset: the exclusion
 * funnel, emit's plots, a filterable table of every mined chain (the `funnel` config), and per chain (#chain=<instance_id>)
 * both diffs (diff2html), the four commits, every set, the per-state outcomes, the verdicts and the
 * exclusion reason; `foresight eval`'s results when they sit beside the dataset (X, Y, gap per model on the
 * overview, each model's per-test outcomes on a chain's view); why a row is not eval_ready.
 *  - read-dataset.ts  the rows (jsonl/funnel.jsonl; the config each reaches from jsonl/verified.jsonl and jsonl/test.jsonl), zod-checked
 *  - read-states.ts   S1–S5 outcomes from data/<repo>/validate/items.jsonl, when the dataset sits beside it
 *  - read-evals.ts    eval's <dataset>/eval/<run>/report.json files, the latest run per model and split
 *  - eval-ready.ts    why a row is not eval_ready (the test split's `quality` flags, else from the verdicts)
 *  - render-page.ts   the page: inline assets, data as escaped JSON, a CSP that loads nothing
 *  - write-report.ts  the whole operation
 */
export { defaultReportPath, writeReport, type ReportOptions, type ReportResult } from './write-report.ts';
export { ReportRowSchema, readReportRows, SET_COLUMNS, type ReportRow, type ReportRows } from './read-dataset.ts';
export { readStates, validateItemsPath, type ChainStates, type StatesRead } from './read-states.ts';
export { renderPage, scriptJson, type ReportPageData } from './render-page.ts';
export { EvalReportFileSchema, readEvals, EVAL_STATUS_CODES, type ChainEval, type EvalModel, type EvalsRead } from './read-evals.ts';
export { evalReadyWhy, flagMeaning, type EvalReadyWhy } from './eval-ready.ts';
