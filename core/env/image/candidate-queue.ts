/**
 * The install candidates of one era in the order choose-env.ts tries them: each with its env key, the
 * detected candidate it derives from and what it leaves out or unpins.
 */
import { readFile } from 'node:fs/promises';
import type { RecipeCandidate } from '../recipes/detect.ts';
import { leftOutInLog } from '../recipes/drop-unavailable.ts';
import { normaliseDist } from '../recipes/test-imports.ts';
import { BASE_SCRIPT, baseImageTag } from './base.ts';
import { envImageKey } from './key.ts';
import { releaseOf } from './release.ts';
import type { EnvImageRequest, EnvImageResult, PackageSources } from './types.ts';

type Ok = Extract<EnvImageResult, { ok: true }>;

/** One install candidate in the order tried: a detected one, or one without requirements it could not install (`drop`). */
export interface Entry {
  c: RecipeCandidate;
  /** Its env key on the base's tag. */
  key: string;
  /** The detected candidate it comes from (itself when detected). */
  origin: RecipeCandidate;
  /** The requirements it leaves out by name (none for a detected candidate). */
  drop: string[];
  /** The requirements it installs without their version pin. */
  relax: string[];
}

/** How a candidate that failed to install is tried again: the requirements left out, and those unpinned. */
export type Retry = { drop: string[]; relax: string[] };

/** A candidate's env key on its base's tag (the build script's hash per release), not the base's id: no base is built to look up a choice. */
export async function candidateKey(req: Omit<EnvImageRequest, 'recipe'>, c: RecipeCandidate, sources?: PackageSources): Promise<string> {
  return (await envImageKey({ clone: req.clone, commit: req.commit, recipe: c.recipe, baseId: await baseImageTag(BASE_SCRIPT, releaseOf(c.recipe.python)), sources })).key;
}

/** What an installed candidate left out: the requirements it drops by name and those its build log says were skipped. */
export async function droppedBy(e: Entry, res: Ok): Promise<string[]> {
  const out = [...e.drop];
  const log = res.log === null ? '' : await readFile(res.log, 'utf8').catch(() => '');
  for (const n of leftOutInLog(log)) if (!out.some((d) => normaliseDist(d) === normaliseDist(n))) out.push(n);
  return out;
}
