import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { simpleGit, type SimpleGit } from 'simple-git';
import { ForesightError } from './errors.ts';

const clients = new Map<string, SimpleGit>();

function client(repo: string): SimpleGit {
  let c = clients.get(repo);
  if (!c) {
    c = simpleGit({ baseDir: repo, maxConcurrentProcesses: 4, trimmed: false });
    clients.set(repo, c);
  }
  return c;
}

/** Time spent per git subcommand, printed at exit once enabled (config debug.profileGit, for benchmarks). */
let profile: Map<string, { calls: number; ms: number }> | null = null;

export function enableGitProfile(): void {
  if (profile) return;
  const p = (profile = new Map());
  process.on('exit', () => {
    for (const [cmd, x] of [...p].sort((a, b) => b[1].ms - a[1].ms)) process.stderr.write(`git ${cmd}: ${x.calls} calls, ${(x.ms / 1000).toFixed(1)} s\n`);
  });
}

function track(cmd: string | undefined, started: number): void {
  if (!profile || !cmd) return;
  const p = profile.get(cmd) ?? { calls: 0, ms: 0 };
  p.calls++;
  p.ms += Date.now() - started;
  profile.set(cmd, p);
}

/** Run a git command in `repo` and return its stdout. */
export async function git(repo: string, args: string[]): Promise<string> {
  const started = Date.now();
  try {
    return await client(repo).raw(args);
  } catch (err) {
    throw new ForesightError(`git ${args.slice(0, 3).join(' ')} failed in ${repo}: ${(err as Error).message.split('\n')[0]}`, {
      remedy: 'check that the path is a git clone with full history (not shallow) and that the commit exists',
      cause: err,
    });
  } finally {
    track(args[0], started);
  }
}

/** Stream a git command's stdout as records split on `separator` (no whole-output buffering). */
export async function* gitRecords(repo: string, args: string[], separator = '\n'): AsyncGenerator<string> {
  const started = Date.now();
  const child = spawn('git', args, { cwd: repo, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const exit = new Promise<number>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => resolve(code ?? 1));
  });
  if (separator === '\n') {
    for await (const line of createInterface({ input: child.stdout, crlfDelay: Infinity })) yield line;
  } else {
    let buf = '';
    child.stdout.setEncoding('utf8');
    for await (const chunk of child.stdout as AsyncIterable<string>) {
      buf += chunk;
      let idx: number;
      while ((idx = buf.indexOf(separator)) >= 0) {
        yield buf.slice(0, idx);
        buf = buf.slice(idx + separator.length);
      }
    }
    if (buf.trim()) yield buf;
  }
  const code = await exit;
  track(args[0], started);
  if (code !== 0) {
    throw new ForesightError(`git ${args.slice(0, 3).join(' ')} exited ${code} in ${repo}: ${stderr.trim().split('\n')[0]}`, {
      remedy: 'check that the path is a git clone with full history and that the revision exists',
    });
  }
}

export async function assertGitRepo(repo: string): Promise<string> {
  try {
    return (await client(repo).raw(['rev-parse', '--git-dir'])).trim();
  } catch (err) {
    throw new ForesightError(`${repo} is not a git repository`, { remedy: 'pass CLONE=<path of a local clone> or let foresight clone it', cause: err });
  }
}

/**
 * A clone the pipeline can mine: a git repository with its whole history. A shallow clone
 * (`clone --depth N`) looks like a normal one, but its history stops after N commits: every
 * stage would run and quietly find a fraction of the changes.
 */
export async function assertFullClone(repo: string): Promise<void> {
  await assertGitRepo(repo);
  if ((await git(repo, ['rev-parse', '--is-shallow-repository'])).trim() !== 'true') return;
  const commits = (await git(repo, ['rev-list', '--count', '--all'])).trim();
  throw new ForesightError(`${repo} is a shallow clone (history cut at ${commits} commits): mining would miss most changes`, {
    remedy: `git -C ${repo} fetch --unshallow`,
  });
}

/**
 * For the commands that do not honour `--end-of-options` (git blame, as of git 2.39): refuse a
 * revision from data that git would read as an option (`--output=FILE` writes that file).
 */
export function notAnOption(rev: string): string {
  if (rev.startsWith('-')) {
    throw new ForesightError(`revision "${rev}" starts with "-": git would take it as an option`, {
      remedy: 'pass a commit sha or a ref name; check the artifact, oracle or setting it came from',
    });
  }
  return rev;
}

/**
 * The commit `rev` names, as a full sha. `--end-of-options` (git >= 2.24) makes git read what follows
 * as a revision even when it starts with "-": revisions here come from data (config, artifacts, messages).
 */
export async function revParse(repo: string, rev: string): Promise<string> {
  return (await git(repo, ['rev-parse', '--verify', '--end-of-options', `${rev}^{commit}`])).trim();
}

/**
 * The absolute git directory of a clone (a work tree, its .git folder, or a bare clone): what containers
 * mount read-only. The one resolver of it, so every mount sees the same objects.
 */
export async function absoluteGitDir(path: string): Promise<string> {
  try {
    return (await client(path).raw(['rev-parse', '--absolute-git-dir'])).trim();
  } catch (err) {
    throw new ForesightError(`${path} is not a git clone or git directory`, { remedy: "pass the path of a clone (or of its .git directory)", cause: err });
  }
}

/** The bytes of `path` at `commit` (binary-safe), or null when the commit has no such file. */
export async function readBlob(repo: string, commit: string, path: string): Promise<Buffer | null> {
  notAnOption(commit);
  const child = spawn('git', ['cat-file', 'blob', `${commit}:${path}`], { cwd: repo, stdio: ['ignore', 'pipe', 'pipe'] });
  const chunks: Buffer[] = [];
  child.stdout.on('data', (b: Buffer) => chunks.push(b));
  const code = await new Promise<number>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (c) => resolve(c ?? 1));
  });
  return code === 0 ? Buffer.concat(chunks) : null;
}

/** Which of `paths` (files, from the repository root) exist at `commit`, in the order given. */
export async function filesAt(repo: string, commit: string, paths: readonly string[]): Promise<string[]> {
  notAnOption(commit);
  if (!paths.length) return [];
  const out = await git(repo, ['ls-tree', '-z', '--name-only', '--full-tree', commit, '--', ...paths.map((p) => `:(literal)${p}`)]);
  const present = new Set(out.split('\0').filter(Boolean));
  return paths.filter((p) => present.has(p));
}

/**
 * Objects the clone lacks (`git rev-list --missing=print`, which never fetches them): of the whole history
 * up to `commit`, or of its own tree. A complete clone answers in a second or two even for Django.
 */
export async function missingObjects(clone: string, commit: string, scope: 'history' | 'tree'): Promise<string[]> {
  const args = ['rev-list', '--objects', '--missing=print', ...(scope === 'tree' ? ['--no-walk'] : []), '--end-of-options', commit];
  // A commit the clone does not have: nothing missing to report (the caller meets that commit itself).
  const out = await git(clone, args).catch(() => '');
  return out.split('\n').filter((l) => l.startsWith('?')).map((l) => l.slice(1));
}
