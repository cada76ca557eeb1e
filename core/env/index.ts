/**
 * Test environments, the one surface the stages use: images (base tier from Debian packages, env tier
 * per recipe and dependency files, cache policy) and containers (one locked-down container per
 * environment, states run as execs, removed on abort), plus the recipes and runners that shape them.
 */
export * from './docker.ts';
export * from './images.ts';
export { loadRecipe, recipeFileName, parseRecipe, type LoadedRecipe } from './recipes/load.ts';
export { isIgnoredTest, filterTestFiles, RecipeSchema, type Recipe } from './recipes/schema.ts';
export { getRunner, runners } from './runners/registry.ts';
export type { ParsedRun, Runner, TestStatus } from './runners/types.ts';
