import { join } from 'node:path';
import { toJsonl, writeAtomic } from '../../core/artifacts.ts';
import type { StageDef } from '../../core/stage.ts';
import { FORESIGHT_VERSION } from '../../core/version.ts';
import { JudgedChainSchema, type JudgedChain } from '../../core/model/judged.ts';
import { REPO_PATH, runners } from '../../core/env/index.ts';
import { rowSchema, TEST_COLUMNS, VERIFIED_COLUMNS } from './columns.ts';
import { datasetCard } from './dataset-card.ts';
import { testRow, verifiedRow, type RowContext } from './build-rows.ts';
import { writeParquet } from './write-parquet.ts';

const VerifiedRowSchema = rowSchema(VERIFIED_COLUMNS);
const TestRowSchema = rowSchema(TEST_COLUMNS);

/** Where the Hugging Face dataset folder is written: data/<repo>/emit/hf/. */
export function hfDir(outDir: string): string {
  return join(outDir, 'hf');
}

/**
 * emit: the `test` split (chains that passed every gate, v1 schema) and the `verified` config (every
 * chain, with gradeable / exclusion_reason), as Parquet in the Hugging Face layout plus JSONL copies
 * and a dataset card.
 */
export const emitStage: StageDef<JudgedChain, Record<string, unknown>> = {
  name: 'emit',
  entry: import.meta.url,
  config: (cfg) => ({ image: cfg.validate.image }),
  input: JudgedChainSchema,
  output: VerifiedRowSchema,
  async run(chains, ctx) {
    const rc: RowContext = {
      image: ctx.config.validate.image ?? '',
      repoPath: REPO_PATH,
      runners: new Map([...runners.values()].map((r) => [r.name, { testCmd: r.testCmd, script: r.script }])),
    };
    const sorted = [...chains].sort((a, b) => a.instance_id.localeCompare(b.instance_id));
    const verified = sorted.map((c) => VerifiedRowSchema.parse(verifiedRow(c, rc)));
    const test = sorted.filter((c) => c.gradeable && !c.excluded).map((c) => TestRowSchema.parse(testRow(c, rc)));

    const dir = hfDir(ctx.outDir);
    await writeParquet(join(dir, 'data', 'test-00000-of-00001.parquet'), TEST_COLUMNS, test);
    await writeParquet(join(dir, 'verified', 'verified-00000-of-00001.parquet'), VERIFIED_COLUMNS, verified);
    await writeAtomic(join(dir, 'jsonl', 'test.jsonl'), toJsonl(test));
    await writeAtomic(join(dir, 'jsonl', 'verified.jsonl'), toJsonl(verified));
    await writeAtomic(join(dir, 'README.md'), datasetCard({ repo: ctx.repo.name, testRows: test, verifiedRows: verified, foresightVersion: FORESIGHT_VERSION }));
    ctx.log.info(`wrote ${dir}: test ${test.length} rows, verified ${verified.length} rows`);
    return { items: verified, stats: { test_rows: test.length, verified_rows: verified.length, gradeable: verified.filter((r) => r.gradeable).length } };
  },
};
