/**
 * Path globs through minimatch. The first three tests are named after what the hand-written glob it
 * replaced got wrong; the rest pin the recipe semantics (anchored at the repository root, `/` paths).
 */
import { describe, expect, it } from 'vitest';
import { isLiteralGlob, matchesAny, matchesGlob } from '../../core/foundation/glob.ts';
import { DEFAULT_DEPENDENCY_FILES } from '../../core/env/recipes/schema.ts';

describe('globs (minimatch)', () => {
  it('an escaped \\* matches a literal star only', () => {
    expect(matchesGlob('a*b.txt', 'a\\*b.txt')).toBe(true);
    expect(matchesGlob('axb.txt', 'a\\*b.txt')).toBe(false);
    expect(matchesGlob('ab.txt', 'a\\*b.txt')).toBe(false);
    expect(matchesGlob('a?.txt', 'a\\?.txt')).toBe(true);
    expect(matchesGlob('ab.txt', 'a\\?.txt')).toBe(false);
  });

  it('[]] matches a closing bracket', () => {
    expect(matchesGlob(']', '[]]')).toBe(true);
    expect(matchesGlob('x]', 'x[]]')).toBe(true);
    expect(matchesGlob('a', '[]]')).toBe(false);
    expect(matchesGlob('x]]', 'x[]]')).toBe(false);
    expect(matchesGlob('test_b.py', 'test_[!a].py')).toBe(true);
    expect(matchesGlob('test_a.py', 'test_[!a].py')).toBe(false);
  });

  it('**.py is *.py, as minimatch documents (** spans folders only as a whole segment)', () => {
    expect(matchesGlob('setup.py', '**.py')).toBe(true);
    expect(matchesGlob('pkg/mod.py', '**.py')).toBe(false);
    expect(matchesGlob('pkg/mod.py', '**/*.py')).toBe(true);
    expect(matchesGlob('mod.py', '**/*.py')).toBe(true);
    expect(matchesGlob('a/b/c/mod.py', 'a/**/mod.py')).toBe(true);
    expect(matchesGlob('a/mod.py', 'a/**/mod.py')).toBe(true);
  });

  it('is anchored at the repository root: requirements*.txt matches only top-level files, **/x any depth', () => {
    expect(matchesGlob('requirements.txt', 'requirements*.txt')).toBe(true);
    expect(matchesGlob('requirements-dev.txt', 'requirements*.txt')).toBe(true);
    expect(matchesGlob('docs/requirements.txt', 'requirements*.txt')).toBe(false);
    expect(matchesGlob('docs/requirements.txt', '**/requirements*.txt')).toBe(true);
    expect(matchesGlob('a/b/c/requirements.txt', '**/requirements*.txt')).toBe(true);
    expect(matchesGlob('x/setup.py', 'setup.py')).toBe(false);
    expect(matchesGlob('setup.py', 'x/setup.py')).toBe(false);
  });

  it('matches hidden files and folders like any other', () => {
    expect(matchesGlob('.github/requirements.txt', '**/requirements.txt')).toBe(true);
    expect(matchesGlob('tests/.hidden.py', 'tests/*.py')).toBe(true);
  });

  it('treats a leading ! or # as a literal character, not negation or a comment', () => {
    expect(matchesAny('tests/test_a.py', ['!tests/test_a.py'])).toBe(false);
    expect(matchesGlob('!keep.txt', '!keep.txt')).toBe(true);
    expect(matchesGlob('#notes.txt', '#notes.txt')).toBe(true);
    expect(matchesGlob('', '#notes.txt')).toBe(false);
  });

  it('braces and ? work within a segment', () => {
    expect(matchesGlob('tox.ini', '{setup.cfg,tox.ini}')).toBe(true);
    expect(matchesGlob('pytest.ini', '{setup.cfg,tox.ini}')).toBe(false);
    expect(matchesGlob('a1.txt', 'a?.txt')).toBe(true);
    expect(matchesGlob('a/.txt', 'a?.txt')).toBe(false);
  });

  it('matchesAny: the default dependency files', () => {
    const deps = [...DEFAULT_DEPENDENCY_FILES];
    for (const p of ['pyproject.toml', 'requirements.txt', 'dev-requirements.txt', 'test_requirements.txt', 'requirements/base.txt', 'tests/requirements/py3.txt']) {
      expect(matchesAny(p, deps), p).toBe(true);
    }
    for (const p of ['docs/requirements.txt', 'requirements/sub/x.txt', 'src/setup.py', 'README.md']) expect(matchesAny(p, deps), p).toBe(false);
    expect(matchesAny('x', [])).toBe(false);
  });

  it('isLiteralGlob: only a glob that spells the one path it matches', () => {
    expect(isLiteralGlob('tests/requirements/py3.txt')).toBe(true);
    expect(isLiteralGlob('requirements*.txt')).toBe(false);
    expect(isLiteralGlob('{a,b}.txt')).toBe(false);
    expect(isLiteralGlob('[ab].txt')).toBe(false);
    expect(isLiteralGlob('a\\*b.txt')).toBe(false);
    expect(isLiteralGlob('**/x')).toBe(false);
  });
});
