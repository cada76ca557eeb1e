/**
 * Write rows to a Parquet file with an explicit, typed schema (apache-arrow in JS, parquet-wasm for
 * the Parquet encoding). The output reads back with Hugging Face `datasets` as features
 * string / int64 / float64 / bool.
 */
import { readFile } from 'node:fs/promises';
import {
  Bool,
  Field,
  Float64,
  Int64,
  RecordBatch,
  Schema,
  Struct,
  Table,
  Utf8,
  makeData,
  tableFromIPC,
  tableToIPC,
  makeBuilder,
  type DataType,
} from 'apache-arrow';
import { writeAtomic } from '../../core/foundation/artifacts.ts';
import { ForesightError } from '../../core/foundation/errors.ts';

export type ColumnType = 'string' | 'int64' | 'float64' | 'bool';
export interface ColumnSpec {
  name: string;
  type: ColumnType;
  nullable: boolean;
}

type ParquetWasm = typeof import('parquet-wasm');

/** Rows per Arrow record batch: keeps each batch's Utf8 (int32) offsets far from 2 GiB. */
const BATCH_ROWS = 4096;
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

let parquetWasm: Promise<ParquetWasm> | undefined;

/**
 * parquet-wasm 0.8's `node` export (picked by Node's resolver for a bare `parquet-wasm` import,
 * also under ESM, tsx and vitest) is a CommonJS build that reads and instantiates its .wasm
 * synchronously when first imported, so there is no `initWasm()` to call. Import it once, lazily.
 */
function loadParquetWasm(): Promise<ParquetWasm> {
  parquetWasm ??= import('parquet-wasm').catch((cause: unknown) => {
    parquetWasm = undefined;
    throw new ForesightError(`could not load parquet-wasm: ${describeError(cause)}`, {
      remedy: 'run `npm ci` so node_modules/parquet-wasm (and its .wasm file) is present',
      external: true,
      cause,
    });
  });
  return parquetWasm;
}

function describeError(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

function jsTypeOf(value: unknown): string {
  if (value === null) return 'null';
  if (value === undefined) return 'undefined (missing)';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') {
    if (Number.isNaN(value)) return 'number (NaN)';
    if (!Number.isFinite(value)) return `number (${value})`;
    return Number.isInteger(value) ? 'number (integer)' : 'number (non-integer)';
  }
  if (typeof value === 'object') return `object (${value.constructor?.name ?? 'null prototype'})`;
  return typeof value;
}

function arrowType(type: ColumnType): DataType {
  switch (type) {
    case 'string':
      return new Utf8();
    case 'int64':
      return new Int64();
    case 'float64':
      return new Float64();
    case 'bool':
      return new Bool();
  }
}

const EXPECTED: Record<ColumnType, string> = {
  string: 'a string',
  int64: 'a bigint or a safe-integer number',
  float64: 'a number',
  bool: 'a boolean',
};

function validateColumns(columns: readonly ColumnSpec[], path: string): void {
  if (columns.length === 0) {
    throw new ForesightError(`cannot write ${path}: no columns given`, {
      remedy: 'pass at least one ColumnSpec to writeParquet',
    });
  }
  const seen = new Set<string>();
  columns.forEach((col, i) => {
    if (typeof col.name !== 'string' || col.name === '') {
      throw new ForesightError(`cannot write ${path}: column #${i} has an empty or non-string name`, {
        remedy: 'give every ColumnSpec a non-empty name',
      });
    }
    if (seen.has(col.name)) {
      throw new ForesightError(`cannot write ${path}: column "${col.name}" is declared twice`, {
        remedy: 'make column names unique',
      });
    }
    seen.add(col.name);
    if (!(col.type in EXPECTED)) {
      throw new ForesightError(
        `cannot write ${path}: column "${col.name}" has unknown type ${JSON.stringify(col.type)}`,
        { remedy: "use one of 'string', 'int64', 'float64', 'bool'" },
      );
    }
  });
}

/** Convert one cell to what the arrow builder wants, or throw a ForesightError naming the cell. */
function cell(value: unknown, col: ColumnSpec, rowIndex: number, path: string): string | bigint | number | boolean | null {
  const bad = (why: string): ForesightError =>
    new ForesightError(
      `cannot write ${path}: row ${rowIndex}, column "${col.name}" (${col.type}${col.nullable ? ', nullable' : ''}): ${why}`,
      {
        remedy: col.nullable
          ? `give "${col.name}" ${EXPECTED[col.type]} or null in every row`
          : `give "${col.name}" ${EXPECTED[col.type]} in every row, or declare the column nullable`,
      },
    );
  if (value === null || value === undefined) {
    if (col.nullable) return null;
    throw bad(`got ${jsTypeOf(value)} in a non-nullable column`);
  }
  switch (col.type) {
    case 'string':
      if (typeof value === 'string') return value;
      break;
    case 'int64':
      if (typeof value === 'bigint') {
        if (value < INT64_MIN || value > INT64_MAX) throw bad(`bigint ${value} is outside the int64 range`);
        return value;
      }
      if (typeof value === 'number' && Number.isSafeInteger(value)) return BigInt(value);
      if (typeof value === 'number' && Number.isInteger(value)) {
        throw bad(`number ${value} is beyond Number.MAX_SAFE_INTEGER; pass it as a bigint`);
      }
      break;
    case 'float64':
      if (typeof value === 'number') return value;
      break;
    case 'bool':
      if (typeof value === 'boolean') return value;
      break;
  }
  throw bad(`expected ${EXPECTED[col.type]}, got ${jsTypeOf(value)}`);
}

function buildTable(columns: readonly ColumnSpec[], rows: readonly Record<string, unknown>[], path: string): Table {
  const fields = columns.map((c) => new Field(c.name, arrowType(c.type), c.nullable));
  const schema = new Schema(fields);
  const known = new Set(columns.map((c) => c.name));

  rows.forEach((row, i) => {
    if (row === null || typeof row !== 'object' || Array.isArray(row)) {
      throw new ForesightError(`cannot write ${path}: row ${i} is ${jsTypeOf(row)}, not an object`, {
        remedy: 'pass one plain object per row, keyed by column name',
      });
    }
    for (const key of Object.keys(row)) {
      if (!known.has(key)) {
        throw new ForesightError(`cannot write ${path}: row ${i} has a key "${key}" that is not a declared column`, {
          remedy: `declare "${key}" in the ColumnSpec list or drop it from the rows (columns: ${[...known].join(', ')})`,
        });
      }
    }
  });

  const batches: RecordBatch[] = [];
  // Zero rows still yields one empty batch so the IPC stream (and the Parquet file) carries the schema.
  for (let start = 0; start === 0 || start < rows.length; start += BATCH_ROWS) {
    const slice = rows.slice(start, start + BATCH_ROWS);
    const children = columns.map((col, c) => {
      const builder = makeBuilder({ type: fields[c]!.type, nullValues: [null] });
      slice.forEach((row, j) => builder.append(cell(row[col.name], col, start + j, path)));
      return builder.finish().flush();
    });
    const struct = makeData({ type: new Struct(fields), length: slice.length, nullCount: 0, children });
    batches.push(new RecordBatch(schema, struct));
  }
  return new Table(schema, batches);
}

/**
 * Write `rows` to a Parquet file at `path` with exactly `columns`, in order.
 *
 * Types: string → Utf8, int64 → Int64 (bigint, or a safe-integer number), float64 → Float64,
 * bool → Bool. A null/undefined/missing value is allowed only in a nullable column; any type
 * mismatch, or a row key that is not a declared column, throws a ForesightError naming the row
 * index, the column and the value's type. Written with the artifacts' `writeAtomic` (parent
 * directories created, a unique temp file fsynced then renamed into place), so `path` is either
 * absent, the previous file, or complete, even after a crash. Zstd.
 */
export async function writeParquet(
  path: string,
  columns: readonly ColumnSpec[],
  rows: readonly Record<string, unknown>[],
): Promise<void> {
  validateColumns(columns, path);
  const table = buildTable(columns, rows, path);
  const pw = await loadParquetWasm();

  let bytes: Uint8Array;
  try {
    const ipc = tableToIPC(table, 'stream');
    const wasmTable = pw.Table.fromIPCStream(ipc);
    const props = new pw.WriterPropertiesBuilder()
      .setCompression(pw.Compression.ZSTD)
      .setCreatedBy('foresight (parquet-wasm 0.8)')
      .build();
    bytes = pw.writeParquet(wasmTable, props); // consumes wasmTable and props
  } catch (cause) {
    throw new ForesightError(`could not encode ${path} as Parquet: ${describeError(cause)}`, {
      remedy: 'this is a bug in the emit stage; report it with the failing rows',
      cause,
    });
  }

  try {
    await writeAtomic(path, bytes);
  } catch (cause) {
    throw new ForesightError(`could not write ${path}: ${describeError(cause)}`, {
      remedy: 'check that the output directory is writable and the disk is not full',
      external: true,
      cause,
    });
  }
}

/** Read a Parquet file back into an apache-arrow Table (whole file in memory; for checks and tests). */
export async function readParquetTable(path: string): Promise<Table> {
  const pw = await loadParquetWasm();
  let bytes: Uint8Array;
  try {
    bytes = await readFile(path);
  } catch (cause) {
    throw new ForesightError(`could not read ${path}: ${describeError(cause)}`, {
      remedy: 'check that the file exists and is readable',
      external: true,
      cause,
    });
  }
  try {
    return tableFromIPC(pw.readParquet(bytes).intoIPCStream());
  } catch (cause) {
    throw new ForesightError(`${path} is not a readable Parquet file: ${describeError(cause)}`, {
      remedy: 'delete it and re-run the emit stage',
      cause,
    });
  }
}

/** The rows of a Parquet file as plain objects (int64 as numbers): a published dataset read back. */
export async function readParquetRows(path: string): Promise<Array<Record<string, unknown>>> {
  const table = await readParquetTable(path);
  return table.toArray().map((r: { toJSON(): Record<string, unknown> }) => {
    const o = r.toJSON();
    for (const [k, v] of Object.entries(o)) if (typeof v === 'bigint') o[k] = Number(v);
    return o;
  });
}

/** Number of rows in a Parquet file, read back with parquet-wasm + apache-arrow. */
export async function readParquetRowCount(path: string): Promise<number> {
  return (await readParquetTable(path)).numRows;
}
