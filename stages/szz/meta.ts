import { git, gitRecords } from '../../core/foundation/git.ts';
import { scratchFile } from '../../core/foundation/scratch.ts';
import { REVERT_SUBJECT } from '../../core/sources/git/find-references.ts';
import { BlobReader } from './blobs.ts';

export type MetaReason = 'merge' | 'revert' | 'mass_change';

interface CommitFacts {
  merge: boolean;
  revert: boolean;
  files: number;
  /** Committer time (unix seconds). */
  time: number;
}

/**
 * Meta-changes: commits that touch lines without changing behaviour (mass reformatting or renames,
 * reverts, merges). Blame looks through them. Whitespace-only commits need no entry: blame runs
 * with -w. The facts of every commit come from one streamed `git log`, read on first use.
 */
export class MetaChanges {
  private facts: Promise<Map<string, CommitFacts>> | undefined;
  private readonly ignoreFiles = new Map<string, Promise<string | null>>();
  private readonly blobs: BlobReader;

  constructor(
    private readonly clone: string,
    /** A commit touching at least this many files is a mass change (reformatting, license headers). */
    private readonly massFiles = 100,
    private readonly rev = 'HEAD',
  ) {
    this.blobs = new BlobReader(clone);
  }

  /** The text of `path` at `rev` through one long-lived git process (no process per file); git show for a name it cannot carry. */
  async fileAt(rev: string, path: string): Promise<string> {
    const text = await this.blobs.read(rev, path).catch(() => undefined);
    if (typeof text === 'string') return text;
    return git(this.clone, ['show', '--end-of-options', `${rev}:${path}`]);
  }

  private load(): Promise<Map<string, CommitFacts>> {
    this.facts ??= (async () => {
      const map = new Map<string, CommitFacts>();
      // Only the number of names is used: git's quoting of unusual ones does not change it.
      const args = ['log', '--format=%x1e%H%x1f%P%x1f%ct%x1f%s', '--name-only', '--no-renames', '--end-of-options', this.rev];
      for await (const rec of gitRecords(this.clone, args, '\x1e')) {
        const nl = rec.indexOf('\n');
        const [sha = '', parents = '', time = '0', subject = ''] = (nl < 0 ? rec : rec.slice(0, nl)).split('\x1f');
        if (!sha.trim()) continue;
        // A root commit adds the project: nothing to look through, whatever its size.
        const root = !parents.trim();
        const files = root || nl < 0 ? 0 : rec.slice(nl + 1).split('\n').filter((l) => l.trim()).length;
        map.set(sha.trim(), {
          merge: parents.trim().split(' ').filter(Boolean).length > 1,
          revert: REVERT_SUBJECT.test(subject),
          files,
          time: Number(time),
        });
      }
      return map;
    })();
    return this.facts;
  }

  async classify(sha: string): Promise<MetaReason | null> {
    const f = (await this.load()).get(sha);
    if (!f) return null;
    if (f.merge) return 'merge';
    if (f.revert) return 'revert';
    return f.files >= this.massFiles ? 'mass_change' : null;
  }

  /** How many files `sha` changed; null when the commit is not in the history read. */
  async filesChanged(sha: string): Promise<number | null> {
    return (await this.load()).get(sha)?.files ?? null;
  }

  /** The committer time of `sha` (unix seconds); null when the commit is not in the history read. */
  async commitTime(sha: string): Promise<number | null> {
    return (await this.load()).get(sha)?.time ?? null;
  }

  /**
   * The repository's own .git-blame-ignore-revs (its newest version, read once), as a file git blame
   * can read; null when absent. Listing a commit that is not an ancestor of a blamed revision is harmless.
   */
  ignoreRevsFile(): Promise<string | null> {
    let p = this.ignoreFiles.get(this.rev);
    if (!p) {
      p = (async () => {
        const blob = (await git(this.clone, ['rev-parse', '--verify', '--quiet', '--end-of-options', `${this.rev}:.git-blame-ignore-revs`]).catch(() => '')).trim();
        // Known mass changes go in up front: one blame round instead of a blame, a lookup and a re-blame.
        const mass = [...(await this.load())].filter(([, f]) => f.files >= this.massFiles).map(([sha]) => sha);
        return this.writeIgnoreFile(blob || null, mass);
      })();
      this.ignoreFiles.set(this.rev, p);
    }
    return p;
  }

  private async writeIgnoreFile(blob: string | null, extra: readonly string[]): Promise<string | null> {
    const text = blob ? await git(this.clone, ['cat-file', 'blob', '--end-of-options', blob]) : '';
    // Keep only full shas that exist here: blame refuses a file naming an unknown commit.
    const listed = text.split('\n').map((l) => l.replace(/#.*/, '').trim()).filter((l) => /^[0-9a-f]{40}$/.test(l));
    const exists = await Promise.all(listed.map((s) => git(this.clone, ['cat-file', '-t', '--end-of-options', s]).then(() => true, () => false)));
    const shas = [...new Set([...listed.filter((_, i) => exists[i]), ...extra])];
    if (!shas.length) return null;
    return scratchFile('ignore-revs', shas.join('\n') + '\n');
  }
}
