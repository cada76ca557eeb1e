import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { readJsonl, stageDir } from '../../../core/foundation/artifacts.ts';
import { parsePorcelain } from '../../../stages/szz/blame.ts';
import { parseFixedLines } from '../../../stages/szz/diff-lines.ts';
import { ChainSchema, type Chain } from '../../../core/foundation/model/chain.ts';
import { demoWorkspace, runOn } from '../../helpers/demo.ts';

describe('szz on the generated demo repository', () => {
  let chains: Chain[];
  beforeAll(async () => {
    const ws = await demoWorkspace();
    await runOn(ws, { only: 'discover' });
    await runOn(ws, { only: 'szz' });
    chains = await readJsonl(join(stageDir(ws.dataRoot, ws.repo.name, 'szz'), 'items.jsonl'), ChainSchema);
  });
  const chain = (pr2: number) => chains.find((c) => c.pr2.number === pr2)!;

  it('finds PR1 by blame alone when PR2 names no PR, mapping a merged branch commit to its PR', () => {
    const c = chain(8);
    expect(c.pr1.number).toBe(3);
    expect(c.mining_category).toBe('szz');
    expect(c.szz.pickedBy).toBe('blame');
    // Both modified lines of timeparse.py were written on PR #3's branch, not by its merge commit.
    expect(c.szz.candidates[0]).toMatchObject({ change: '3', score: 2 });
    expect(c.szz.candidates[0]!.lines.every((l) => l.file === 'minilib/timeparse.py')).toBe(true);
    expect(c.szz.candidates[0]!.lines.map((l) => l.sha)).not.toContain(c.pr1.mergeSha);
  });

  it('keeps an explicit reference that blame confirms as a cross-reference chain', () => {
    expect(chain(9)).toMatchObject({ pr1: { number: 1 }, mining_category: 'cross_reference', szz: { pickedBy: 'reference_confirmed_by_blame' } });
    expect(chain(11)).toMatchObject({ pr1: { number: 4 }, mining_category: 'cross_reference' });
  });

  it('keeps the explicit reference when blame points at a direct commit that is no PR', () => {
    const c = chain(10);
    expect(c.pr1.number).toBe(6);
    expect(c.szz.pickedBy).toBe('reference');
    expect(c.szz.candidates).toEqual([]);
    expect(c.szz.unattributedScore).toBe(1);
  });

  it('gives a revert the reverted PR as PR1 without blaming anything', () => {
    expect(chain(12)).toMatchObject({ pr1: { number: 5 }, szz: { pickedBy: 'revert_target', blamedLines: 0 } });
  });
});

describe('fixed lines and blame parsing', () => {
  it('takes deleted/modified old-side lines of each file with its kind, and anchors for pure insertions', () => {
    const diff = [
      'diff --git a/pkg/a.py b/pkg/a.py',
      '--- a/pkg/a.py',
      '+++ b/pkg/a.py',
      '@@ -3,2 +3,2 @@ def f():',
      '-    x = 1',
      '-    return x',
      '+    x = 2',
      '+    return x',
      '@@ -10,0 +11,2 @@ def g():',
      '+    if y is None:',
      '+        return 0',
      'diff --git a/tests/test_a.py b/tests/test_a.py',
      '--- a/tests/test_a.py',
      '+++ b/tests/test_a.py',
      '@@ -1 +1 @@',
      '-old',
      '+new',
      'diff --git a/new.py b/new.py',
      'new file mode 100644',
      '--- /dev/null',
      '+++ b/new.py',
      '@@ -0,0 +1 @@',
      '+print(1)',
    ].join('\n');
    expect(parseFixedLines(diff)).toEqual([
      { file: 'pkg/a.py', kind: 'source', removed: [{ line: 3, text: '    x = 1' }, { line: 4, text: '    return x' }], anchors: [10] },
      { file: 'tests/test_a.py', kind: 'test', removed: [{ line: 1, text: 'old' }], anchors: [] },
    ]);
  });

  it('reads the final line and commit of every porcelain entry, including repeated commits without headers', () => {
    const a = 'a'.repeat(40);
    const b = 'b'.repeat(40);
    const out = parsePorcelain([`${a} 1 5 2`, 'author X', 'committer-time 100', 'filename f.py', '\tline five', `${a} 2 6`, '\tline six', `${b} 9 7 1`, 'author Y', 'committer-time 200', 'filename f.py', '\tline seven']);
    expect(out).toEqual([
      { line: 5, sha: a, text: 'line five', time: 100 },
      { line: 6, sha: a, text: 'line six', time: 100 },
      { line: 7, sha: b, text: 'line seven', time: 200 },
    ]);
  });

  it('drops the lines of a boundary commit, also where it repeats without its header', () => {
    const a = 'a'.repeat(40);
    const b = 'b'.repeat(40);
    const out = parsePorcelain([`${b} 3 1 1`, 'committer-time 50', 'boundary', 'filename f.py', '\told', `${a} 2 2 1`, 'committer-time 100', 'filename f.py', '\tnew', `${b} 4 3 1`, 'filename f.py', '\tolder']);
    expect(out).toEqual([{ line: 2, sha: a, text: 'new', time: 100 }]);
  });
});
