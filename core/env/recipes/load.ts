/**
 * The recipe of a repository: its file `core/env/recipes/<owner>__<name>.json` when there is
 * one (checked with zod: a mistake is a ForesightError naming the file, the field and the fix),
 * else the recipe detected from the repository at the commit (detect.ts).
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { z } from 'zod';
import { ForesightError } from '../../errors.ts';
import { detectRecipe } from './detect.ts';
import { RecipeSchema, runnerNames, type Recipe } from './schema.ts';

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
}

export interface LoadRecipeOptions {
  /** Directory of recipe files (default: this folder). */
  dir?: string;
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
    remedy: `fix ${fields.join(', ')} in ${file} (fields: runner ${runnerNames().map((n) => `'${n}'`).join('|')}, python, systemPackages, install, dependencyFiles, env, ignoreTests, testFiles; see core/env/recipes/schema.ts)`,
  });
}

/**
 * The repository's recipe file if present, else the recipe auto-detected from `clone` at `commit`.
 * `repo` is `owner/name`.
 */
export async function loadRecipe(repo: string, clone: string, commit: string, opts: LoadRecipeOptions = {}): Promise<LoadedRecipe> {
  const file = path.join(opts.dir ?? RECIPES_DIR, recipeFileName(repo));
  let text: string | null = null;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') {
      throw new ForesightError(`cannot read recipe ${file}: ${(err as Error).message}`, {
        remedy: 'check the file permissions',
        cause: err,
      });
    }
  }
  if (text !== null) {
    return { recipe: parseRecipe(text, file), source: 'file', file, reasons: [`recipe file ${file}`] };
  }
  const detected = await detectRecipe(clone, commit);
  return { recipe: detected.recipe, source: 'detected', file: null, reasons: [`no ${path.basename(file)}: detected`, ...detected.reasons] };
}
