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

/** Time spent per git subcommand, printed at exit when FORESIGHT_PROFILE_GIT is set (for benchmarks). */
const profile = process.env.FORESIGHT_PROFILE_GIT ? new Map<string, { calls: number; ms: number }>() : null;
if (profile) {
  process.on('exit', () => {
    for (const [cmd, p] of [...profile].sort((a, b) => b[1].ms - a[1].ms)) process.stderr.write(`git ${cmd}: ${p.calls} calls, ${(p.ms / 1000).toFixed(1)} s\n`);
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

export async function revParse(repo: string, rev: string): Promise<string> {
  return (await git(repo, ['rev-parse', '--verify', `${rev}^{commit}`])).trim();
}
