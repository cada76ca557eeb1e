/**
 * The recipe of a repository: its file `core/env/recipes/<owner>__<name>.json` when there is
 * one (checked with zod: a mistake is a ForesightError naming the file, the field and the fix),
 * else the recipe detected from the repository at the commit (detect.ts).
 */
import type { LanguageHint, RecipeMode } from '../../foundation/settings.ts';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { z } from 'zod';
import { ForesightError } from '../../foundation/errors.ts';
import { detectCandidates, listTree, type RecipeCandidate } from './detect.ts';
import { pythonEra } from './python-era.ts';
import { goModVersion, goOrder, GO_TOOLCHAINS } from './go-era.ts';
import { git } from '../../foundation/git.ts';
import { DEFAULT_DEPENDENCY_FILES, RecipeSchema, runnerNames, type Recipe } from './schema.ts';
import { NODE_DEPENDENCY_FILES, readNodeProject } from './detect-node.ts';
import { nodeEra, packageManagerFor, pickLockfile } from './node-era.ts';
import { rowLanguage } from '../runners/language.ts';

/** Where the shipped recipe files live. */
export const RECIPES_DIR = fileURLToPath(new URL('./', import.meta.url));

export interface LoadedRecipe {
  recipe: Recipe;
  /** 'file': the repository's recipe file; 'detected': auto-detected at the commit. */
  source: 'file' | 'detected';
  /** The recipe file, when source is 'file'. */
  file: string | null;
  /** How the recipe was found, one line each (for the log). */
  reasons: string[];
  /** The installs to try in order (`recipe` is the first); a recipe file has only itself. */
  candidates: [RecipeCandidate, ...RecipeCandidate[]];
}

export interface LoadRecipeOptions {
  /** Directory of recipe files (default: this folder). */
  dir?: string;
  /** 'detect': ignore the recipe file and detect (config `validate.recipes`); default 'shipped'. */
  recipes?: RecipeMode;
  /** Which ecosystem detection tries first (config `validate.language`). */
  language?: LanguageHint;
}

/** `owner/name` → `owner__name.json`. */
export function recipeFileName(repo: string): string {
  const m = /^([A-Za-z0-9][A-Za-z0-9_.-]*)\/([A-Za-z0-9_.][A-Za-z0-9_.-]*)$/.exec(repo);
  if (!m || m[2] === '.' || m[2] === '..') {
    throw new ForesightError(`invalid repository name "${repo}"`, { remedy: 'use owner/name, e.g. django/django' });
  }
  return `${m[1]}__${m[2]}.json`;
}

function fieldPath(issue: z.core.$ZodIssue): string {
  if (issue.path.length === 0) return '(top level)';
  return issue.path.map((p, i) => (typeof p === 'number' ? `[${p}]` : `${i === 0 ? '' : '.'}${String(p)}`)).join('');
}

/** Parse a recipe file's text; any problem is a ForesightError naming the file and the field. */
export function parseRecipe(text: string, file: string): Recipe {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new ForesightError(`recipe ${file} is not valid JSON: ${(err as Error).message}`, {
      remedy: `fix the JSON syntax of ${file}`,
      cause: err,
    });
  }
  const res = RecipeSchema.safeParse(json);
  if (res.success) return res.data;
  const problems = res.error.issues.map((i) => {
    const field = fieldPath(i);
    if (i.code === 'unrecognized_keys') return `unknown field(s) ${i.keys.map((k) => `"${k}"`).join(', ')}${field === '(top level)' ? '' : ` in ${field}`}`;
    return `field "${field}": ${i.message}`;
  });
  const fields = [...new Set(res.error.issues.map(fieldPath))];
  throw new ForesightError(`recipe ${file} is invalid: ${problems.join('; ')}`, {
    remedy: `fix ${fields.join(', ')} in ${file} (fields: runner ${runnerNames().map((n) => `'${n}'`).join('|')}, python, go, node, packageManager, systemPackages, install, dependencyFiles, env, ignoreTests, testFiles; see core/env/recipes/schema.ts)`,
  });
}

/**
 * The repository's recipe file if present (and `opts.recipes` is not 'detect'), else the recipe
 * auto-detected from `clone` at `commit`. `repo` is `owner/name`.
 */
export async function loadRecipe(repo: string, clone: string, commit: string, opts: LoadRecipeOptions = {}): Promise<LoadedRecipe> {
  const file = path.join(opts.dir ?? RECIPES_DIR, recipeFileName(repo));
  let text: string | null = null;
  try {
    if (opts.recipes !== 'detect') text = await readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') {
      throw new ForesightError(`cannot read recipe ${file}: ${(err as Error).message}`, {
        remedy: 'check the file permissions',
        cause: err,
      });
    }
  }
  if (text !== null) {
    const parsed = parseRecipe(text, file);
    const own: RecipeCandidate = { label: path.basename(file), recipe: parsed, isolated: true };
    const node = await withNode(own, clone, commit);
    const { candidates, reasons } = await withPythons(node?.candidates ?? (await withGo(own, clone, commit)), clone, commit);
    return { recipe: candidates[0].recipe, source: 'file', file, reasons: [`recipe file ${file}`, ...(node?.reasons ?? []), ...reasons], candidates };
  }
  const detected = await detectCandidates(clone, commit, opts.language);
  const { candidates, reasons } = await withPythons(detected.candidates, clone, commit);
  return {
    recipe: candidates[0].recipe,
    source: 'detected',
    file: null,
    reasons: [opts.recipes === 'detect' ? 'recipe files ignored (FORESIGHT_RECIPES=detect): detected' : `no ${path.basename(file)}: detected`, ...detected.reasons, ...reasons],
    candidates,
  };
}

/** A `go` recipe that names no toolchain: one candidate per toolchain its commit's go.mod allows, in order (go-era.ts). */
async function withGo(c: RecipeCandidate, clone: string, commit: string): Promise<[RecipeCandidate, ...RecipeCandidate[]]> {
  if (c.recipe.runner !== 'go' || c.recipe.go) return [c];
  const goMod = await git(clone, ['show', '--end-of-options', `${commit}:go.mod`]).catch(() => '');
  const date = (await git(clone, ['show', '-s', '--format=%cI', '--end-of-options', commit]).catch(() => '')).trim();
  const order = goOrder(goModVersion(goMod), date || null);
  return order.map((go) => ({ ...c, label: `go${go} ${c.label}`, recipe: { ...c.recipe, go, python: GO_TOOLCHAINS[go].python } })) as [RecipeCandidate, ...RecipeCandidate[]];
}

/**
 * A JavaScript runner's recipe (null for others): when its `node` is "auto" (or absent), one candidate per
 * Node major its commit asks for (node-era.ts), in order; `packageManager`, when absent, the commit's
 * lockfile's for that Node. Its Python (the harness scripts') is bookworm's unless the file names one, and
 * its dependency files, unless the file names them, package.json, the lockfiles and the clients' configuration.
 */
async function withNode(c: RecipeCandidate, clone: string, commit: string): Promise<{ candidates: [RecipeCandidate, ...RecipeCandidate[]]; reasons: string[] } | null> {
  const r = c.recipe;
  if (r.node === undefined && ['python', 'go'].includes(rowLanguage(r.runner, []))) return null;
  const project = await readNodeProject(clone, commit, await listTree(clone, commit));
  const era = r.node === undefined || r.node === 'auto' ? nodeEra({ ...project }) : { order: [Number(r.node)], reasons: [] };
  const lock = pickLockfile(project.lockfiles, project.packageJson.packageManager);
  const defaultFiles = r.dependencyFiles.length === DEFAULT_DEPENDENCY_FILES.length && r.dependencyFiles.every((f, i) => f === DEFAULT_DEPENDENCY_FILES[i]);
  const candidates = era.order.map((major): RecipeCandidate => {
    const packageManager = r.packageManager ?? packageManagerFor(lock, project.packageJson.packageManager, major).spec;
    return {
      ...c,
      label: `node${major} ${packageManager} ${c.label}`,
      recipe: { ...r, node: String(major), packageManager, python: r.python === 'auto' ? '3.11' : r.python, dependencyFiles: defaultFiles ? [...NODE_DEPENDENCY_FILES] : r.dependencyFiles },
    };
  });
  return { candidates: candidates as [RecipeCandidate, ...RecipeCandidate[]], reasons: era.reasons.map((x) => `node: ${x}`) };
}

/**
 * Each candidate on each Python to try, Python first (`python: "auto"` is resolved from the project's
 * metadata at the commit, python-era.ts); labels say which, e.g. `py3.11 .[test]`.
 */
async function withPythons(
  cands: readonly [RecipeCandidate, ...RecipeCandidate[]],
  clone: string,
  commit: string,
): Promise<{ candidates: [RecipeCandidate, ...RecipeCandidate[]]; reasons: string[] }> {
  const auto = cands.some((c) => c.recipe.python === 'auto');
  const era = auto ? await pythonEra(clone, commit, await listTree(clone, commit)) : null;
  const out: RecipeCandidate[] = [];
  for (const p of era?.order ?? [null]) {
    for (const c of cands) {
      if (p !== null && c.recipe.python !== 'auto') continue;
      const python = p ?? c.recipe.python;
      // A Go candidate's Python is its toolchain's release's (harness scripts only): its label names the Go.
      // A Node candidate's too (its label names the Node).
      out.push({ ...c, label: c.recipe.go || c.recipe.node ? c.label : `py${python} ${c.label}`, recipe: { ...c.recipe, python } });
    }
  }
  // Candidates with a fixed Python keep their place after the auto ones (a mix only happens in tests).
  for (const c of cands) if (era && c.recipe.python !== 'auto') out.push({ ...c, label: `py${c.recipe.python} ${c.label}` });
  return { candidates: out as [RecipeCandidate, ...RecipeCandidate[]], reasons: era ? era.reasons.map((r) => `python: ${r}`) : [] };
}
