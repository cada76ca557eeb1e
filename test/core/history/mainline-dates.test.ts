import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chooseUnits, listCommitChanges, listMergedPrs, listMixedChanges, readMainline } from '../../../core/history/mainline.ts';
import { gitRepo, type GitRepo } from '../../helpers/git-repo.ts';

describe('when a change landed', () => {
  let repo: GitRepo;
  beforeAll(async () => {
    repo = await gitRepo();
    await repo.commit({ files: { 'a.py': 'x = 1\n' }, message: 'Initial', date: '2023-01-01T00:00:00Z' });
    // Written in April, committed in June: a patch that waited for review.
    await repo.commit({ files: { 'a.py': 'x = 2\n' }, message: 'Fixed #34001 -- Fixed x.', date: '2023-04-02T10:00:00Z', committerDate: '2023-06-10T09:00:00Z' });
    await repo.commit({ files: { 'b.py': 'y = 1\n' }, message: 'Add y (#7)', date: '2023-05-01T00:00:00Z', committerDate: '2023-07-01T00:00:00Z' });
  });
  afterAll(async () => {
    await repo?.remove();
  });

  it('trial: a fix committed in the window was never a candidate, its mergedAt the author date → mergedAt is the commit date', async () => {
    const mainline = await readMainline(repo.dir, 'HEAD');
    const commits = listCommitChanges(mainline);
    expect(commits.find((c) => c.title.startsWith('Fixed #34001'))?.mergedAt).toMatch(/^2023-06-10T09:00:00/);
    // A squash commit lands when the maintainer commits it, too.
    const prs = await listMergedPrs(repo.dir, mainline);
    expect(prs.map((p) => [p.number, p.mergedAt.slice(0, 10)])).toEqual([[7, '2023-07-01']]);
  });
});

describe('mixed units: merged PRs and the direct commits beside them', () => {
  let repo: GitRepo;
  beforeAll(async () => {
    repo = await gitRepo();
    await repo.commit({ files: { 'a.py': 'x = 1\n' }, message: 'Initial', date: '2023-01-01T00:00:00Z' });
    await repo.commit({ files: { 'a.py': 'x = 2\n' }, message: 'Few staticcheck fixes', date: '2023-01-02T00:00:00Z' });
    await repo.git(['checkout', '-q', '-b', 'feature']);
    await repo.commit({ files: { 'b.py': 'y = 1\n' }, message: 'Add y', date: '2023-01-03T00:00:00Z' });
    await repo.git(['checkout', '-q', 'main']);
    await repo.merge({ branch: 'feature', message: 'Merge pull request #5 from dev/feature\n\nAdd y', date: '2023-01-04T00:00:00Z' });
    await repo.commit({ files: { 'c.py': 'z = 1\n' }, message: 'Add z (#7)', date: '2023-01-05T00:00:00Z' });
  });
  afterAll(async () => {
    await repo?.remove();
  });

  it('lists each PR once (merge or squash) and every other mainline commit, in mainline order', async () => {
    const mainline = await readMainline(repo.dir, 'HEAD');
    const mixed = await listMixedChanges(repo.dir, mainline);
    // The root commit has no parent to diff against: no change, as in commit units.
    expect(mixed.map((c) => [c.number ?? null, c.title])).toEqual([
      [null, 'Few staticcheck fixes'],
      [5, 'Add y'],
      [7, 'Add z'],
    ]);
    // PR units lose the direct commits; commit units the merged PR.
    expect((await listMergedPrs(repo.dir, mainline)).map((c) => c.number)).toEqual([5, 7]);
    expect(chooseUnits(mainline, 'mixed')).toBe('mixed');
  });
});
