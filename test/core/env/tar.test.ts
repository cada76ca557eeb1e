/**
 * The in-memory tar archives laid into containers (core/env/container/tar.ts), read back by the real
 * `tar` command: long paths (ustar prefix and PAX), modes, owners, parent directories, determinism.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { isSafeRelativePath, makeTar, type TarFile } from '../../../core/env/container/tar.ts';
import { ForesightError } from '../../../core/foundation/errors.ts';

const run = promisify(execFile);
const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

/** The archive written to a temporary file, for `tar`. */
async function onDisk(tar: Buffer): Promise<{ dir: string; file: string }> {
  const dir = await mkdtemp(path.join(tmpdir(), 'foresight-tar-'));
  dirs.push(dir);
  const file = path.join(dir, 'a.tar');
  await writeFile(file, tar);
  return { dir, file };
}

/** `tar -tvf` lines as [mode, owner, size, path]. */
async function listing(file: string): Promise<string[][]> {
  const { stdout } = await run('tar', ['--numeric-owner', '-tvf', file]);
  return stdout
    .split('\n')
    .filter(Boolean)
    .map((l) => {
      const [mode, owner, size, , , ...name] = l.split(/\s+/);
      return [mode!, owner!, size!, name.join(' ')];
    });
}

// 60 + 1 + 60 + 1 + 20 bytes: longer than ustar's 100-byte name field, split into its prefix field.
const LONG = `tests/${'d'.repeat(54)}/${'e'.repeat(60)}/test_long_path.py`;
// One segment longer than 100 bytes cannot be split: a PAX header holds it.
const SEGMENT = `x/${'s'.repeat(120)}.py`;
// Longer than prefix + name (255 bytes) altogether: PAX too.
const HUGE = `${Array.from({ length: 8 }, (_, i) => `${i}${'h'.repeat(39)}`).join('/')}/t.py`;

describe('makeTar', () => {
  it('round-trips through tar: paths longer than 100 bytes, modes, owner, parent directories (0755)', async () => {
    expect(Buffer.byteLength(LONG)).toBeGreaterThan(100);
    expect(Buffer.byteLength(HUGE)).toBeGreaterThan(255);
    const files: TarFile[] = [
      { path: 'run.sh', content: Buffer.from('#!/bin/sh\necho hi\n'), mode: 0o755 },
      { path: LONG, content: Buffer.from('def test_x():\n    pass\n') },
      { path: SEGMENT, content: Buffer.from('s') },
      { path: HUGE, content: Buffer.from('h') },
      { path: 'tests/données/é.py', content: Buffer.from('u') },
      { path: 'empty.txt', content: Buffer.alloc(0) },
    ];
    const { dir, file } = await onDisk(await makeTar(files, { uid: 65534, gid: 65534 }));
    const rows = await listing(file);
    const byPath = new Map(rows.map((r) => [r[3]!, r]));
    expect(byPath.get('run.sh')).toEqual(['-rwxr-xr-x', '65534/65534', '18', 'run.sh']);
    expect(byPath.get(LONG)).toEqual(['-rw-r--r--', '65534/65534', '23', LONG]);
    expect(byPath.get(SEGMENT)?.slice(0, 3)).toEqual(['-rw-r--r--', '65534/65534', '1']);
    expect(byPath.get(HUGE)?.slice(0, 3)).toEqual(['-rw-r--r--', '65534/65534', '1']);
    expect(byPath.get('empty.txt')?.slice(0, 3)).toEqual(['-rw-r--r--', '65534/65534', '0']);
    // Every parent directory comes first, once, as a 0755 directory entry.
    const tests = rows.findIndex((r) => r[3] === 'tests/');
    expect(rows[tests]?.slice(0, 2)).toEqual(['drwxr-xr-x', '65534/65534']);
    expect(tests).toBeLessThan(rows.findIndex((r) => r[3] === LONG));
    expect(rows.filter((r) => r[3] === 'tests/')).toHaveLength(1);
    expect(rows.filter((r) => r[0]!.startsWith('d')).map((r) => r[0])).toEqual(Array(rows.filter((r) => r[0]!.startsWith('d')).length).fill('drwxr-xr-x'));
    expect(rows.map((r) => r[3])).toContain('tests/données/é.py');
    // Extracted: the contents and modes as given.
    const out = path.join(dir, 'out');
    await run('mkdir', [out]);
    await run('tar', ['-x', '--no-same-owner', '-C', out, '-f', file]);
    expect(await readFile(path.join(out, LONG), 'utf8')).toBe('def test_x():\n    pass\n');
    expect(await readFile(path.join(out, HUGE), 'utf8')).toBe('h');
    expect(await readFile(path.join(out, 'tests/données/é.py'), 'utf8')).toBe('u');
    expect((await stat(path.join(out, 'run.sh'))).mode & 0o777).toBe(0o755);
    expect((await stat(path.join(out, SEGMENT))).mode & 0o777).toBe(0o644);
  });

  it('a later file of the same path wins; the same files give the same bytes', async () => {
    const files: TarFile[] = [
      { path: 'a/b.txt', content: Buffer.from('first') },
      { path: 'a/b.txt', content: Buffer.from('second') },
    ];
    const tar = await makeTar(files, { uid: 0, gid: 0 });
    expect((await makeTar(files, { uid: 0, gid: 0 })).equals(tar)).toBe(true);
    expect(tar.length % 512).toBe(0);
    const { dir, file } = await onDisk(tar);
    expect((await listing(file)).map((r) => r[3])).toEqual(['a/', 'a/b.txt', 'a/b.txt']);
    await run('tar', ['-x', '-C', dir, '-f', file]);
    expect(await readFile(path.join(dir, 'a/b.txt'), 'utf8')).toBe('second');
    // mtime 0: nothing of the moment it was made.
    const { stdout } = await run('tar', ['--full-time', '-tvf', file], { env: { ...process.env, TZ: 'UTC' } });
    expect(stdout).toContain('1970-01-01 00:00:00');
  });

  it('an empty list is an empty archive', async () => {
    const { file } = await onDisk(await makeTar([], { uid: 0, gid: 0 }));
    expect(await listing(file)).toEqual([]);
  });

  it('refuses paths that leave the directory it is extracted to', async () => {
    for (const bad of ['', '/etc/passwd', '../x', 'a/../../x', 'a//b', './a', 'a/', 'a\nb']) {
      expect(isSafeRelativePath(bad)).toBe(false);
      await expect(makeTar([{ path: 'ok.txt', content: Buffer.from('') }, { path: bad, content: Buffer.from('') }], { uid: 0, gid: 0 })).rejects.toBeInstanceOf(ForesightError);
    }
    expect(isSafeRelativePath('a/b.c')).toBe(true);
  });
});
