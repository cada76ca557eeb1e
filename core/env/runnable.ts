import { filterTestFiles, type Recipe } from './recipes/schema.ts';
import type { Runner } from './runners/types.ts';
import { backendNames } from './services/registry.ts';

type RunsWhat = { recipe: Pick<Recipe, 'testFiles'> | null; runner: Pick<Runner, 'name' | 'runs'> | null };

/**
 * The test files an environment runs on a database backend: those its recipe lets run (its `testFiles` globs)
 * that its runner can run there (Django's runtests.py: no js_tests/*.test.js, gis_tests only on PostGIS).
 * Without a recipe or a runner, that side keeps all.
 */
export function runnableTestFiles(env: RunsWhat, files: readonly string[], backend: string): string[] {
  const allowed = env.recipe ? filterTestFiles(env.recipe, files) : [...files];
  return allowed.filter((f) => env.runner?.runs?.(f, backend) ?? true);
}

/**
 * A PR's test files on the backends an environment offers, in order: the files each backend runs (backends that
 * run none left out), or why none runs any: `no_tests`, no backend at all would (another language's tests, or
 * the recipe's `testFiles` leave them out); `tests_skipped`, only a backend the recipe does not name would.
 */
export type TestFilesPlan =
  | { kind: 'runs'; on: Array<{ backend: string; files: string[] }> }
  | { kind: 'none'; reason: 'no_tests' | 'tests_skipped'; detail: string };

export function planTestFiles(env: RunsWhat, files: readonly string[], backends: readonly string[]): TestFilesPlan {
  const on = backends.map((backend) => ({ backend, files: runnableTestFiles(env, files, backend) })).filter((b) => b.files.length);
  if (on.length) return { kind: 'runs', on };
  const list = files.join(', ');
  const elsewhere = backendNames().filter((b) => !backends.includes(b) && runnableTestFiles(env, files, b).length);
  if (elsewhere.length) {
    return { kind: 'none', reason: 'tests_skipped', detail: `touched test files that run only on the ${elsewhere.join(' or ')} backend, which the recipe does not name (it names ${backends.join(', ')}): ${list}` };
  }
  const globs = env.recipe?.testFiles;
  return { kind: 'none', reason: 'no_tests', detail: `touched no test file the ${env.runner?.name ?? 'configured'} runner runs${globs ? ` among its recipe's testFiles (${globs.join(', ')})` : ''}: ${list}` };
}
