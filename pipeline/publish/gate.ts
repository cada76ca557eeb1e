import { CONFIGS } from '../../stages/emit/index.ts';
import { checkGold } from './check-gold.ts';
import { loadWithDatasets, type LoadReport } from './load-with-datasets.ts';
import { findSecret } from './scan-secrets.ts';
import type { DatasetFile } from './select-files.ts';

/**
 * The gate before anything is written to the hub: (a) the files load with the real `datasets` library
 * through the card's configs, which are the three the card promises (`test`, `verified`, `funnel`), every
 * `test` row also a `verified` row; (b) every `test` row passed emit's gold self-check; (c) no registered
 * secret is in any file or decoded cell. The first refusal wins; each says what to do.
 */
export type GateRefusal = 'datasets_load_failed' | 'no_test_split' | 'config_missing' | 'configs_disagree' | 'gold_check_missing' | 'secret_in_upload';

export type GateOutcome =
  | { kind: 'passed'; summary: string; report: LoadReport }
  | { kind: 'refused'; reason: GateRefusal; message: string; remedy: string };

export interface GateOptions {
  /** The staged copy of exactly the files to upload (what `datasets` loads). */
  staged: string;
  files: readonly DatasetFile[];
  /** emit's folder: items.jsonl + manifest.json. */
  emitDir: string;
  python: string;
  /** Scratch folder for the loader's row dump and HF_HOME. */
  work: string;
  signal?: AbortSignal;
}

/** The config and split that hold the `test` rows (the card's default config). */
export const TEST_CONFIG = 'default';
export const TEST_SPLIT = 'test';
/** The other configs the card declares (stages/emit's CONFIGS), each with its one split: the gated rows in the verified schema, and every mined chain. */
const OTHER_CONFIGS = CONFIGS.filter((c) => c.config_name !== TEST_CONFIG).map((c) => ({ config: c.config_name, split: c.split }));

const oneLine = (s: string): string => s.replace(/\s+/g, ' ').trim();
const RE_EMIT = 'rerun foresight emit so the card and the parquet hold the three configs (test, verified, funnel), then publish again';

export async function runGate(opts: GateOptions): Promise<GateOutcome> {
  const refuse = (reason: GateRefusal, message: string, remedy: string): GateOutcome => ({ kind: 'refused', reason, message: oneLine(message), remedy });
  const loaded = await loadWithDatasets({ python: opts.python, dir: opts.staged, work: opts.work, signal: opts.signal });
  if (loaded.kind === 'failed') {
    return refuse('datasets_load_failed', `the dataset does not load with the datasets library (${opts.python}): ${loaded.detail}`, 'rerun foresight emit to rewrite the parquet files and the card, then publish again');
  }
  const test = loaded.report.configs[TEST_CONFIG]?.[TEST_SPLIT];
  if (!test) {
    return refuse('no_test_split', `the card declares no \`${TEST_SPLIT}\` split in its \`${TEST_CONFIG}\` config (datasets found: ${Object.keys(loaded.report.configs).join(', ') || 'none'})`, RE_EMIT);
  }
  const missing = OTHER_CONFIGS.filter((c) => !loaded.report.configs[c.config]?.[c.split]);
  if (missing.length) {
    return refuse('config_missing', `the card declares no ${missing.map((c) => `\`${c.config}\` config (split \`${c.split}\`)`).join(' and ')} (datasets found: ${Object.keys(loaded.report.configs).join(', ')})`, RE_EMIT);
  }
  // `verified` holds the gated rows in its own schema (a release may add rows now excluded): every `test` row is one.
  const verified = new Set(loaded.report.configs['verified']!['verified']!.instance_ids);
  const lacking = test.instance_ids.filter((id) => !verified.has(id));
  if (lacking.length) {
    return refuse('configs_disagree', `${lacking.length} test row(s) are not in the \`verified\` config: ${lacking.slice(0, 3).join(', ')}${lacking.length > 3 ? ', …' : ''}`, RE_EMIT);
  }
  const gold = await checkGold({ emitDir: opts.emitDir, testIds: test.instance_ids });
  if (gold.kind === 'refused') return refuse('gold_check_missing', gold.message, gold.remedy);
  const secret = await findSecret(opts.files, loaded.dump);
  if (secret) {
    return refuse('secret_in_upload', `${secret.where} holds the value of ${secret.secret}: publishing would leak it`, 'remove it from the dataset (rerun foresight emit, which redacts registered secrets) and publish again');
  }
  const splits = Object.entries(loaded.report.configs).flatMap(([c, ss]) => Object.entries(ss).map(([s, v]) => `${c}/${s} ${v.rows} rows`));
  return {
    kind: 'passed',
    report: loaded.report,
    summary: `gate passed: ${gold.rows} test row(s), each with emit's gold self-check pass; datasets ${loaded.report.datasets} loads ${splits.join(', ')}; no secret in ${opts.files.length} files`,
  };
}
