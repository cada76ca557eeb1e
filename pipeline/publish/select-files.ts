import { lstat, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { ForesightError } from '../../core/foundation/errors.ts';
import { RELEASE_FILE } from '../../stages/emit/index.ts';

/** A file of the dataset as it goes to the hub. */
export interface DatasetFile {
  /** Path in the hub repository (posix). */
  path: string;
  /** Where it is read from. */
  local: string;
  size: number;
}

export interface Selection {
  files: DatasetFile[];
  /** What the emitted folder holds that is not uploaded, with why. */
  leftOut: string[];
}

/**
 * The folders the dataset owns on the hub: a publish replaces their content. The card's configs glob
 * them (`data/test-*`), so a shard left from an earlier publish would be loaded as rows.
 */
export const DATASET_FOLDERS = ['data/', 'verified/', 'funnel/', 'plots/'] as const;

/** Which files of each folder are the dataset. */
const FOLDER_FILES: Record<string, RegExp> = { data: /\.parquet$/, verified: /\.parquet$/, funnel: /\.parquet$/, plots: /\.svg$/ };

/**
 * Why a top-level entry is left out. jsonl/ stays local: the hub loads the parquet through the card's
 * `configs`, `foresight eval` reads the JSONL copies here, and a second copy of every row on the hub
 * would be a second source of truth nobody checks.
 */
const WHY_LEFT_OUT: Record<string, string> = {
  jsonl: 'JSONL copies, read locally by foresight eval; the hub loads the parquet through the card',
  eval: 'eval results',
};

/** Locale-free order: the same plan on every machine. */
const byCodePoint = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

async function regularFiles(dir: string): Promise<Array<{ name: string; size: number }>> {
  const out: Array<{ name: string; size: number }> = [];
  for (const name of (await readdir(dir)).sort(byCodePoint)) {
    const st = await lstat(join(dir, name));
    // A symlink could point anywhere on the machine: never uploaded.
    if (st.isFile()) out.push({ name, size: st.size });
  }
  return out;
}

/**
 * The files of an emitted dataset folder that go to the hub: README.md (the card), data/*.parquet
 * (the `test` split), verified/*.parquet (the `verified` config: the same chains), funnel/*.parquet
 * (the `funnel` config: every mined chain), plots/*.svg when present, and a campaign's release.json (what
 * each release mined, for the next one).
 * Nothing else: not eval/ results, logs or the JSONL copies.
 */
export async function selectFiles(dataset: string): Promise<Selection> {
  const entries = await readdir(dataset, { withFileTypes: true }).catch((cause: unknown) => {
    throw new ForesightError(`--dataset ${dataset} cannot be read`, { remedy: 'pass the emitted dataset folder (data/<owner>__<name>/emit/hf)', cause });
  });
  const files: DatasetFile[] = [];
  const leftOut: string[] = [];
  for (const e of entries.sort((a, b) => byCodePoint(a.name, b.name))) {
    if ((e.name === 'README.md' || e.name === RELEASE_FILE) && e.isFile()) {
      files.push({ path: e.name, local: join(dataset, e.name), size: (await lstat(join(dataset, e.name))).size });
    } else if (e.isDirectory() && FOLDER_FILES[e.name]) {
      for (const f of await regularFiles(join(dataset, e.name))) {
        if (FOLDER_FILES[e.name]!.test(f.name)) files.push({ path: `${e.name}/${f.name}`, local: join(dataset, e.name, f.name), size: f.size });
        else leftOut.push(`${e.name}/${f.name} (not part of the dataset)`);
      }
    } else {
      leftOut.push(`${e.name}${e.isDirectory() ? '/' : ''} (${WHY_LEFT_OUT[e.name] ?? 'not part of the dataset'})`);
    }
  }
  const missing = [
    files.some((f) => f.path === 'README.md') ? null : 'README.md',
    files.some((f) => f.path.startsWith('data/')) ? null : 'data/*.parquet',
    files.some((f) => f.path.startsWith('verified/')) ? null : 'verified/*.parquet',
    // A folder emitted before the funnel config: its `verified` holds every chain, which the card now says it does not.
    files.some((f) => f.path.startsWith('funnel/')) ? null : 'funnel/*.parquet',
  ].filter((m): m is string => m !== null);
  if (missing.length) {
    throw new ForesightError(`${dataset} is not an emitted dataset: ${missing.join(', ')} missing`, {
      remedy: 'run foresight emit for the repository, again with --force for a folder an older foresight wrote (or pass --dataset data/<owner>__<name>/emit/hf)',
    });
  }
  return { files, leftOut };
}
