import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { detectLicense, identifyLicense } from '../../../stages/emit/license.ts';
import { gitRepo, type GitRepo } from '../../helpers/git-repo.ts';
import { APACHE, BSD2, BSD3_MD, LGPL3, MIT, PROPRIETARY, PSF } from '../../helpers/licenses.ts';

describe('identifyLicense', () => {
  it.each([
    ['MIT', MIT, 'mit'],
    ['BSD-3-Clause in markdown (Starlette)', BSD3_MD, 'bsd-3-clause'],
    ['BSD-2-Clause (no endorsement clause)', BSD2, 'bsd-2-clause'],
    ['Apache-2.0', APACHE, 'apache-2.0'],
    ['LGPL-3.0, which names the GPL inside', LGPL3, 'lgpl-3.0'],
  ])('%s', (_name, text, id) => {
    expect(identifyLicense(text)).toBe(id);
  });

  it('a notice about bundled Apache code after the BSD text does not make the repository Apache', () => {
    expect(identifyLicense(`${BSD3_MD}\nThird-party: parts of vendor/ are under the Apache License, Version 2.0.\n`)).toBe('bsd-3-clause');
  });

  it('a text it does not know is null, never a guess', () => {
    expect(identifyLicense(PROPRIETARY)).toBeNull();
    expect(identifyLicense(PSF)).toBeNull();
  });
});

describe('detectLicense reads the license files at the mined commit', () => {
  let repo: GitRepo;
  const at: Record<string, string> = {};

  beforeAll(async () => {
    repo = await gitRepo();
    at.none = await repo.commit({ files: { 'pkg/a.py': 'x = 1\n' }, message: 'init', date: '2024-01-01T00:00:00Z' });
    at.mit = await repo.commit({ files: { LICENSE: MIT }, message: 'MIT', date: '2024-01-02T00:00:00Z' });
    at.apache = await repo.commit({ files: { 'LICENSE.txt': APACHE }, delete: ['LICENSE'], message: 'Apache', date: '2024-01-03T00:00:00Z' });
    // Django's layout: its own BSD-3 LICENSE, and Python's license for bundled code.
    at.django = await repo.commit({ files: { LICENSE: BSD3_MD, 'LICENSE.python': PSF }, delete: ['LICENSE.txt'], message: 'BSD', date: '2024-01-04T00:00:00Z' });
    at.proprietary = await repo.commit({ files: { 'COPYING.md': PROPRIETARY }, delete: ['LICENSE', 'LICENSE.python'], message: 'closed', date: '2024-01-05T00:00:00Z' });
    // Rust-style dual license: suffixed files only.
    at.dual = await repo.commit({ files: { 'LICENSE-MIT': MIT, 'LICENSE-APACHE': APACHE }, delete: ['COPYING.md'], message: 'dual', date: '2024-01-06T00:00:00Z' });
  });
  afterAll(() => repo.remove());

  it('BSD-3 (Django layout): the bundled code license beside it does not count', async () => {
    expect(await detectLicense(repo.dir, at.django!)).toEqual({ kind: 'known', ids: ['bsd-3-clause'], files: ['LICENSE'], commit: at.django });
  });

  it('MIT and Apache-2.0 (LICENSE.txt)', async () => {
    expect(await detectLicense(repo.dir, at.mit!)).toMatchObject({ kind: 'known', ids: ['mit'], files: ['LICENSE'] });
    expect(await detectLicense(repo.dir, at.apache!)).toMatchObject({ kind: 'known', ids: ['apache-2.0'], files: ['LICENSE.txt'] });
  });

  it('no license file: none; a file it cannot read as a license: unrecognised', async () => {
    expect(await detectLicense(repo.dir, at.none!)).toEqual({ kind: 'none', commit: at.none });
    expect(await detectLicense(repo.dir, at.proprietary!)).toEqual({ kind: 'unrecognised', files: ['COPYING.md'], commit: at.proprietary });
  });

  it('a dual license (LICENSE-APACHE + LICENSE-MIT) gives both ids', async () => {
    expect(await detectLicense(repo.dir, at.dual!)).toMatchObject({ kind: 'known', ids: ['apache-2.0', 'mit'], files: ['LICENSE-APACHE', 'LICENSE-MIT'] });
  });

  it('reads the commit, not the work tree: an uncommitted LICENSE changes nothing', async () => {
    await writeFile(join(repo.dir, 'LICENSE'), MIT);
    expect(await detectLicense(repo.dir, at.none!)).toEqual({ kind: 'none', commit: at.none });
    await rm(join(repo.dir, 'LICENSE'));
  });
});

// ---- rows and the card ---------------------------------------------------------------------------
