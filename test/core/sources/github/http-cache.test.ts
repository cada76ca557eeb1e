import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { cacheKey, JsonStore } from '../../../../core/sources/github/http-cache.ts';

describe('github http cache store', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'foresight-ghcache-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('keys by method and URL, without credentials embedded in the URL', () => {
    expect(cacheKey('get', 'https://user:secret@api.example.com/repos/a/b/issues/1?page=2')).toBe('GET https://api.example.com/repos/a/b/issues/1?page=2');
  });

  it('writes atomically under hashed names and treats a torn file as a miss', async () => {
    const store = new JsonStore(join(dir, 'http'));
    await store.put('GET https://api.github.com/x', { a: 1 });
    expect(await store.get('GET https://api.github.com/x')).toEqual({ a: 1 });
    const names = await readdir(join(dir, 'http'));
    expect(names).toHaveLength(1);
    expect(names[0]).toMatch(/^[0-9a-f]{64}\.json$/);
    await writeFile(store.file('GET https://api.github.com/y'), '{"trunc');
    expect(await store.get('GET https://api.github.com/y')).toBeNull();
    expect(await store.get('never stored')).toBeNull();
  });
});
