import { join } from 'node:path';
import type { Logger } from '../../core/log.ts';
import { CHOICE_FILE, EnvChoices, getRunner, loadRecipe, type EnvImages, type Recipe, type Runner } from '../../core/env/index.ts';

/** Where one era's states run: an image and the recipe's runner, or why the environment did not build. */
export type EraEnv =
  | { kind: 'ready'; image: string; recipe: Recipe; runner: Runner; built: boolean }
  | { kind: 'broken'; problem: string; recipe: Recipe | null; runner: Runner | null };

export interface EnvironmentOptions {
  repo: string;
  clone: string;
  gitDir: string;
  repoDir: string;
  log: Logger;
  /** This run's env images (builds shared by the chains of one era). */
  images: EnvImages;
  /** An explicit image for every chain (no environment tier). */
  image: string | null;
  /** The runner when `image` is explicit. */
  runner: string;
  signal: AbortSignal;
}

/**
 * The environment of an era of a chain: the repository's recipe at that commit, and the env image
 * built from it (keyed by the recipe and the dependency files, so chains of one era share it).
 * An install that fails is returned as a problem (the states then did not run), never thrown.
 */
/** The run's choice file of detected recipes: one per EnvImages (one run), so writes are serialised. */
const choicesOf = new WeakMap<EnvImages, EnvChoices>();

export async function eraEnvironment(opts: EnvironmentOptions, commit: string): Promise<EraEnv> {
  const { recipe, candidates } = await loadRecipe(opts.repo, opts.clone, commit);
  if (opts.image) {
    const runner = getRunner(opts.runner);
    return { kind: 'ready', image: opts.image, recipe: { ...recipe, runner: runner.name as Recipe['runner'] }, runner, built: false };
  }
  const req = {
    clone: opts.clone,
    gitDir: opts.gitDir,
    repo: opts.repo,
    commit,
    log: opts.log,
    logDir: join(opts.repoDir, 'validate', 'env-logs'),
    signal: opts.signal,
  };
  // Detected recipes verify themselves: the first candidate that installs (data/<repo>/env-recipes.json).
  if (candidates.length > 1) {
    let choices = choicesOf.get(opts.images);
    if (!choices) choicesOf.set(opts.images, (choices = new EnvChoices(join(opts.repoDir, CHOICE_FILE))));
    const chosen = await choices.choose({ images: opts.images, req, candidates });
    if (chosen.kind === 'ready') {
      const r = chosen.candidate.recipe;
      return { kind: 'ready', image: chosen.result.image, recipe: r, runner: getRunner(r.runner), built: chosen.result.built };
    }
    const why = chosen.rejected.map((x) => `"${x.label}": ${x.reason}`).join('; ');
    return {
      kind: 'broken',
      problem: `environment install failed at ${commit.slice(0, 10)} for every detected candidate (${why})${chosen.last ? ` (log: ${chosen.last.log})` : ''}`,
      recipe,
      runner: getRunner(recipe.runner),
    };
  }
  const runner = getRunner(recipe.runner);
  const res = await opts.images.envImageFor({ ...req, recipe });
  if (!res.ok) return { kind: 'broken', problem: `environment install failed at ${commit.slice(0, 10)}: ${res.detail.trim().split('\n').pop() ?? ''} (log: ${res.log})`, recipe, runner };
  return { kind: 'ready', image: res.image, recipe, runner, built: res.built };
}
