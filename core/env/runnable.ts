import { filterTestFiles, type Recipe } from './recipes/schema.ts';
import type { Runner } from './runners/types.ts';

/**
 * The test files an environment runs: those its recipe lets run (its `testFiles` globs) that its runner
 * can run (Django's runtests.py no js_tests/*.test.js). Without a recipe or a runner, that side keeps all.
 */
export function runnableTestFiles(env: { recipe: Pick<Recipe, 'testFiles'> | null; runner: Pick<Runner, 'runs'> | null }, files: readonly string[]): string[] {
  const allowed = env.recipe ? filterTestFiles(env.recipe, files) : [...files];
  return allowed.filter((f) => env.runner?.runs?.(f) ?? true);
}
