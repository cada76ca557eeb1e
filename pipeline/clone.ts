import { existsSync } from 'node:fs';
import { mkdir, rename, rm } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { simpleGit } from 'simple-git';
import { repoDataDir } from '../core/artifacts.ts';
import { ForesightError } from '../core/errors.ts';
import type { Logger } from '../core/log.ts';

/** Where `owner/name` is cloned from: FORESIGHT_GIT_URL (default https://github.com) + /owner/name.git. */
export function cloneUrl(repo: string, env: NodeJS.ProcessEnv = process.env): string {
  const base = (env.FORESIGHT_GIT_URL || 'https://github.com').replace(/\/+$/, '');
  return `${base}/${repo}.git`;
}

/**
 * The local clone to mine: `explicit` when given, else data/<owner>__<name>/clone, cloned (full
 * history, no checkout) on first use and reused after.
 */
export async function ensureClone(opts: { repo: string; dataRoot: string; explicit?: string; log: Logger; env?: NodeJS.ProcessEnv }): Promise<string> {
  if (opts.explicit) {
    const path = resolve(opts.explicit);
    if (!existsSync(path)) throw new ForesightError(`no clone at ${path}`, { remedy: 'pass CLONE=<path of a local git clone>' });
    return path;
  }
  const path = join(repoDataDir(opts.dataRoot, opts.repo), 'clone');
  if (existsSync(path)) return path;
  const url = cloneUrl(opts.repo, opts.env);
  opts.log.info(`cloning ${url} into ${path} (full history, no checkout)`);
  await mkdir(dirname(path), { recursive: true });
  const partial = `${path}.incomplete`;
  await rm(partial, { recursive: true, force: true });
  try {
    await simpleGit().clone(url, partial, ['--no-checkout', '--quiet']);
  } catch (err) {
    const lines = (err as Error).message.trim().split('\n');
    const why = (lines.find((l) => /fatal:/.test(l)) ?? lines[0] ?? '').replace(/^.*fatal:\s*/, '');
    throw new ForesightError(`could not clone ${url}: ${why}`, {
      remedy: `clone it yourself and pass CLONE=<path> (or set FORESIGHT_GIT_URL to a reachable mirror)`,
      external: true,
      cause: err,
    });
  }
  // Cloned aside and renamed: a clone killed halfway is never taken for a usable one.
  await rename(partial, path);
  return path;
}
