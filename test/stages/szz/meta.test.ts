import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MetaChanges } from '../../../stages/szz/meta.ts';
import { gitRepo, type GitRepo } from '../../helpers/git-repo.ts';

describe('MetaChanges.classify', () => {
  let repo: GitRepo;
  const sha: Record<'root' | 'feature' | 'merge' | 'plain' | 'revert' | 'reindent' | 'mass' | 'almostMass', string> = {} as never;
  const day = (n: number): string => `2024-02-${String(n).padStart(2, '0')}T09:00:00Z`;

  beforeAll(async () => {
    repo = await gitRepo();
    sha.root = await repo.commit({ files: { 'pkg/a.py': 'def f(x):\n  return x\n' }, message: 'Initial', date: day(1) });
    await repo.git(['checkout', '--quiet', '-b', 'feature']);
    sha.feature = await repo.commit({ files: { 'pkg/b.py': 'B = 1\n' }, message: 'Add b', date: day(2) });
    await repo.git(['checkout', '--quiet', 'main']);
    await repo.commit({ files: { 'pkg/c.py': 'C = 1\n' }, message: 'Add c', date: day(3) });
    sha.merge = await repo.merge({ branch: 'feature', message: 'Merge pull request #1 from feature', date: day(4) });
    sha.plain = await repo.commit({ files: { 'pkg/a.py': 'def f(x):\n  return x + 1\n' }, message: 'Change f', date: day(5) });
    sha.revert = await repo.commit({
      files: { 'pkg/a.py': 'def f(x):\n  return x\n' },
      message: `Revert "Change f"\n\nThis reverts commit ${sha.plain}.\n`,
      date: day(6),
    });
    sha.reindent = await repo.commit({ files: { 'pkg/a.py': 'def f(x):\n    return x\n' }, message: 'Reindent', date: day(7) });
    sha.almostMass = await repo.commit({ files: { 'pkg/m1.py': 'M = 1\n', 'pkg/m2.py': 'M = 2\n' }, message: 'Two files', date: day(8) });
    sha.mass = await repo.commit({ files: { 'pkg/m1.py': 'M = 10\n', 'pkg/m2.py': 'M = 20\n', 'pkg/b.py': 'B = 10\n' }, message: 'Three files', date: day(9) });
  });
  afterAll(() => repo.remove());

  it('merge_commit_is_a_meta_change', async () => {
    expect(await new MetaChanges(repo.dir).classify(sha.merge)).toBe('merge');
  });

  it('revert_commit_is_a_meta_change', async () => {
    expect(await new MetaChanges(repo.dir).classify(sha.revert)).toBe('revert');
  });

  it('whitespace_only_commit_needs_no_entry_because_blame_runs_with_w', async () => {
    expect(await new MetaChanges(repo.dir).classify(sha.reindent)).toBeNull();
  });

  it('commit_touching_the_threshold_of_files_is_a_mass_change', async () => {
    const meta = new MetaChanges(repo.dir, 3);
    expect(await meta.classify(sha.mass)).toBe('mass_change');
    expect(await meta.classify(sha.almostMass)).toBeNull();
  });

  it('ordinary_commits_are_not_meta_changes', async () => {
    const meta = new MetaChanges(repo.dir, 3);
    for (const s of [sha.root, sha.feature, sha.plain]) expect(await meta.classify(s)).toBeNull();
    // The default threshold is 100 files.
    expect(await new MetaChanges(repo.dir).classify(sha.mass)).toBeNull();
  });
});

describe('MetaChanges.ignoreRevsFile', () => {
  it('two clones in one process each get a file listing their own mass change', async () => {
    const repos = [await gitRepo(), await gitRepo()];
    try {
      const mass: string[] = [];
      for (const [i, r] of repos.entries()) {
        await r.commit({ files: { 'a.py': 'A = 1\n' }, message: 'Initial', date: '2024-03-01T09:00:00Z' });
        mass.push(await r.commit({ files: { 'a.py': `A = ${i + 2}\n`, 'b.py': 'B = 1\n', 'c.py': 'C = 1\n' }, message: 'Three files', date: '2024-03-02T09:00:00Z' }));
      }
      // Neither has a .git-blame-ignore-revs and each lists one commit: the files must still be two.
      const paths = await Promise.all(repos.map((r) => new MetaChanges(r.dir, 3).ignoreRevsFile()));
      expect(await Promise.all(paths.map((p) => readFile(p!, 'utf8')))).toEqual([`${mass[0]}\n`, `${mass[1]}\n`]);
    } finally {
      await Promise.all(repos.map((r) => r.remove()));
    }
  });
});
