/** What names an env image: its key (hash of what builds it), its tag and its labels (see core/env/README.md). */
import { fingerprint } from '../../foundation/fingerprint.ts';
import { git } from '../../foundation/git.ts';
import { matchesAny } from '../../foundation/glob.ts';
import { buildFields, type Recipe } from '../recipes/schema.ts';
import { aptScript, depsScript, finishScript, installScript, nodeScript, prepScript, STOP_SCRIPT } from './build-scripts.ts';
import { goDepsKeyParts, goDepsScript } from './go-deps.ts';
import { resolveNodeTools } from './node-dist.ts';
import type { PackageSources } from './types.ts';

export const ENV_REPOSITORY = 'foresight-env';
/** Database services' images (core/env/services/image.ts); the cache policy prunes them with the env images. */
export const SERVICE_REPOSITORY = 'foresight-service';

export const KEY_LABEL = 'foresight.env.key';
export const CREATED_LABEL = 'foresight.env.created';
export const REPO_LABEL = 'foresight.env.repo';
export const COMMIT_LABEL = 'foresight.env.commit';
export const BASE_LABEL = 'foresight.env.base';

export interface DependencyFile {
  path: string;
  /** git blob id: a hash of the file's content. */
  blob: string;
}

/** The files matching the recipe's dependencyFiles at `commit`, with their content ids (no checkout). */
export async function dependencyFiles(clone: string, commit: string, globs: readonly string[]): Promise<DependencyFile[]> {
  const out = await git(clone, ['ls-tree', '-r', '-z', '--full-tree', '--end-of-options', commit]);
  const files: DependencyFile[] = [];
  for (const rec of out.split('\0')) {
    const tab = rec.indexOf('\t');
    if (tab < 0) continue;
    const [, type, blob] = rec.slice(0, tab).split(' ');
    const p = rec.slice(tab + 1);
    if (type === 'blob' && blob && matchesAny(p, globs)) files.push({ path: p, blob });
  }
  return files.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

export interface EnvKeyInput {
  clone: string;
  commit: string;
  recipe: Recipe;
  /** Docker id of the base image. */
  baseId: string;
  /** The build's package sources: whether a Go image has its go deps step, and its GOFLAGS, key it; the npm registry only resolves a Node image's exact tools. */
  sources?: Pick<PackageSources, 'goProxy' | 'goFlags' | 'npmRegistry'> | null;
}

/**
 * The env image key (24 hex digits) and the dependency files it covers. A Node recipe's key also covers its
 * exact Node and client (image/node-dist.ts; the node step names their tarballs) and its deps step, or why
 * they cannot be had (its build then fails with that reason); a Go image's, its go deps step and GOFLAGS when
 * it has that step (go-deps.ts; never the proxy); other recipes' keys have nothing of it.
 */
export async function envImageKey(input: EnvKeyInput): Promise<{ key: string; files: DependencyFile[] }> {
  const files = await dependencyFiles(input.clone, input.commit, input.recipe.dependencyFiles);
  const node = input.recipe.node ? await resolveNodeTools(input.recipe, { registry: input.sources?.npmRegistry ?? null }) : null;
  const key = fingerprint(
    'foresight-env/1',
    input.baseId,
    buildFields(input.recipe),
    aptScript(input.recipe) ?? '',
    prepScript(input.recipe),
    installScript(input.recipe),
    STOP_SCRIPT,
    finishScript(input.recipe),
    files,
    ...(node === null ? [] : [node.ok ? [nodeScript(node.tools), depsScript(node.tools)] : { unresolved: node.reason }]),
    ...goDepsKeyParts(input.recipe, input.sources, goDepsScript()),
  ).slice(0, 24);
  return { key, files };
}

export function envImageTag(key: string): string {
  return `${ENV_REPOSITORY}:${key}`;
}
