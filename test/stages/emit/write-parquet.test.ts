import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ForesightError } from '../../../core/foundation/errors.ts';
import { datasetCard } from '../../../stages/emit/dataset-card.ts';
import {
  readParquetRowCount,
  readParquetTable,
  writeParquet,
  type ColumnSpec,
} from '../../../stages/emit/write-parquet.ts';
import { pythonWithDatasets, runPython } from '../../helpers/python.ts';

let dir: string;
let hfEnv: Record<string, string>;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'foresight-write-parquet-'));
  hfEnv = { HF_HOME: join(dir, 'hf-home'), HF_DATASETS_OFFLINE: '1', HF_HUB_OFFLINE: '1' };
  // First run on a fresh clone creates the venv (minutes); the hook timeout is 600 s.
  const started = Date.now();
  await pythonWithDatasets();
  const secs = (Date.now() - started) / 1000;
  if (secs > 5) console.info(`python venv ready after ${secs.toFixed(1)} s`);
});

afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

/**
 * Python side: load with the real `datasets` library and dump features and rows as JSON.
 * Python ints are sent as strings (exact beyond 2^53); floats use repr, which JS parses exactly.
 * argv: mode ("file" | "repo"), path, [config], split.
 */
const LOAD_AND_DUMP = String.raw`
import json, sys, datasets
mode, path = sys.argv[1], sys.argv[2]
if mode == "file":
    ds = datasets.load_dataset("parquet", data_files=path, split="train")
else:
    config, split = sys.argv[3], sys.argv[4]
    ds = datasets.load_dataset(path, None if config == "-" else config, split=split)

def enc(v):
    if isinstance(v, bool) or v is None or isinstance(v, (str, float)):
        return v
    if isinstance(v, int):
        return {"int": str(v)}
    raise TypeError(f"unexpected python value {v!r}")

features = {k: (f.dtype if isinstance(f, datasets.Value) else repr(f)) for k, f in ds.features.items()}
rows = [{k: enc(v) for k, v in r.items()} for r in ds]
sys.stdout.write(json.dumps({"columns": ds.column_names, "features": features, "num_rows": ds.num_rows, "rows": rows}, ensure_ascii=True))
`;

/** Temp files left in a folder (writeAtomic names them `<file>.<pid>-<n>.incomplete`). */
async function leftovers(folder: string): Promise<string[]> {
  return existsSync(folder) ? (await readdir(folder)).filter((f) => f.endsWith('.incomplete')) : [];
}

interface Dump {
  columns: string[];
  features: Record<string, string>;
  num_rows: number;
  rows: Record<string, unknown>[];
}

async function loadWithDatasets(args: string[]): Promise<Dump> {
  return JSON.parse(await runPython(LOAD_AND_DUMP, args, { env: hfEnv })) as Dump;
}

/** What the python dump should contain for a JS row: bigint → {int}, missing → null. */
function expectedPython(columns: readonly ColumnSpec[], row: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(
    columns.map((c) => {
      const v = row[c.name];
      if (v === undefined || v === null) return [c.name, null];
      if (c.type === 'int64') return [c.name, { int: String(v) }];
      return [c.name, v];
    }),
  );
}

const DIFF = [
  'diff --git a/src/app.ts b/src/app.ts',
  'index 3b18e51..a9c2f0d 100644',
  '--- a/src/app.ts',
  '+++ b/src/app.ts',
  '@@ -1,4 +1,5 @@',
  ' import { run } from "./run";',
  '-const limit = 10;',
  '+const limit = 20; // était 10',
  '+\tconst tab = "\\t";',
  ' ',
  ' run(limit);',
  '\\ No newline at end of file',
  '',
].join('\n');

const COLUMNS: readonly ColumnSpec[] = [
  { name: 'chain_id', type: 'string', nullable: false },
  { name: 'pr1_number', type: 'int64', nullable: false },
  { name: 'pr2_number', type: 'int64', nullable: true },
  { name: 'score', type: 'float64', nullable: true },
  { name: 'verified', type: 'bool', nullable: false },
  { name: 'flaky', type: 'bool', nullable: true },
  { name: 'fix_diff', type: 'string', nullable: false },
  { name: 'labels', type: 'string', nullable: false },
  { name: 'note', type: 'string', nullable: true },
];

const ROWS: Record<string, unknown>[] = [
  {
    chain_id: 'octo/repo#12->#15',
    pr1_number: 12n,
    pr2_number: 15,
    score: 0.1 + 0.2,
    verified: true,
    flaky: false,
    fix_diff: DIFF,
    labels: JSON.stringify(['bug', 'regression', 'naïve "quoted"']),
    note: 'unicode: ünïcödé — 日本語 — עברית — 🦀🚀 — e\u0301 — \u0000nul',
  },
  {
    chain_id: 'octo/repo#20->#21',
    pr1_number: 9_223_372_036_854_775_807n, // int64 max, beyond 2^53
    pr2_number: null,
    score: null,
    verified: false,
    flaky: null,
    fix_diff: '',
    labels: '[]',
    note: null,
  },
  {
    chain_id: 'ünï/cödé#1->#2',
    pr1_number: -9_223_372_036_854_775_808n, // int64 min
    // pr2_number, score, flaky, note missing entirely → null
    verified: true,
    fix_diff: 'line1\r\nline2\r\n',
    labels: JSON.stringify([]),
  },
  {
    chain_id: 'x',
    pr1_number: 0,
    pr2_number: -1n,
    score: -1.5e300,
    verified: false,
    flaky: true,
    fix_diff: DIFF.repeat(50),
    labels: JSON.stringify([{ nested: [1, 2] }]),
    note: '',
  },
];

describe('writeParquet → Hugging Face datasets', () => {
  it('round-trips every column type, nulls, unicode, diffs and JSON strings through datasets.load_dataset', async () => {
    const path = join(dir, 'all-types.parquet');
    await writeParquet(path, COLUMNS, ROWS);
    expect(await leftovers(dir)).toEqual([]);
    expect(await readParquetRowCount(path)).toBe(ROWS.length);

    const started = Date.now();
    const dump = await loadWithDatasets(['file', path]);
    console.info(`datasets.load_dataset (python start + import + load) took ${Date.now() - started} ms`);

    expect(dump.columns).toEqual(COLUMNS.map((c) => c.name));
    expect(dump.features).toEqual({
      chain_id: 'string',
      pr1_number: 'int64',
      pr2_number: 'int64',
      score: 'float64',
      verified: 'bool',
      flaky: 'bool',
      fix_diff: 'string',
      labels: 'string',
      note: 'string',
    });
    expect(dump.num_rows).toBe(ROWS.length);
    expect(dump.rows).toEqual(ROWS.map((r) => expectedPython(COLUMNS, r)));
    // The JSON-encoded list column decodes back to the same list.
    expect(JSON.parse(dump.rows[0]!.labels as string)).toEqual(['bug', 'regression', 'naïve "quoted"']);
  });

  it('records nullability in the Parquet schema and reads back in JS with the same types', async () => {
    const path = join(dir, 'all-types.parquet');
    const table = await readParquetTable(path);
    expect(table.schema.fields.map((f) => [f.name, String(f.type), f.nullable])).toEqual([
      ['chain_id', 'Utf8', false],
      ['pr1_number', 'Int64', false],
      ['pr2_number', 'Int64', true],
      ['score', 'Float64', true],
      ['verified', 'Bool', false],
      ['flaky', 'Bool', true],
      ['fix_diff', 'Utf8', false],
      ['labels', 'Utf8', false],
      ['note', 'Utf8', true],
    ]);
    const schema = await runPython(
      'import sys, pyarrow.parquet as pq\n' +
        's = pq.read_schema(sys.argv[1])\n' +
        'print("\\n".join(f"{f.name} {f.type} {f.nullable}" for f in s))\n' +
        'print(pq.ParquetFile(sys.argv[1]).metadata.row_group(0).column(0).compression)',
      [path],
    );
    expect(schema.trim().split('\n')).toEqual([
      'chain_id string False',
      'pr1_number int64 False',
      'pr2_number int64 True',
      'score double True',
      'verified bool False',
      'flaky bool True',
      'fix_diff string False',
      'labels string False',
      'note string True',
      'ZSTD',
    ]);
  });

  it('writes a valid file with the schema for zero rows', async () => {
    const path = join(dir, 'empty.parquet');
    await writeParquet(path, COLUMNS, []);
    expect(await readParquetRowCount(path)).toBe(0);
    expect((await readParquetTable(path)).schema.fields.map((f) => f.name)).toEqual(COLUMNS.map((c) => c.name));
    // pyarrow reads it with the schema. (datasets 5.0 itself refuses any 0-row parquet split —
    // "corresponds to no data" — whoever writes the file, so a published split must not be empty.)
    const out = await runPython(
      'import sys, pyarrow.parquet as pq\nt = pq.read_table(sys.argv[1])\nprint(t.num_rows, ",".join(f"{f.name}:{f.type}" for f in t.schema))',
      [path],
    );
    expect(out.trim()).toBe(
      '0 chain_id:string,pr1_number:int64,pr2_number:int64,score:double,verified:bool,flaky:bool,fix_diff:string,labels:string,note:string',
    );
  });

  it('loads a Hugging Face repo layout with a default, a verified and a funnel config', async () => {
    const repo = join(dir, 'hf-repo');
    const cols: readonly ColumnSpec[] = [
      { name: 'chain_id', type: 'string', nullable: false },
      { name: 'pr1_number', type: 'int64', nullable: false },
      { name: 'verified', type: 'bool', nullable: false },
    ];
    const testRows = [
      { chain_id: 'a', pr1_number: 1n, verified: true },
      { chain_id: 'b', pr1_number: 2n, verified: false },
      { chain_id: 'ç', pr1_number: 3n, verified: true },
    ];
    const verifiedRows = testRows.filter((r) => r.verified);
    const funnelRows = [...testRows, { chain_id: 'd', pr1_number: 4n, verified: false }];
    await writeParquet(join(repo, 'data', 'test-00000-of-00001.parquet'), cols, testRows);
    await writeParquet(join(repo, 'verified', 'verified-00000-of-00001.parquet'), cols, verifiedRows);
    await writeParquet(join(repo, 'funnel', 'funnel-00000-of-00001.parquet'), cols, funnelRows);
    // The card emit writes, so a change to its configs is caught by the real datasets loader.
    const funnel = { candidates: null, chains: 4, gradeable: 3, judged: 3, test: 3 };
    const card = datasetCard({ title: 'Fix-chains of acme/widgets', repos: [{ repo: 'acme/widgets', license: { kind: 'none', commit: 'a'.repeat(40) }, funnel }], testRows, verifiedRows, funnelRows, foresightVersion: 'test' });
    await writeFile(join(repo, 'README.md'), card);
    expect((await readdir(repo)).sort()).toEqual(['README.md', 'data', 'funnel', 'verified']);

    const started = Date.now();
    const test = await loadWithDatasets(['repo', repo, '-', 'test']);
    const verified = await loadWithDatasets(['repo', repo, 'verified', 'verified']);
    const funnelBack = await loadWithDatasets(['repo', repo, 'funnel', 'funnel']);
    console.info(`three datasets.load_dataset(dir, ...) calls took ${Date.now() - started} ms`);

    expect(test.features).toEqual({ chain_id: 'string', pr1_number: 'int64', verified: 'bool' });
    expect(test.rows).toEqual(testRows.map((r) => expectedPython(cols, r)));
    expect(verified.features).toEqual(test.features);
    expect(verified.rows).toEqual(verifiedRows.map((r) => expectedPython(cols, r)));
    expect(funnelBack.rows).toEqual(funnelRows.map((r) => expectedPython(cols, r)));
    // Nothing was cached outside the temp HF_HOME.
    expect(existsSync(join(dir, 'hf-home'))).toBe(true);
  });
});

describe('writeParquet input errors', () => {
  const cols: readonly ColumnSpec[] = [
    { name: 'id', type: 'int64', nullable: false },
    { name: 'name', type: 'string', nullable: false },
    { name: 'score', type: 'float64', nullable: true },
    { name: 'ok', type: 'bool', nullable: true },
  ];
  const good = { id: 1n, name: 'n', score: 1, ok: true };

  async function expectForesightError(rows: Record<string, unknown>[], ...fragments: (string | RegExp)[]) {
    const path = join(dir, 'errors', 'out.parquet');
    const err = await writeParquet(path, cols, rows).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ForesightError);
    const fe = err as ForesightError;
    for (const f of fragments) expect(fe.message).toMatch(f);
    expect(fe.remedy.length).toBeGreaterThan(0);
    expect(await leftovers(join(dir, 'errors'))).toEqual([]);
    return fe;
  }

  it('rejects null and missing values in non-nullable columns', async () => {
    await expectForesightError([good, { ...good, name: null }], 'row 1', '"name"', 'null', 'non-nullable');
    const { id: _id, ...noId } = good;
    await expectForesightError([good, good, noId], 'row 2', '"id"', 'undefined (missing)');
  });

  it('rejects values of the wrong JS type, naming row, column and value type', async () => {
    await expectForesightError([{ ...good, id: '7' }], 'row 0', '"id"', 'got string');
    await expectForesightError([good, { ...good, id: 1.5 }], 'row 1', '"id"', 'non-integer');
    await expectForesightError([{ ...good, id: 2 ** 60 }], 'row 0', '"id"', 'MAX_SAFE_INTEGER');
    await expectForesightError([{ ...good, id: 2n ** 64n }], 'row 0', '"id"', 'int64 range');
    await expectForesightError([{ ...good, score: 3n }], 'row 0', '"score"', 'got bigint');
    await expectForesightError([{ ...good, score: '1.0' }], 'row 0', '"score"', 'got string');
    await expectForesightError([{ ...good, ok: 'true' }], 'row 0', '"ok"', 'got string');
    await expectForesightError([{ ...good, ok: 1 }], 'row 0', '"ok"', 'got number');
    await expectForesightError([{ ...good, name: ['a'] }], 'row 0', '"name"', 'got array');
    await expectForesightError([{ ...good, name: { a: 1 } }], 'row 0', '"name"', 'got object');
  });

  it('rejects keys that are not declared columns, and non-object rows', async () => {
    await expectForesightError([{ ...good, nmae: 'typo' }], 'row 0', '"nmae"', 'not a declared column');
    await expectForesightError([good, null as unknown as Record<string, unknown>], 'row 1', 'not an object');
  });

  it('rejects bad column specs', async () => {
    const path = join(dir, 'errors', 'spec.parquet');
    await expect(writeParquet(path, [], [])).rejects.toBeInstanceOf(ForesightError);
    await expect(
      writeParquet(path, [cols[0]!, { ...cols[1]!, name: 'id' }], []),
    ).rejects.toThrow(/declared twice/);
    await expect(
      writeParquet(path, [{ name: 'x', type: 'int32' as never, nullable: false }], []),
    ).rejects.toThrow(/unknown type "int32"/);
  });

  it('leaves an existing file untouched when a write fails', async () => {
    const path = join(dir, 'errors', 'keep.parquet');
    await writeParquet(path, cols, [good, good]);
    await expect(writeParquet(path, cols, [{ ...good, id: 'x' }])).rejects.toBeInstanceOf(ForesightError);
    expect(await readParquetRowCount(path)).toBe(2);
    expect(await leftovers(join(dir, 'errors'))).toEqual([]);
  });

  it('a write the file system refuses is a ForesightError naming the file, with no temp file left', async () => {
    const blocker = join(dir, 'errors', 'not-a-folder');
    await mkdir(join(dir, 'errors'), { recursive: true });
    await writeFile(blocker, 'a file where the output folder should be');
    const path = join(blocker, 'out.parquet');
    const err = await writeParquet(path, cols, [good]).then(() => undefined, (e: unknown) => e);
    expect(err).toBeInstanceOf(ForesightError);
    expect((err as ForesightError).message.startsWith(`could not write ${path}: `)).toBe(true);
    expect((err as ForesightError).message).toMatch(/ENOTDIR|EEXIST/);
    expect((err as ForesightError).remedy).toBe('check that the output directory is writable and the disk is not full');
    expect((err as ForesightError).external).toBe(true);

    // A folder where the file should be: the temp file is written, the rename fails and the temp file is removed.
    const occupied = join(dir, 'errors', 'occupied.parquet');
    await mkdir(join(occupied, 'child'), { recursive: true });
    await expect(writeParquet(occupied, cols, [good])).rejects.toThrow(/^could not write .*occupied\.parquet: /);
    expect(await leftovers(join(dir, 'errors'))).toEqual([]);
  });

  it('reports an unreadable file as a ForesightError', async () => {
    const path = join(dir, 'errors', 'garbage.parquet');
    await mkdir(join(dir, 'errors'), { recursive: true });
    await writeFile(path, 'not parquet');
    await expect(readParquetRowCount(path)).rejects.toBeInstanceOf(ForesightError);
    await expect(readParquetRowCount(join(dir, 'errors', 'missing.parquet'))).rejects.toBeInstanceOf(ForesightError);
  });
});
