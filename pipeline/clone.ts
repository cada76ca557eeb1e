import { existsSync } from 'node:fs';
import { mkdir, rename, rm } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { simpleGit } from 'simple-git';
import { repoDataDir } from '../core/foundation/artifacts.ts';
import { ForesightError } from '../core/foundation/errors.ts';
import type { Logger } from '../core/foundation/log.ts';

/** Where `owner/name` is cloned from: config clone.gitUrl (default https://github.com) + /owner/name.git. */
export function cloneUrl(repo: string, gitUrl = 'https://github.com'): string {
  return `${gitUrl.replace(/\/+$/, '')}/${repo}.git`;
}

/** `url` with `user:password` put back in (they live in Secrets, never in Config or logs). */
function withCredentials(url: string, credentials: string | null): string {
  if (!credentials) return url;
  try {
    const u = new URL(url);
    const [user, ...pass] = credentials.split(':');
    u.username = encodeURIComponent(user ?? '');
    if (pass.length) u.password = encodeURIComponent(pass.join(':'));
    return u.toString();
  } catch {
    return url;
  }
}

export interface EnsureCloneOptions {
  repo: string;
  dataRoot: string;
  /** `--clone PATH`: a local clone to read instead. */
  explicit?: string;
  log: Logger;
  /** config clone.gitUrl (credentials stripped). */
  gitUrl?: string;
  /** Secrets gitUrlCredentials: `user:password` for gitUrl, never printed. */
  credentials?: string | null;
  /** config discover.offline: no network, so no cloning either. */
  offline?: boolean;
  /** Clone from this URL instead of gitUrl/owner/name (a campaign's `clone:`). */
  url?: string;
}

/**
 * The local clone to mine: `explicit` when given, else data/<owner>__<name>/clone, cloned (full
 * history, no checkout) on first use and reused after.
 */
export async function ensureClone(opts: EnsureCloneOptions): Promise<string> {
  if (opts.explicit) {
    const path = resolve(opts.explicit);
    if (!existsSync(path)) throw new ForesightError(`no clone at ${path}`, { remedy: 'pass --clone <path of a local git clone> (make: CLONE=<path>)' });
    return path;
  }
  const path = join(repoDataDir(opts.dataRoot, opts.repo), 'clone');
  if (existsSync(path)) return path;
  const url = opts.url ?? cloneUrl(opts.repo, opts.gitUrl);
  if (opts.offline) {
    throw new ForesightError(`no clone of ${opts.repo} at ${path}, and an offline run does not clone ${url}`, {
      remedy: 'pass --clone <path of a local clone>, or run without --offline (FORESIGHT_OFFLINE) to clone it',
    });
  }
  opts.log.info(`cloning ${url} into ${path} (full history, no checkout)`);
  await mkdir(dirname(path), { recursive: true });
  const partial = `${path}.incomplete`;
  await rm(partial, { recursive: true, force: true });
  try {
    await simpleGit().clone(withCredentials(url, opts.credentials ?? null), partial, ['--no-checkout', '--quiet']);
  } catch (err) {
    const lines = (err as Error).message.trim().split('\n');
    const why = (lines.find((l) => /fatal:/.test(l)) ?? lines[0] ?? '').replace(/^.*fatal:\s*/, '');
    throw new ForesightError(`could not clone ${url}: ${why}`, {
      remedy: `clone it yourself and pass --clone <path> (or set FORESIGHT_GIT_URL to a reachable mirror)`,
      external: true,
      cause: err,
    });
  }
  // Cloned aside and renamed: a clone killed halfway is never taken for a usable one.
  await rename(partial, path);
  return path;
}
