import { readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { toJsonl, writeAtomic } from '../../core/foundation/artifacts.ts';
import { ForesightError } from '../../core/foundation/errors.ts';
import { TEST_COLUMNS, VERIFIED_COLUMNS } from './columns.ts';
import { datasetCard, type DatasetRepo } from './dataset-card.ts';
import { renderPlots, sumFunnels, type Plot } from './plots.ts';
import { writeParquet, type ColumnSpec } from './write-parquet.ts';

type Row = Record<string, unknown>;

/** A dataset's rows, already built (build-rows.ts), and what its card says about them. */
export interface DatasetInput {
  /** `pretty_name` and the card's heading. */
  title: string;
  /** The Hub dataset (owner/name) when known; null: the card names a placeholder publish replaces. */
  repoId: string | null;
  foresightVersion: string;
  /** Every repository whose chains are rows, with its license and funnel. */
  repos: ReadonlyArray<DatasetRepo>;
  /** The `test` split: the chains that passed every gate (TEST_COLUMNS). */
  test: ReadonlyArray<Row>;
  /** The `verified` config: the same chains (VERIFIED_COLUMNS); a release may add published rows now excluded. */
  verified: ReadonlyArray<Row>;
  /** The `funnel` config: every mined chain with its exclusion (VERIFIED_COLUMNS). */
  funnel: ReadonlyArray<Row>;
  /** Markdown lines of the card's Changelog section (a release's). */
  changelog?: ReadonlyArray<string>;
  /** Where the plots' rendering warnings go. */
  warn?: (message: string) => void;
}

/** The files of a dataset folder, by config: the parquet the card's configs glob and the JSONL copy beside it. */
const FILES: ReadonlyArray<{ key: 'test' | 'verified' | 'funnel'; parquet: string; jsonl: string; columns: readonly ColumnSpec[] }> = [
  { key: 'test', parquet: 'data/test-00000-of-00001.parquet', jsonl: 'jsonl/test.jsonl', columns: TEST_COLUMNS },
  { key: 'verified', parquet: 'verified/verified-00000-of-00001.parquet', jsonl: 'jsonl/verified.jsonl', columns: VERIFIED_COLUMNS },
  { key: 'funnel', parquet: 'funnel/funnel-00000-of-00001.parquet', jsonl: 'jsonl/funnel.jsonl', columns: VERIFIED_COLUMNS },
];

/** Write the plots under the dataset folder, removing any other SVG a previous run left in plots/. */
async function writePlots(dir: string, plots: readonly Plot[]): Promise<void> {
  const keep = new Set(plots.map((p) => p.file));
  const old = await readdir(join(dir, 'plots')).catch(() => [] as string[]);
  for (const f of old) if (f.endsWith('.svg') && !keep.has(`plots/${f}`)) await rm(join(dir, 'plots', f), { force: true });
  for (const p of plots) await writeAtomic(join(dir, ...p.file.split('/')), p.svg);
}

/**
 * Why the rows do not make one dataset, or null: an instance id twice in a config, a row of a repository the
 * input does not name (the card would count it nowhere), or `test` and `verified` disagreeing on which chains
 * passed every gate (each `test` row is a `verified` row not excluded, and each such row is in `test`).
 */
function inconsistency(input: DatasetInput): string | null {
  const repos = new Set(input.repos.map((r) => r.repo));
  if (repos.size !== input.repos.length) return 'a repository is named twice in repos';
  for (const f of FILES) {
    const seen = new Set<unknown>();
    for (const r of input[f.key]) {
      if (seen.has(r.instance_id)) return `${String(r.instance_id)} is twice in \`${f.key}\``;
      seen.add(r.instance_id);
      if (!repos.has(String(r.repo))) return `${String(r.instance_id)} of \`${f.key}\` is of ${String(r.repo)}, which repos does not name`;
    }
  }
  const test = new Set(input.test.map((r) => r.instance_id));
  const holding = new Set(input.verified.filter((r) => r.excluded !== true).map((r) => r.instance_id));
  const onlyTest = [...test].filter((id) => !holding.has(id));
  if (onlyTest.length) return `${onlyTest.join(', ')} in \`test\` but not a \`verified\` row that holds`;
  const onlyVerified = [...holding].filter((id) => !test.has(id));
  if (onlyVerified.length) return `${onlyVerified.join(', ')} in \`verified\`, not excluded, but not in \`test\``;
  return null;
}

/**
 * Write a Hugging Face dataset folder from rows already built: the three configs as Parquet (`data/`, `verified/`,
 * `funnel/`), their JSONL copies (`jsonl/`), the plots and the card. One repository's emit and a dataset of many
 * repositories' merged rows are written alike. Returns the plots the card links.
 */
export async function writeDataset(dir: string, input: DatasetInput): Promise<{ plots: Plot[] }> {
  const bad = inconsistency(input);
  if (bad) throw new ForesightError(`cannot write the dataset ${dir}: ${bad}`, { remedy: 'build `test`, `verified` and `funnel` from the same chains (emit each repository again, then merge its rows)' });
  for (const f of FILES) {
    await writeParquet(join(dir, ...f.parquet.split('/')), f.columns, input[f.key]);
    await writeAtomic(join(dir, ...f.jsonl.split('/')), toJsonl(input[f.key]));
  }
  const funnel = sumFunnels(input.repos.map((r) => r.funnel));
  const plots = await renderPlots({ funnelRows: input.funnel, testRows: input.test, funnel }, { warn: input.warn });
  await writePlots(dir, plots);
  const card = datasetCard({
    title: input.title,
    repoId: input.repoId,
    repos: input.repos,
    testRows: input.test,
    verifiedRows: input.verified,
    funnelRows: input.funnel,
    foresightVersion: input.foresightVersion,
    plots,
    changelog: input.changelog,
  });
  await writeAtomic(join(dir, 'README.md'), card);
  return { plots };
}
