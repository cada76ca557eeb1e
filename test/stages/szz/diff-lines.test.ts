/**
 * The fixed lines SZZ blames, read from a real `git diff -U0`, for files whose names git decorates:
 * quoted (non-ASCII, backslash), followed by a tab (a name holding a space), and a deleted line that
 * reads "-- ..." (an SQL comment), which shows as "--- ..." like a file header.
 *
 * FixDiffs reads many fixes in one diff-tree: each must get exactly its own diff.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ForesightError } from '../../../core/foundation/errors.ts';
import { attributeFix } from '../../../stages/szz/attribute.ts';
import { blameLines } from '../../../stages/szz/blame.ts';
import { FixDiffs, fixedLines } from '../../../stages/szz/diff-lines.ts';
import { gitRepo, type CommitSpec, type GitRepo } from '../../helpers/git-repo.ts';

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

describe('FixDiffs: many fixes read by one diff-tree', () => {
  let repo: GitRepo;
  const fixes: Array<{ baseSha: string; mergeSha: string }> = [];

  beforeAll(async () => {
    repo = await gitRepo();
    let prev = await repo.commit({ files: { 'a.py': 'x = 1\ny = 2\n', 'my file.sql': '-- c\nSELECT 1;\n' }, message: 'A', date: '2024-01-01T00:00:00Z' });
    const steps: Array<Omit<CommitSpec, 'message' | 'date'>> = [
      { files: { 'a.py': 'x = 1\ny = 3\n' } },
      { allowEmpty: true },
      { files: { 'my file.sql': 'SELECT 2;\n' } },
      { files: { 'b.py': 'x = 1\ny = 3\n' }, delete: ['a.py'] }, // a rename
      { files: { 'b.py': 'x = 0\ny = 3\nz = 4\n' } },
    ];
    for (const [i, s] of steps.entries()) {
      const sha = await repo.commit({ ...s, message: `step ${i}`, date: `2024-01-0${i + 2}T00:00:00Z` });
      fixes.push({ baseSha: prev, mergeSha: sha });
      prev = sha;
    }
    // A pair that is not parent and child: the whole range.
    fixes.push({ baseSha: fixes[0]!.baseSha, mergeSha: prev });
  });
  afterAll(() => repo.remove());

  it('gives each fix exactly what its own git diff gives, an empty one and a rename included', async () => {
    const diffs = new FixDiffs(repo.dir, fixes);
    const got = await Promise.all(fixes.map((f) => diffs.get(f.baseSha, f.mergeSha)));
    const want = await Promise.all(fixes.map((f) => fixedLines(repo.dir, f.baseSha, f.mergeSha)));
    expect(got).toEqual(want);
    expect(got[1]).toEqual([]);
    expect(got[0]).toEqual([{ file: 'a.py', kind: 'source', removed: [{ line: 2, text: 'y = 2' }], anchors: [] }]);
    // Asked for again: read again, the same.
    expect(await diffs.get(fixes[4]!.baseSha, fixes[4]!.mergeSha)).toEqual(want[4]);
  });

  it('names the bad fix of a batch git cannot read, and still reads the others', async () => {
    const bad = { baseSha: 'f'.repeat(40), mergeSha: fixes[0]!.mergeSha };
    const diffs = new FixDiffs(repo.dir, [fixes[0]!, bad, fixes[2]!]);
    await expect(diffs.get(bad.baseSha, bad.mergeSha)).rejects.toThrow(/git diff .* failed/);
    expect(await diffs.get(fixes[2]!.baseSha, fixes[2]!.mergeSha)).toEqual(await fixedLines(repo.dir, fixes[2]!.baseSha, fixes[2]!.mergeSha));
    expect(await diffs.get(fixes[0]!.baseSha, fixes[0]!.mergeSha)).toHaveLength(1);
  });
});
