/** The artifact files' primitives (core/foundation/artifacts.ts): whole-file atomic writes, JSONL read with its file and line named. */
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { readJsonl, toJsonl, writeAtomic } from '../../core/foundation/artifacts.ts';
import { ForesightError } from '../../core/foundation/errors.ts';

const ItemSchema = z.object({ id: z.string(), v: z.number() });

let root: string;
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'foresight-artifacts-'));
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

describe('artifact files', () => {
  it('writeAtomic replaces a file whole and leaves no temp file', async () => {
    const path = join(root, 'x', 'f.txt');
    await writeAtomic(path, 'old\n');
    await writeAtomic(path, 'new\n');
    expect(await readFile(path, 'utf8')).toBe('new\n');
    expect(await readdir(join(root, 'x'))).toEqual(['f.txt']);
  });

  it('readJsonl on an artifact with invalid JSON gives a ForesightError naming file and line', async () => {
    const path = join(root, 'items.jsonl');
    await writeFile(path, toJsonl([{ id: 'a', v: 1 }]) + '{"id": "b", "v"\n');
    const err = await readJsonl(path, ItemSchema).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ForesightError);
    expect((err as ForesightError).message).toContain(`${path}:2`);
    expect((err as ForesightError).remedy).toMatch(/--force/);
  });

  it('readJsonl on a record that fails the schema names file, line and field', async () => {
    const path = join(root, 'items.jsonl');
    await writeFile(path, toJsonl([{ id: 'a', v: 1 }, { id: 'b', v: 2 }, { id: 'c', v: 'three' }]));
    const err = await readJsonl(path, ItemSchema).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ForesightError);
    expect((err as ForesightError).message).toContain(`${path}:3`);
    expect((err as ForesightError).message).toContain('v');
  });
});
