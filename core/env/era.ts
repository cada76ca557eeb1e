/**
 * The environment of a commit's era: its recipe (shipped, or detected and verified on the PR's own test
 * files) and the env image built from it. Validate resolves each chain's eras here; emit resolves PR1's
 * era again when the image validation ran in is gone (pruned by another run), so a row is never lost to the cache.
 */
import type { LanguageHint, RecipeMode } from '../foundation/settings.ts';
import { join } from 'node:path';
import { filesAt, git } from '../foundation/git.ts';
import type { Logger } from '../foundation/log.ts';
import { splitPatch } from '../extract/split-patch.ts';
import { DEFAULT_LIMITS, openChainEnv, type StateRun } from './container/chain-env.ts';
import type { ContainerLimits } from './container/limits.ts';
import { CHOICE_FILE } from './image/choice-file.ts';
import { EnvChoices } from './image/choose-env.ts';
import type { EnvImages } from './image/env-images.ts';
import { loadRecipe } from './recipes/load.ts';
import type { Recipe } from './recipes/schema.ts';
import { importedFrom, testImports, type TestImports } from './recipes/test-imports.ts';
import { runnableTestFiles } from './runnable.ts';
import { getRunner } from './runners/registry.ts';
import { DEFAULT_BACKEND } from './services/registry.ts';
import type { Runner } from './runners/types.ts';

/**
 * Where one era's states run: an image and the recipe's runner, or why the environment did not build.
 * `label`: the install candidate chosen (`py3.9 django__django.json`), what a commit that outgrew it names
 * to get the era's next one (eraEnvironment's `without`); absent for an explicit image.
 */
export type EraEnv =
  | {
      kind: 'ready';
      image: string;
      recipe: Recipe;
      runner: Runner;
      built: boolean;
      label?: string;
      /** Requirements its install left out: the offline wheels cannot provide them and the PR's tests do not import them. */
      dropped?: string[];
    }
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
  /** 'detect': ignore shipped recipe files (config `validate.recipes`). */
  recipes?: RecipeMode;
  /** Which ecosystem recipe detection tries first (config `validate.language`). */
  language?: LanguageHint;
  /** Limits of the probe run that checks a detected recipe (default: the container defaults). */
  limits?: Partial<ContainerLimits>;
}

/**
 * The test files a merged change added or modified (first parent → commit), as extract finds them: at a PR's
 * head, that PR's own test files (extract's pr1_test_files for PR1's head), which its detected recipe must
 * be able to run.
 */
export async function changedTestModules(clone: string, commit: string): Promise<string[]> {
  const parents = (await git(clone, ['rev-list', '--parents', '-n', '1', '--end-of-options', commit])).trim().split(' ');
  if (parents.length < 2) return [];
  return (await splitPatch(clone, parents[1]!, commit)).testFiles;
}

/** What decides which test files an era runs (runnableTestFiles, planTestFiles): its recipe and its runner. */
export interface EraTestRules {
  recipe: Recipe;
  runner: Runner;
}

/**
 * The recipe and runner every install candidate of `commit`'s era shares, read from the commit alone (no image,
 * no container), or null when the candidates differ in what decides the test files (their runner, `testFiles`
 * or backends): which tests a chain runs is then known only once the era is chosen.
 */
export async function eraTestRules(opts: Pick<EnvironmentOptions, 'repo' | 'clone' | 'recipes' | 'language' | 'image' | 'runner'>, commit: string): Promise<EraTestRules | null> {
  const loaded = await loadRecipe(opts.repo, opts.clone, commit, { recipes: opts.recipes, language: opts.language });
  if (opts.image) {
    const runner = getRunner(opts.runner);
    return { recipe: { ...loaded.recipe, runner: runner.name as Recipe['runner'] }, runner };
  }
  const rule = (r: Recipe): string => JSON.stringify([r.runner, r.testFiles ?? null, r.backends]);
  const first = rule(loaded.recipe);
  if (loaded.candidates.some((c) => rule(c.recipe) !== first)) return null;
  return { recipe: loaded.recipe, runner: getRunner(loaded.recipe.runner) };
}

/**
 * How many cases of each test file the check of a candidate runs: whether the tests collect and run at all
 * shows in a sample as in the whole (sqlfluff's dialect module holds thousands, past any run timeout).
 */
export const PROBE_SAMPLE = 50;

/** One run of the candidate's runner at `commit` on the test files (a sample of each), in a locked-down container (no network, limits). */
async function probeRun(opts: EnvironmentOptions, commit: string, image: string, recipe: Recipe, testFiles: string[]): Promise<StateRun> {
  const runner = getRunner(recipe.runner);
  const env = await openChainEnv({ gitDir: opts.gitDir, image, runner, env: recipe.env, docker: opts.images.docker, signal: opts.signal, ...DEFAULT_LIMITS, ...opts.limits });
  try {
    return await env.runState({ checkout: commit, overlay: null, testFiles, sample: PROBE_SAMPLE });
  } finally {
    await env.close().catch(() => undefined);
  }
}

/**
 * The environment of an era of a chain: the repository's recipe at that commit, and the env image
 * built from it (keyed by the recipe and the dependency files, so chains of one era share it).
 * An install that fails is returned as a problem (the states then did not run), never thrown.
 */
/** The run's choice file of detected recipes: one per EnvImages (one run), so writes are serialised. */
const choicesOf = new WeakMap<EnvImages, EnvChoices>();

/**
 * `testFiles`: the PR's test files a detected candidate must run usably at `commit` before it is chosen,
 * those of them that exist at `commit` (default: the test modules the commit changed, see changedTestModules).
 * `without`: the labels of candidates a run showed `commit` has outgrown (runners/evidence.ts
 * outgrownEnvironment): the first of the others that installs is chosen for it, remembered as an era of
 * its own (the remaining candidates' keys), unchecked: the run that showed it is run again there, which is its check.
 */
export async function eraEnvironment(opts: EnvironmentOptions, commit: string, testFiles?: readonly string[], without: readonly string[] = []): Promise<EraEnv> {
  const loaded = await loadRecipe(opts.repo, opts.clone, commit, { recipes: opts.recipes, language: opts.language });
  const { recipe } = loaded;
  if (opts.image) {
    const runner = getRunner(opts.runner);
    if (without.length) return { kind: 'broken', problem: `the image ${opts.image} cannot run ${commit.slice(0, 10)}: an installed package lacks what its code imports`, recipe, runner };
    return { kind: 'ready', image: opts.image, recipe: { ...recipe, runner: runner.name as Recipe['runner'] }, runner, built: false };
  }
  // A no-isolation twin installs the same packages as its isolated candidate: passed over with it.
  const left = loaded.candidates.filter((c) => !without.includes(c.label) && !without.includes(c.label.replace('no-isolation ', '')));
  if (!left.length) {
    const runner = getRunner(recipe.runner);
    return { kind: 'broken', problem: `no install candidate can run ${commit.slice(0, 10)}: ${without.map((l) => `"${l}"`).join(', ')} lack what its code imports from an installed package`, recipe, runner };
  }
  const candidates = left as [(typeof left)[number], ...typeof left];
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
  if (candidates.length > 1 || without.length) {
    let choices = choicesOf.get(opts.images);
    if (!choices) choicesOf.set(opts.images, (choices = new EnvChoices(join(opts.repoDir, CHOICE_FILE))));
    // A bisection asks an era at commits older than the PR whose test files it is given: files that do not
    // exist there yet tell nothing (the container's run skips them), so none is no probe at all. Read once,
    // and only when a candidate is probed (a recorded choice needs no files).
    let present: Promise<string[]> | null = null;
    const existing = async (): Promise<string[]> => filesAt(opts.clone, commit, testFiles ?? (await changedTestModules(opts.clone, commit)));
    const verify = async (image: string, c: { recipe: Recipe }): Promise<StateRun | null> => {
      // The check runs without a database service: the default backend's files.
      const mine = runnableTestFiles({ recipe: c.recipe, runner: getRunner(c.recipe.runner) }, await (present ??= existing()), DEFAULT_BACKEND);
      return mine.length ? probeRun(opts, commit, image, c.recipe, mine) : null;
    };
    let imports: Promise<TestImports> | null = null;
    const importsOf = async (): Promise<TestImports> => (imports ??= testImports(opts.clone, commit, await (present ??= existing())));
    const passOver: string[] = [];
    const choose = () => choices.choose({ images: opts.images, req, candidates, testImports: importsOf, without, passOver, ...(without.length ? {} : { verify }) });
    let chosen = await choose();
    // A choice made at once for another PR of the era (shared while in flight) kept a requirement that PR's
    // tests import; this PR's may not: asked again, the recorded rejections are retried without it.
    if (chosen.kind === 'failed' && chosen.rejected.some((r) => /\(not left out: /.test(r.reason))) chosen = await choose();
    // An era's choice is checked on the tests of the PR that first asked: a candidate leaving out a requirement
    // this PR's tests import is passed over for it (an era of its own), never run.
    for (;;) {
      if (chosen.kind !== 'ready' || !chosen.dropped.length) break;
      const imp = await importsOf();
      const needed = chosen.dropped.map((d) => [d, importedFrom(d, imp)] as const).filter(([, where]) => where !== null);
      if (!needed.length) break;
      opts.log.info(`"${chosen.candidate.label}" left out ${needed.map(([d, where]) => `${d} (${where})`).join(', ')}: another install candidate for ${commit.slice(0, 10)}`);
      passOver.push(chosen.candidate.label);
      chosen = await choose();
    }
    if (chosen.kind === 'ready') {
      const r = chosen.candidate.recipe;
      return { kind: 'ready', image: chosen.result.image, recipe: r, runner: getRunner(r.runner), built: chosen.result.built, label: chosen.candidate.label, dropped: chosen.dropped };
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
  return { kind: 'ready', image: res.image, recipe, runner, built: res.built, label: candidates[0].label };
}
