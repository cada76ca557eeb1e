/**
 * What an install may leave out, without Docker: pip's "nothing found for X" read from a build's output, the
 * modules a PR's tests import (their files and conftest chain, read from a generated repository at a commit),
 * the distribution → module names they are matched by, and the candidate rebuilt without a requirement.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { failedStepTail } from '../../../core/env/image/build.ts';
import { absentPackage, rejectionReason } from '../../../core/env/image/env-check.ts';
import type { RecipeCandidate } from '../../../core/env/recipes/detect.ts';
import { KEEP_PROJECT_METADATA, leftOutInLog, unavailableRequirements, withoutRequirements } from '../../../core/env/recipes/drop-unavailable.ts';
import { RecipeSchema } from '../../../core/env/recipes/schema.ts';
import { conftestChain, importedFrom, importNames, parseImports, testImports } from '../../../core/env/recipes/test-imports.ts';
import { gitRepo, type GitRepo } from '../../helpers/git-repo.ts';

const PIP_FAILURE = `Processing /tmp/testbed
  Installing build dependencies: started
  Installing build dependencies: finished with status 'done'
INFO: pip is looking at multiple versions of probepkg to determine which version is compatible with other requirements.
ERROR: Could not find a version that satisfies the requirement diff-cover>=2.5.0 (from sqlfluff) (from versions: none)
ERROR: No matching distribution found for diff-cover>=2.5.0
[foresight] FAILED (exit 1): pip install -e .`;

describe("pip's output: what the machine cannot provide", () => {
  it('names the distribution of each "no matching distribution" / "could not find a version" line once, version dropped', () => {
    const names = (out: string): string[] => unavailableRequirements(out).map((u) => u.name);
    expect(names(PIP_FAILURE)).toEqual(['diff-cover']);
    expect(names('ERROR: No matching distribution found for nonexistent-devtool-xyz==1.0')).toEqual(['nonexistent-devtool-xyz']);
    expect(names('ERROR: Could not find a version that satisfies the requirement mypy[mypyc]; python_version >= "3.8"')).toEqual(['mypy']);
    expect(names('ERROR: Could not build wheels for numpy')).toEqual([]);
  });

  it('a pin no offline version satisfies is pinned out (versions listed); a package with no version at all is not', () => {
    const out = [
      'ERROR: Could not find a version that satisfies the requirement click<=8.3.0 (from sqlfluff) (from versions: 8.5.0)',
      'ERROR: No matching distribution found for click<=8.3.0',
      'foresight: unavailable Could not find a version that satisfies the requirement diff-cover>=2.5.0 (from versions: none)',
      'foresight: unavailable Could not find a version that satisfies the requirement chardet (from versions: 7.6.0)',
      'ERROR: No matching distribution found for nonexistent-devtool-xyz==1.0',
    ].join('\n');
    expect(unavailableRequirements(out)).toEqual([
      { name: 'click', pinnedOut: true },
      { name: 'diff-cover', pinnedOut: false },
      // No specifier to drop: versions listed are of other platforms' wheels, nothing to unpin.
      { name: 'chardet', pinnedOut: false },
      { name: 'nonexistent-devtool-xyz', pinnedOut: false },
    ]);
  });

  it("a failed multi-line command's detail keeps pip's errors, and the rejection reason is pip's error line", () => {
    const script = Array.from({ length: 30 }, (_, i) => `    line_${i} = ${i}`).join('\n');
    const text = [
      '[foresight] $ python -c ...',
      'Processing /opt/pypi/files/jinja2-3.1.6-py3-none-any.whl',
      "WARNING: Location 'file:///opt/pypi/simple/diff-cover/' is ignored: it is neither a file nor a directory.",
      'ERROR: Could not find a version that satisfies the requirement diff-cover>=2.5.0 (from versions: none)',
      'ERROR: No matching distribution found for diff-cover>=2.5.0',
      'foresight: unavailable Could not find a version that satisfies the requirement click<=8.3.0 (from versions: 8.5.0)',
      '',
      `[foresight] FAILED (exit 1): python -c 'import importlib.metadata as m\n${script}\n    break' '' chardet > /tmp/foresight-reqs.txt`,
      '',
    ].join('\n');
    const detail = failedStepTail(text);
    expect(detail.split('\n').at(-1)).toBe("[foresight] FAILED (exit 1): python -c 'import importlib.metadata as m …");
    expect(rejectionReason(detail)).toBe('ERROR: No matching distribution found for diff-cover>=2.5.0');
    expect(unavailableRequirements(detail).map((u) => u.name)).toEqual(['diff-cover', 'click']);
    expect(failedStepTail('ERROR: boom\n[foresight] FAILED (exit 2): pip install -e .\n')).toBe('ERROR: boom\n[foresight] FAILED (exit 2): pip install -e .');
  });

  it("a build log's best-effort skips and a retry's drops are what the install left out", () => {
    const log = ['[foresight] $ try_req() { ... echo "foresight: skipped $*"; }', 'foresight: skipped autoflake==2.0', 'foresight: dropped diff-cover>=2.5.0', 'foresight: skipped -e .[full]', 'foresight: skipped Autoflake'].join('\n');
    expect(leftOutInLog(log)).toEqual(['autoflake', 'diff-cover']);
  });

  it('a rejection noted with its retry still names the package another era skips on', () => {
    expect(absentPackage('ERROR: No matching distribution found for pympler (retried without pympler (the offline wheels cannot provide it; …))')).toBe('pympler');
    expect(absentPackage('ERROR: No matching distribution found for pympler')).toBe('pympler');
    expect(absentPackage('ERROR: No matching distribution found for pympler==1.0')).toBeNull();
  });
});

describe('distribution names and the modules the tests import', () => {
  it('a distribution matches its normalised name and the well-known other names', () => {
    expect(importNames('diff-cover')).toContain('diff_cover');
    expect(importNames('PyYAML')).toContain('yaml');
    expect(importNames('python-dateutil')).toContain('dateutil');
    expect(importNames('zope.interface')).toContain('zope');
    expect(importNames('google-cloud-storage')).toContain('google');
    expect(importNames('Pillow')).toContain('pil');
  });

  it('reads import and from lines (indented ones too), pytest_plugins, not relative imports, comments or docstrings', () => {
    const src = [
      '"""Tests.',
      '',
      'import not_really  # an example in the docstring',
      '"""',
      'import os, sys as system',
      'from yaml import safe_load',
      'from . import helpers',
      'from .sibling import thing',
      '# import commented_out',
      'def test_x():',
      '    import chardet.universaldetector',
      '    from diff_cover.hook import hookimpl',
      'pytest_plugins = [',
      '    "pytest_mock.plugin",',
      ']',
    ].join('\n');
    expect([...parseImports(src).entries()]).toEqual([
      ['os', 5],
      ['sys', 5],
      ['yaml', 6],
      ['chardet', 11],
      ['diff_cover', 12],
      ['pytest_mock', 13],
    ]);
  });

  it('the conftest chain of a test file runs from the root down', () => {
    expect(conftestChain('test/dialects/ansi_test.py')).toEqual(['conftest.py', 'test/conftest.py', 'test/dialects/conftest.py']);
    expect(conftestChain('test_top.py')).toEqual(['conftest.py']);
  });

  describe('at a commit of a generated repository', () => {
    let repo: GitRepo;
    let commit: string;
    beforeAll(async () => {
      repo = await gitRepo();
      commit = await repo.commit({
        files: {
          'conftest.py': 'import chardet\n',
          'tests/conftest.py': 'from diff_cover import hook\n',
          'tests/unit/test_a.py': 'import probepkg\nfrom yaml import safe_load\n',
          'tests/unit/data/case.sql': 'import ignored_module\n',
          'other/conftest.py': 'import never_on_the_path\n',
        },
        message: 'init',
        date: '2024-01-01T00:00:00Z',
      });
    });
    afterAll(() => repo?.remove());

    it("the PR's test modules and every conftest.py on their path; a data file brings its conftests only", async () => {
      const imp = await testImports(repo.dir, commit, ['tests/unit/test_a.py', 'tests/unit/data/case.sql']);
      expect(imp.files).toEqual(['conftest.py', 'tests/conftest.py', 'tests/unit/test_a.py']);
      expect(Object.fromEntries(imp.modules)).toEqual({ chardet: 'conftest.py:1', diff_cover: 'tests/conftest.py:1', probepkg: 'tests/unit/test_a.py:1', yaml: 'tests/unit/test_a.py:2' });
      expect(importedFrom('diff-cover', imp)).toBe('tests/conftest.py:1 imports diff_cover');
      expect(importedFrom('PyYAML', imp)).toBe('tests/unit/test_a.py:2 imports yaml');
      expect(importedFrom('nonexistent-devtool-xyz', imp)).toBeNull();
      expect(importedFrom('never-on-the-path', imp)).toBeNull();
    });
  });
});

describe('a candidate without the requirements it could not install', () => {
  const candidate = (install: string[]): RecipeCandidate => ({
    label: 'py3.11 .[test] + requirements-dev.txt',
    recipe: RecipeSchema.parse({ runner: 'pytest', python: '3.11', install }),
    isolated: true,
  });

  it('installs the project --no-deps (its metadata kept), its requirements but the dropped ones (pinned-out ones unpinned), and requirement files line by line', () => {
    const c = candidate(["pip install -e '.[test]'", 'pip install -r requirements-dev.txt', "pip install 'pytest<9'"]);
    const d = withoutRequirements(c, ['diff-cover', 'chardet'], ['click'])!;
    expect(d.label).toBe('py3.11 .[test] + requirements-dev.txt without diff-cover, chardet; click unpinned');
    expect(d.isolated).toBe(true);
    expect(d.recipe.install[0]).toBe("pip install --no-deps -e '.[test]'");
    expect(d.recipe.install[1]).toBe(KEEP_PROJECT_METADATA);
    expect(d.recipe.install[2]).toMatch(/^python -c '.*' test 'diff-cover,chardet' click > \/tmp\/foresight-reqs\.txt && if \[ -s \/tmp\/foresight-reqs\.txt \]; then pip install -r \/tmp\/foresight-reqs\.txt \|\| \{ s=\$\?; while read -r r; do pip download .*; exit \$s; \}; fi$/s);
    expect(d.recipe.install[3]).toMatch(/^try_req\(\) .* requirements-dev\.txt \| while read -r r/);
    expect(d.recipe.install[4]).toBe("pip install 'pytest<9'");
    expect(withoutRequirements(c, [], ['click'])!.label).toBe('py3.11 .[test] + requirements-dev.txt click unpinned');
  });

  it('keeps no-build-isolation and the backend install; a candidate with nothing to leave out has no such retry', () => {
    const c = candidate(['pip install setuptools wheel', 'pip install --no-build-isolation -e .', 'pip install pytest']);
    const d = withoutRequirements(c, ['x'])!;
    expect(d.recipe.install.slice(0, 3)).toEqual(['pip install setuptools wheel', 'pip install --no-build-isolation --no-deps -e .', KEEP_PROJECT_METADATA]);
    expect(d.recipe.install[3]).toMatch(/^python -c '.*' '' x '' > /s);
    expect(withoutRequirements(candidate(['pip install pytest', 'python setup.py develop']), ['x'])).toBeNull();
  });
});
