import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listCommitChanges, listMergedPrs, readMainline } from '../../../core/history/mainline.ts';
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
