/**
 * A tiny builder for real git repositories in temp dirs, driven by the real `git` binary through
 * execFile (no shell). Every commit has a fixed identity and date and no user or system config is
 * read, so the same script gives the same shas on every machine.
 *
 *   const repo = await gitRepo();
 *   const a = await repo.commit({ files: { 'pkg/a.py': 'x = 1\n' }, message: 'A', date: '2024-01-01T00:00:00Z' });
 */
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll } from 'vitest';

export interface CommitSpec {
  /** Paths to write (created or overwritten), relative to the repository root. */
  files?: Record<string, string>;
  /** Paths to delete. */
  delete?: readonly string[];
  message: string;
  /** Author and committer date: ISO 8601 or git's `<unix seconds> +0000`. */
  date: string;
  /** A committer date of its own (a patch committed later than it was written); default `date`. */
  committerDate?: string;
  /** `Name <email>`; defaults to `Dev <dev@example.com>`. Also the committer. */
  author?: string;
  /** Allow a commit that changes nothing. */
  allowEmpty?: boolean;
}

export interface GitRepo {
  readonly dir: string;
  /** Write/delete the files, stage everything, commit on the current branch; resolves to the new sha. */
  commit(spec: CommitSpec): Promise<string>;
  /** `git merge --no-ff` of `branch` into the current branch; resolves to the merge sha. */
  merge(spec: { branch: string; message: string; date: string; author?: string }): Promise<string>;
  /** Any other git command (same deterministic environment); resolves to stdout, untrimmed. */
  git(args: readonly string[], env?: NodeJS.ProcessEnv): Promise<string>;
  /** Delete the temp directory. */
  remove(): Promise<void>;
}

const CONFIG = [
  'commit.gpgsign=false',
  'tag.gpgsign=false',
  'core.autocrlf=false',
  'core.fileMode=true',
  'gc.auto=0',
  'maintenance.auto=false',
  'init.defaultBranch=main',
].flatMap((kv) => ['-c', kv]);

/** Only what git needs: no inherited GIT_* variable or config can change the objects written. */
function baseEnv(): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: tmpdir(),
    LANG: 'C',
    LC_ALL: 'C',
    TZ: 'UTC',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_TERMINAL_PROMPT: '0',
  };
}

function identity(author: string | undefined, date: string, committerDate: string = date): NodeJS.ProcessEnv {
  const m = /^(.*?)\s*<([^>]*)>$/.exec(author ?? 'Dev <dev@example.com>');
  if (!m) throw new Error(`author must look like "Name <email>", got ${JSON.stringify(author)}`);
  return {
    GIT_AUTHOR_NAME: m[1],
    GIT_AUTHOR_EMAIL: m[2],
    GIT_AUTHOR_DATE: date,
    GIT_COMMITTER_NAME: m[1],
    GIT_COMMITTER_EMAIL: m[2],
    GIT_COMMITTER_DATE: committerDate,
  };
}

function run(dir: string, args: readonly string[], env: NodeJS.ProcessEnv = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile('git', [...CONFIG, ...args], { cwd: dir, env: { ...baseEnv(), ...env }, maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`git ${args.join(' ')} failed: ${stderr.trim() || err.message}`, { cause: err }));
      else resolve(stdout);
    });
  });
}

export async function gitRepo(): Promise<GitRepo> {
  const dir = await mkdtemp(join(tmpdir(), 'foresight-git-'));
  await run(dir, ['init', '--quiet', '--initial-branch=main']);
  const head = async (): Promise<string> => (await run(dir, ['rev-parse', 'HEAD'])).trim();
  return {
    dir,
    async commit(spec) {
      for (const [path, content] of Object.entries(spec.files ?? {})) {
        const abs = join(dir, path);
        await mkdir(dirname(abs), { recursive: true });
        await writeFile(abs, content);
      }
      for (const path of spec.delete ?? []) await rm(join(dir, path));
      await run(dir, ['add', '--all', '--', '.']);
      const args = ['commit', '--quiet', '--no-verify', '--cleanup=verbatim', '-m', spec.message];
      if (spec.allowEmpty) args.push('--allow-empty');
      await run(dir, args, identity(spec.author, spec.date, spec.committerDate));
      return head();
    },
    async merge(spec) {
      await run(dir, ['merge', '--quiet', '--no-ff', '--no-edit', '--no-verify', '-m', spec.message, spec.branch], identity(spec.author, spec.date));
      return head();
    },
    git: (args, env) => run(dir, args, env),
    remove: () => rm(dir, { recursive: true, force: true }),
  };
}

/** Call at a test file's top level: each call of the result is a new repository, all removed after the file's tests. */
export function freshRepos(): () => Promise<GitRepo> {
  const repos: GitRepo[] = [];
  afterAll(async () => {
    await Promise.all(repos.map((r) => r.remove()));
  });
  return async () => {
    const repo = await gitRepo();
    repos.push(repo);
    return repo;
  };
}
