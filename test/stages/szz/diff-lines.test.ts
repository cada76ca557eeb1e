/**
 * The fixed lines SZZ blames, read from a real `git diff -U0`, for files whose names git decorates:
 * quoted (non-ASCII, backslash), followed by a tab (a name holding a space), and a deleted line that
 * reads "-- ..." (an SQL comment), which shows as "--- ..." like a file header.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ForesightError } from '../../../core/foundation/errors.ts';
import { attributeFix } from '../../../stages/szz/attribute.ts';
import { blameLines } from '../../../stages/szz/blame.ts';
import { fixedLines } from '../../../stages/szz/diff-lines.ts';
import { gitRepo, type GitRepo } from '../../helpers/git-repo.ts';

describe('fixedLines with file names git decorates', () => {
  let repo: GitRepo;
  let intro: string;
  let fixBase: string;
  let fix: string;

  beforeAll(async () => {
    repo = await gitRepo();
    intro = await repo.commit({
      files: {
        'pkg/my module.py': 'def f(x):\n    return x + 1\n',
        'pkg/grüße.py': 'GREETING = "hallo"\n',
        'pkg/back\\slash.py': 'SEP = "/"\n',
        'db/schema.sql': 'CREATE TABLE t (id int);\n-- old comment\nCREATE INDEX i ON t (id);\n',
      },
      message: 'Add the package',
      date: '2024-03-01T00:00:00Z',
    });
    fixBase = await repo.commit({ files: { 'README.md': 'docs\n' }, message: 'Docs', date: '2024-03-02T00:00:00Z' });
    fix = await repo.commit({
      files: {
        'pkg/my module.py': 'def f(x):\n    return x + 2\n',
        'pkg/grüße.py': 'GREETING = "Hallo"\n',
        'pkg/back\\slash.py': 'SEP = "\\\\"\n',
        'db/schema.sql': 'CREATE TABLE t (id int);\nCREATE INDEX i ON t (id);\n',
      },
      message: 'Fix everything',
      date: '2024-03-03T00:00:00Z',
    });
  });
  afterAll(() => repo.remove());

  it('reads every changed file by its real name, and a deleted "-- comment" line as a line', async () => {
    const files = await fixedLines(repo.dir, fixBase, fix);
    expect(files.map((f) => [f.file, f.removed])).toEqual([
      ['db/schema.sql', [{ line: 2, text: '-- old comment' }]],
      ['pkg/back\\slash.py', [{ line: 1, text: 'SEP = "/"' }]],
      ['pkg/grüße.py', [{ line: 1, text: 'GREETING = "hallo"' }]],
      ['pkg/my module.py', [{ line: 2, text: '    return x + 1' }]],
    ]);
  });

  it('blames a fixed file whose name holds a space (git ends its header with a tab)', async () => {
    const att = await attributeFix(repo.dir, { baseSha: fixBase, mergeSha: fix }, { variant: 'b-szz' });
    expect(att.commits.map((c) => c.sha)).toEqual([intro]);
    expect(att.commits[0]!.lines.map((l) => l.file).sort()).toEqual(['db/schema.sql', 'pkg/back\\slash.py', 'pkg/grüße.py', 'pkg/my module.py']);
  });

  it('refuses to blame at a revision that reads as an option (git blame has no --end-of-options)', async () => {
    // Passed on, "-w" would be an option and blame would quietly read the work tree instead of a commit.
    await expect(blameLines(repo.dir, '-w', 'pkg/grüße.py', [1], { whitespace: false, moves: false })).rejects.toBeInstanceOf(ForesightError);
    expect((await blameLines(repo.dir, fixBase, 'pkg/grüße.py', [1], { whitespace: false, moves: false })).map((b) => b.sha)).toEqual([intro]);
  });
});
