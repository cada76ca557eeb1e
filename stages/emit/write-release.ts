import { copyFile, mkdir, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { toJsonl, writeAtomic } from '../../core/foundation/artifacts.ts';
import { ForesightError } from '../../core/foundation/errors.ts';
import { VERIFIED_COLUMNS } from './columns.ts';
import { datasetCard, type DatasetRepo } from './dataset-card.ts';
import { renderPlots, sumFunnels, type Plot } from './plots.ts';
import { RELEASE_FILE, RELEASE_NAME, type ReleaseManifest } from './release-manifest.ts';
import { readParquetRows, writeParquet } from './write-parquet.ts';

type Row = Record<string, unknown>;

/** A later release of a campaign's dataset: the earlier files as they are, and this release's split of `verified` and `funnel`. */
export interface ReleaseInput {
  /** The previous release's dataset folder (a local copy of what was published). */
  previous: string;
  manifest: ReleaseManifest;
  title: string;
  repoId: string | null;
  foresightVersion: string;
  repos: ReadonlyArray<DatasetRepo>;
  /** This release's `verified` split: the earlier rows validated again (reused or now excluded) and the new ones. */
  verified: ReadonlyArray<Row>;
  /** This release's `funnel` split: every chain it mined. */
  funnel: ReadonlyArray<Row>;
  warn?: (message: string) => void;
}

/** The parquet folders of a dataset: every config's files, copied byte for byte. */
const CONFIG_FOLDER = /^[A-Za-z0-9_-]+$/;

/** The first parquet file of a folder whose name starts with `prefix-` (a split's shard). */
async function shard(dir: string, folder: string, prefix: string): Promise<string | null> {
  const names = (await readdir(join(dir, folder)).catch(() => [] as string[])).filter((n) => n.startsWith(`${prefix}-`) && n.endsWith('.parquet')).sort();
  return names[0] ? join(dir, folder, names[0]) : null;
}

/** The rows of the `test` split and of a `verified` / `funnel` split of a published dataset folder. */
export async function readSplit(dir: string, folder: 'data' | 'verified' | 'funnel', split: string): Promise<Row[]> {
  const file = await shard(dir, folder, split);
  if (!file) throw new ForesightError(`${dir} has no ${folder}/${split}-*.parquet`, { remedy: 'pass the folder of a dataset foresight campaign emit or foresight release wrote (as published)' });
  return readParquetRows(file);
}

/**
 * Write release `manifest.name` into `dir`: every parquet file of the previous release byte for byte (a
 * published split is never rewritten), this release's rows as `verified/<name>-*.parquet` and
 * `funnel/<name>-*.parquet`, the plots of its rows, release.json and the card (all splits declared, the
 * changelog). The JSONL copies hold the frozen `test` and this release's splits (`foresight eval` reads them).
 */
export async function writeRelease(dir: string, input: ReleaseInput): Promise<{ plots: Plot[]; test: Row[] }> {
  const { manifest } = input;
  const name = manifest.name;
  if (!RELEASE_NAME.test(name)) throw new ForesightError(`release name ${name} is not a split name`, { remedy: 'name it with letters, digits and _ (starting with a letter), e.g. r2026_01' });
  for (const folder of ['verified', 'funnel']) {
    if (name === folder || (await shard(input.previous, folder, name))) throw new ForesightError(`the previous release already has a split ${name}`, { remedy: 'name this release differently' });
  }
  await rm(dir, { recursive: true, force: true });
  for (const e of await readdir(input.previous, { withFileTypes: true })) {
    if (!e.isDirectory() || !CONFIG_FOLDER.test(e.name) || ['plots', 'jsonl', 'eval'].includes(e.name)) continue;
    for (const f of await readdir(join(input.previous, e.name))) {
      if (!f.endsWith('.parquet')) continue;
      await mkdir(join(dir, e.name), { recursive: true });
      await copyFile(join(input.previous, e.name, f), join(dir, e.name, f));
    }
  }
  const test = await readSplit(dir, 'data', 'test');
  await writeParquet(join(dir, 'verified', `${name}-00000-of-00001.parquet`), VERIFIED_COLUMNS, input.verified);
  await writeParquet(join(dir, 'funnel', `${name}-00000-of-00001.parquet`), VERIFIED_COLUMNS, input.funnel);
  await writeAtomic(join(dir, 'jsonl', 'test.jsonl'), toJsonl(test));
  await writeAtomic(join(dir, 'jsonl', 'verified.jsonl'), toJsonl(input.verified));
  await writeAtomic(join(dir, 'jsonl', 'funnel.jsonl'), toJsonl(input.funnel));
  const funnel = sumFunnels(input.repos.map((r) => r.funnel));
  const plots = await renderPlots({ funnelRows: input.funnel, testRows: input.verified.filter((r) => r.excluded !== true), funnel }, { warn: input.warn });
  for (const p of plots) await writeAtomic(join(dir, ...p.file.split('/')), p.svg);
  await writeAtomic(join(dir, RELEASE_FILE), `${JSON.stringify(manifest, null, 2)}\n`);
  const card = datasetCard({
    title: input.title,
    repoId: input.repoId,
    repos: input.repos,
    testRows: test,
    verifiedRows: input.verified,
    funnelRows: input.funnel,
    foresightVersion: input.foresightVersion,
    plots,
    changelog: manifest.changelog,
    releaseSplits: manifest.splits,
  });
  await writeAtomic(join(dir, 'README.md'), card);
  return { plots, test };
}
