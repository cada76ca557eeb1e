/**
 * Writing the demo repository's commits: a git repository driven with fixed identities, dates one day
 * apart and an isolated configuration, so every machine produces the same shas (make-demo-repo.ts says
 * which commits).
 */
import { execFile } from 'node:child_process';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { processEnv } from '../../core/foundation/config.ts';

export interface Person {
  name: string;
  email: string;
}

/** Committer of squash and merge commits made through GitHub's web UI. */
export const GITHUB: Person = { name: 'GitHub', email: 'noreply@github.com' };

/** First commit's date; each later commit is one day after the previous one. */
const START_EPOCH = Date.parse('2024-01-02T10:00:00Z') / 1000;
const DAY_SECONDS = 24 * 60 * 60;

/** Settings that keep any config git might still find from changing the objects it writes. */
const GIT_CONFIG_FLAGS = [
  'commit.gpgsign=false',
  'tag.gpgsign=false',
  'core.autocrlf=false',
  'core.safecrlf=false',
  'core.fileMode=true',
  'gc.auto=0',
  'maintenance.auto=false',
  'merge.log=false',
  'init.defaultBranch=main',
].flatMap((kv) => ['-c', kv]);

/** Paths to contents; `null` deletes the path. */
export type FileChanges = Record<string, string | null>;

export interface CommitSpec {
  message: string;
  author: Person;
  /** Defaults to the author. */
  committer?: Person;
  files: FileChanges;
}

export class DemoRepo {
  private commits = 0;

  constructor(
    readonly dir: string,
    private readonly env: NodeJS.ProcessEnv,
  ) {}

  /** Run git in the repository; resolves to trimmed stdout. */
  git(args: readonly string[], extraEnv: NodeJS.ProcessEnv = {}): Promise<string> {
    return new Promise((res, rej) => {
      execFile(
        'git',
        [...GIT_CONFIG_FLAGS, ...args],
        { cwd: this.dir, env: { ...this.env, ...extraEnv }, maxBuffer: 16 * 1024 * 1024 },
        (err, stdout, stderr) => {
          if (err) {
            const why = (err as NodeJS.ErrnoException).code === 'ENOENT' ? 'git is not on PATH' : stderr.trim() || err.message;
            rej(new Error(`git ${args.join(' ')} failed: ${why}`, { cause: err }));
          } else {
            res(stdout.trim());
          }
        },
      );
    });
  }

  /** Identity and date variables for the next commit (one day after the previous one). */
  private identityEnv(author: Person, committer: Person): NodeJS.ProcessEnv {
    const date = `${START_EPOCH + this.commits * DAY_SECONDS} +0000`;
    this.commits += 1;
    return {
      GIT_AUTHOR_NAME: author.name,
      GIT_AUTHOR_EMAIL: author.email,
      GIT_AUTHOR_DATE: date,
      GIT_COMMITTER_NAME: committer.name,
      GIT_COMMITTER_EMAIL: committer.email,
      GIT_COMMITTER_DATE: date,
    };
  }

  /** Write these files, delete those, commit everything on the current branch; returns the new sha. */
  async commit(spec: CommitSpec): Promise<string> {
    for (const [path, content] of Object.entries(spec.files)) {
      const abs = join(this.dir, path);
      if (content === null) {
        await rm(abs);
      } else {
        await mkdir(dirname(abs), { recursive: true });
        await writeFile(abs, content);
      }
    }
    await this.git(['add', '--all', '--', '.']);
    const env = this.identityEnv(spec.author, spec.committer ?? spec.author);
    await this.git(['commit', '--quiet', '--no-verify', '--cleanup=whitespace', '-m', spec.message], env);
    return this.git(['rev-parse', 'HEAD']);
  }

  /**
   * A pull request merged with a merge commit: `branch` forks from main's tip, gets `commits`,
   * and is merged with --no-ff by `merger` through GitHub, then deleted. Returns the merge sha.
   */
  async mergePr(pr: { number: number; branch: string; title: string; merger: Person; commits: CommitSpec[] }): Promise<string> {
    await this.git(['checkout', '--quiet', '-b', pr.branch, 'main']);
    for (const spec of pr.commits) await this.commit(spec);
    await this.git(['checkout', '--quiet', 'main']);
    const message = `Merge pull request #${pr.number} from ${pr.branch}\n\n${pr.title}`;
    const env = this.identityEnv(pr.merger, GITHUB);
    await this.git(['merge', '--quiet', '--no-ff', '--no-edit', '--no-verify', '--cleanup=whitespace', '-m', message, pr.branch], env);
    await this.git(['branch', '--quiet', '-d', pr.branch]);
    return this.git(['rev-parse', 'HEAD']);
  }

  /** A pull request squash-merged on GitHub: one commit on main, authored by the PR author. */
  squashPr(spec: { author: Person; subject: string; body: string; files: FileChanges }): Promise<string> {
    return this.commit({ message: `${spec.subject}\n\n${spec.body}`, author: spec.author, committer: GITHUB, files: spec.files });
  }
}

/** The inherited environment without GIT_* variables, plus an isolated, empty config home. */
export function isolatedEnv(home: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(processEnv())) if (!k.startsWith('GIT_')) env[k] = v;
  return {
    ...env,
    HOME: home,
    XDG_CONFIG_HOME: join(home, '.config'),
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_TERMINAL_PROMPT: '0',
    LC_ALL: 'C',
    TZ: 'UTC',
  };
}
