/** The Python a commit gets (core/env/recipes/python-era.ts): requires-python, classifiers, tox envlists, CI matrices, and their ranking. */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { gitRepo } from '../../helpers/git-repo.ts';
import { loadRecipe } from '../../../core/env/recipes/load.ts';
import { namedVersions, pythonEra, rankPythons, requiresPython, satisfies } from '../../../core/env/recipes/python-era.ts';

describe('the Python of a commit (python-era)', () => {
  it('reads requires-python, classifiers, tox envlists and CI matrices', () => {
    expect(satisfies('>=3.8', '3.9')).toBe(true);
    expect(satisfies('>=3.10', '3.9')).toBe(false);
    expect(satisfies('>=3.8,<3.12', '3.13')).toBe(false);
    expect(satisfies('>=2.7, !=3.0.*, !=3.1.*', '3.11')).toBe(true);
    expect(satisfies('~=3.9', '3.13')).toBe(true);
    expect(satisfies('<3.11.0', '3.11')).toBe(false);
    expect(requiresPython({ setupCfg: '[options]\npython_requires = >=3.6\n' })).toBe('>=3.6');
    expect(requiresPython({ pyproject: '[project]\nrequires-python = ">=3.9"\n' })).toBe('>=3.9');
    expect(
      namedVersions({
        metadata: ['classifiers = [\n  "Programming Language :: Python :: 3.7",\n  "Programming Language :: Python :: 3.8",\n]'],
        tox: '[tox]\nenvlist = py3{6,9}, lint\n',
        ci: ['jobs:\n  t:\n    strategy:\n      matrix:\n        python-version: ["3.10", 3.11]\n'],
      }),
    ).toEqual(['3.6', '3.7', '3.8', '3.9', '3.10', '3.11']);
  });

  it('requires-python is read as TOML: single-quoted key and value, only from [project]', () => {
    expect(requiresPython({ pyproject: "[project]\n'requires-python' = '>=3.10'\n" })).toBe('>=3.10');
    expect(requiresPython({ pyproject: '[project]\n"requires-python" = """\n>=3.8, <4\n"""\n' })).toBe('>=3.8, <4');
    expect(requiresPython({ pyproject: '[project]\nname = "p"\n# requires-python = ">=3.12"\n[tool.x]\nrequires-python = ">=3.12"\n' })).toBeNull();
  });

  it('pythonEra reads the classifiers among the pyproject\'s strings, not its comments, and a broken one as none', async () => {
    const repo = await gitRepo();
    try {
      const classifiers = (vs: string[], indent = '  '): string => vs.map((v) => `${indent}'Programming Language :: Python :: ${v}',`).join('\n');
      const sha = await repo.commit({
        files: { 'pyproject.toml': `[tool.poetry]\nname = "p"\nclassifiers = [\n${classifiers(['3.7', '3.8'])}\n  # "Programming Language :: Python :: 3.12",\n]\n` },
        message: 'poetry',
        date: '2023-06-01T00:00:00Z',
      });
      const era = await pythonEra(repo.dir, sha, ['pyproject.toml']);
      expect(era.reasons).toContain('names Python 3.7, 3.8: 3.9 first');
      const broken = await repo.commit({ files: { 'pyproject.toml': `[project\nclassifiers = [\n${classifiers(['3.7'])}\n]\n` }, message: 'broken', date: '2023-06-01T00:00:00Z' });
      expect((await pythonEra(repo.dir, broken, ['pyproject.toml'])).reasons).toEqual(['names no Python version; committed 2023-06-01: 3.11 first']);
    } finally {
      await repo.remove();
    }
  });

  it('an era whose newest named Python is older than 3.11 gets 3.9 first; 3.11 wherever it fits; the constraint filters', () => {
    expect(rankPythons({ named: ['3.6', '3.7', '3.8'], constraint: '>=3.6', date: '2020-01-01' }).order).toEqual(['3.9', '3.11', '3.13']);
    expect(rankPythons({ named: ['3.8', '3.9', '3.10', '3.11'], constraint: '>=3.8', date: '2023-05-01' }).order).toEqual(['3.11', '3.9', '3.13']);
    // Django 4.0/4.1: 3.8-3.10; bullseye's 3.9 packages are too old for them (asgiref < 3.4).
    expect(rankPythons({ named: ['3.8', '3.9', '3.10'], constraint: '>=3.8', date: '2022-01-01' }).order).toEqual(['3.11', '3.9', '3.13']);
    expect(rankPythons({ named: ['3.12', '3.13'], constraint: '>=3.12', date: '2025-05-01' }).order).toEqual(['3.13']);
    expect(rankPythons({ named: [], constraint: null, date: '2019-03-01T10:00:00+01:00' }).order[0]).toBe('3.9');
    expect(rankPythons({ named: [], constraint: null, date: '2024-03-01' }).order).toEqual(['3.11', '3.9', '3.13']);
    // A constraint none of ours meets (>=3.14): every Python is still tried, the closest to what is wanted first.
    expect(rankPythons({ named: [], constraint: '>=3.14', date: '2026-01-01' }).order).toHaveLength(3);
  });

  it('a recipe file with python "auto" is tried on each Python; a fixed python is one candidate', async () => {
    const repo = await gitRepo();
    try {
      const sha = await repo.commit({
        files: { 'setup.cfg': '[metadata]\nclassifiers =\n    Programming Language :: Python :: 3.8\n\n[options]\npython_requires = >=3.6\n' },
        message: 'old',
        date: '2020-06-01T00:00:00Z',
      });
      const dir = await mkdtemp(path.join(tmpdir(), 'foresight-recipes-'));
      const { writeFile } = await import('node:fs/promises');
      await writeFile(path.join(dir, 'acme__auto.json'), JSON.stringify({ runner: 'pytest', python: 'auto', install: ['pip install -e .'] }));
      await writeFile(path.join(dir, 'acme__fixed.json'), JSON.stringify({ runner: 'pytest', python: '3.11', install: ['pip install -e .'] }));
      const auto = await loadRecipe('acme/auto', repo.dir, sha, { dir });
      expect(auto.candidates.map((c) => c.label)).toEqual(['py3.9 acme__auto.json', 'py3.11 acme__auto.json', 'py3.13 acme__auto.json']);
      expect(auto.recipe.python).toBe('3.9');
      const fixed = await loadRecipe('acme/fixed', repo.dir, sha, { dir });
      expect(fixed.candidates.map((c) => c.label)).toEqual(['py3.11 acme__fixed.json']);
      await rm(dir, { recursive: true, force: true });
    } finally {
      await repo.remove();
    }
  });
});
