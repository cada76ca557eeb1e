/**
 * splitPatch on a real history whose file names git quotes or reads as patterns: without -z the
 * names came back as "tests/test_gr\303\274\303\237e.py" (quotes included) and were neither tests
 * nor diffable; a name such as `*.py` after `--` matched every Python file.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { splitPatch } from '../../../core/extract/split-patch.ts';
import { ForesightError } from '../../../core/foundation/errors.ts';
import { gitRepo, type GitRepo } from '../../helpers/git-repo.ts';

describe('splitPatch with file names git quotes', () => {
  let repo: GitRepo;
  let base: string;
  let head: string;

  beforeAll(async () => {
    repo = await gitRepo();
    base = await repo.commit({
      files: { 'greet/grüße.py': 'HELLO = "hallo"\n', 'tests/test_old.py': 'def test_old():\n    pass\n' },
      message: 'Add greetings',
      date: '2024-02-01T00:00:00Z',
    });
    head = await repo.commit({
      files: {
        'greet/grüße.py': 'HELLO = "Hallo"\n',
        'tests/test_grüße.py': 'def test_hallo():\n    assert True\n',
        'tests/test_back\\slash.py': 'def test_backslash():\n    assert True\n',
        'tests/tab\tdata.json': '{}\n',
      },
      delete: ['tests/test_old.py'],
      message: 'Capitalise the greeting',
      date: '2024-02-02T00:00:00Z',
    });
  });
  afterAll(() => repo.remove());

  it('keeps tests/test_grüße.py and a path with a backslash as test files, verbatim', async () => {
    const p = await splitPatch(repo.dir, base, head);
    expect(p.testFiles).toEqual(['tests/test_back\\slash.py', 'tests/test_grüße.py']);
    // Support files count for the overlay; the deleted test is in neither list.
    expect(p.overlayFiles).toEqual(['tests/tab\tdata.json', 'tests/test_back\\slash.py', 'tests/test_grüße.py']);
    expect(p.tests).toContain('def test_hallo():');
    expect(p.tests).toContain('def test_backslash():');
    expect(p.tests).toContain('def test_old():'); // the deletion is part of the test patch
    expect(p.source).toContain('+HELLO = "Hallo"');
    expect(p.source).not.toContain('test_');
  });

  it('diffs a name that looks like a pattern as that file only', async () => {
    const next = await repo.commit({
      files: { '*.py': 'STAR = 1\n', 'tests/test_grüße.py': 'def test_hallo():\n    assert 1\n' },
      message: 'Odd name',
      date: '2024-02-03T00:00:00Z',
    });
    const p = await splitPatch(repo.dir, head, next);
    expect(p.testFiles).toEqual(['tests/test_grüße.py']);
    expect(p.source).toContain('+STAR = 1');
    expect(p.source).not.toContain('test_hallo');
  });

  it('refuses a revision that looks like an option', async () => {
    await expect(splitPatch(repo.dir, '--output=/dev/null', head)).rejects.toBeInstanceOf(ForesightError);
  });
});
