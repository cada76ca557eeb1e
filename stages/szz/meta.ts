import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { git } from '../../pipeline/git.ts';

export type MetaReason = 'merge' | 'revert' | 'mass_change' | 'whitespace_only';

/**
 * Meta-changes: commits that touch lines without changing behaviour (reformatting, mass renames,
 * reverts, merges). Blame looks through them. Each commit is classified once and cached.
 */
export class MetaChanges {
  private readonly cache = new Map<string, Promise<MetaReason | null>>();
  private readonly ignoreFiles = new Map<string, Promise<string | null>>();

  constructor(
    private readonly clone: string,
    /** A commit touching at least this many files is a mass change (reformatting, license headers). */
    private readonly massFiles = 100,
  ) {}

  classify(sha: string): Promise<MetaReason | null> {
    let p = this.cache.get(sha);
    if (!p) {
      p = this.compute(sha);
      this.cache.set(sha, p);
    }
    return p;
  }

  private async compute(sha: string): Promise<MetaReason | null> {
    const [parents = '', subject = ''] = (await git(this.clone, ['show', '-s', '--format=%P%x00%s', sha])).trim().split('\0');
    if (parents.split(' ').filter(Boolean).length > 1) return 'merge';
    if (/^(\[[\w.]+\]\s*)?Revert\s+"/i.test(subject)) return 'revert';
    if (!parents) return null; // a root commit: nothing to look through
    const files = (await git(this.clone, ['diff-tree', '--no-commit-id', '-r', '--name-only', sha])).split('\n').filter(Boolean);
    if (files.length >= this.massFiles) return 'mass_change';
    const ws = (await git(this.clone, ['diff-tree', '--no-commit-id', '-r', '-w', '--numstat', sha])).split('\n').filter(Boolean);
    const changed = ws.some((l) => !/^0\t0\t/.test(l) && !/^-\t-\t/.test(l));
    return changed ? null : 'whitespace_only';
  }

  /** The repository's own .git-blame-ignore-revs at `rev`, as a file git blame can read; null when absent. */
  async ignoreRevsFile(rev: string): Promise<string | null> {
    let blob: string;
    try {
      blob = (await git(this.clone, ['rev-parse', '--verify', '--quiet', `${rev}:.git-blame-ignore-revs`])).trim();
    } catch {
      return null;
    }
    if (!blob) return null;
    let p = this.ignoreFiles.get(blob);
    if (!p) {
      p = this.writeIgnoreFile(blob);
      this.ignoreFiles.set(blob, p);
    }
    return p;
  }

  private async writeIgnoreFile(blob: string): Promise<string | null> {
    const text = await git(this.clone, ['cat-file', 'blob', blob]);
    // Keep only full shas that exist here: blame refuses a file naming an unknown commit.
    const shas = text.split('\n').map((l) => l.replace(/#.*/, '').trim()).filter((l) => /^[0-9a-f]{40}$/.test(l));
    const exists = await Promise.all(shas.map((s) => git(this.clone, ['cat-file', '-t', s]).then(() => true, () => false)));
    this.tmp ??= mkdtemp(join(tmpdir(), 'foresight-ignore-revs-'));
    const path = join(await this.tmp, blob);
    await writeFile(path, shas.filter((_, i) => exists[i]).join('\n') + '\n');
    return path;
  }

  private tmp: Promise<string> | undefined;
}
