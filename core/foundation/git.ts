import { spawn, type ChildProcess } from 'node:child_process';
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
  if (separator !== '\n') {
    // An ASCII separator never falls inside a UTF-8 sequence: each record decodes on its own.
    for await (const rec of gitRecordsRaw(repo, args, separator)) yield rec.toString('utf8');
    return;
  }
  const started = Date.now();
  const child = spawn('git', args, { cwd: repo, stdio: ['ignore', 'pipe', 'pipe'] });
  const stderr = collectStderr(child);
  const exit = exitOf(child);
  for await (const line of createInterface({ input: child.stdout, crlfDelay: Infinity })) yield line;
  await checkExit(repo, args, await exit, stderr(), started);
}

/** gitRecords as bytes: records split on the byte `separator` (file names from `-z` output stay exactly as git wrote them). */
export async function* gitRecordsRaw(repo: string, args: string[], separator: string): AsyncGenerator<Buffer> {
  const started = Date.now();
  const sep = Buffer.from(separator, 'latin1');
  const child = spawn('git', args, { cwd: repo, stdio: ['ignore', 'pipe', 'pipe'] });
  const stderr = collectStderr(child);
  const exit = exitOf(child);
  let buf: Buffer = Buffer.alloc(0);
  for await (const chunk of child.stdout as AsyncIterable<Buffer>) {
    buf = buf.length ? Buffer.concat([buf, chunk]) : chunk;
    let from = 0;
    let idx: number;
    while ((idx = buf.indexOf(sep, from)) >= 0) {
      yield buf.subarray(from, idx);
      from = idx + sep.length;
    }
    buf = buf.subarray(from);
  }
  if (buf.toString('latin1').trim()) yield buf;
  await checkExit(repo, args, await exit, stderr(), started);
}

/**
 * Run git and return its stdout as bytes: file names and contents exactly as git wrote them (git() decodes
 * as UTF-8, which turns a name that is not UTF-8 into one that names nothing). `config` entries go before
 * the command as `-c key=value`; `input` is written to its stdin (for `--stdin` and `--batch` commands).
 */
export async function gitBytes(repo: string, args: string[], opts: { config?: readonly string[]; input?: string } = {}): Promise<Buffer> {
  const started = Date.now();
  const child = spawn('git', [...(opts.config ?? []).flatMap((kv) => ['-c', kv]), ...args], { cwd: repo, stdio: [opts.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'] });
  // git may exit before reading all of its input (a bad revision): the broken pipe is its exit code's business.
  child.stdin?.on('error', () => {});
  child.stdin?.end(opts.input);
  const stderr = collectStderr(child);
  const exit = exitOf(child);
  const chunks: Buffer[] = [];
  child.stdout!.on('data', (b: Buffer) => chunks.push(b));
  await checkExit(repo, args, await exit, stderr(), started);
  return Buffer.concat(chunks);
}

function collectStderr(child: ChildProcess): () => string {
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  return () => stderr;
}

function exitOf(child: ChildProcess): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => resolve(code ?? 1));
  });
}

async function checkExit(repo: string, args: string[], code: number, stderr: string, started: number): Promise<void> {
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

/**
 * File names are bytes to git and text to the pipeline (artifacts, dataset rows, grading bundles). A name
 * that is valid UTF-8 is stored as itself; any other (a Latin-1 "caf\xe9.py") as git's C-quoted form,
 * "src/caf\351.py", the form `git diff` writes with core.quotePath on and `git apply` reads: plain
 * text, reversible (pathBytes). A UTF-8 name that starts with `"` is quoted too, so the two never meet.
 */
export function pathText(bytes: Uint8Array): string {
  const text = utf8OrNull(bytes);
  return text !== null && !text.startsWith('"') ? text : cQuote(bytes);
}

/** A stored file name that is git's C-quoted form (pathText of a name that is not UTF-8). */
export function isQuotedPath(path: string): boolean {
  return path.startsWith('"');
}

/** The bytes of a stored file name (pathText's inverse); throws on a malformed quoted form. */
export function pathBytes(path: string): Buffer {
  if (!isQuotedPath(path)) return Buffer.from(path, 'utf8');
  const bytes = cUnquote(path);
  if (bytes === null) {
    throw new ForesightError(`malformed quoted file name ${path}`, { remedy: 'write a name that is not UTF-8 as git quotes it: "dir/caf\\351.py"' });
  }
  return bytes;
}

/** A stored file name for matching by pattern (extensions, folders): the UTF-8 reading of its bytes, U+FFFD for a byte that is not UTF-8. */
export function pathShown(path: string): string {
  return isQuotedPath(path) ? (cUnquote(path)?.toString('utf8') ?? path) : path;
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

function utf8OrNull(bytes: Uint8Array): string | null {
  try {
    return strictUtf8.decode(bytes);
  } catch {
    return null;
  }
}

/** git's quote_c_style with core.quotePath on: \a \b \t \n \v \f \r \" \\, octal for other control bytes, DEL and bytes >= 0x80. */
const C_ESCAPES: Record<number, string> = { 0x07: 'a', 0x08: 'b', 0x09: 't', 0x0a: 'n', 0x0b: 'v', 0x0c: 'f', 0x0d: 'r', 0x22: '"', 0x5c: '\\' };
const C_UNESCAPES: Record<string, number> = Object.fromEntries(Object.entries(C_ESCAPES).map(([b, c]) => [c, Number(b)]));

function cQuote(bytes: Uint8Array): string {
  let out = '"';
  for (const b of bytes) {
    const esc = C_ESCAPES[b];
    if (esc !== undefined) out += `\\${esc}`;
    else if (b < 0x20 || b >= 0x7f) out += `\\${b.toString(8).padStart(3, '0')}`;
    else out += String.fromCharCode(b);
  }
  return `${out}"`;
}

/** The bytes of a C-quoted name, or null when it is not one. */
function cUnquote(quoted: string): Buffer | null {
  if (quoted.length < 2 || !quoted.startsWith('"') || !quoted.endsWith('"')) return null;
  const inner = quoted.slice(1, -1);
  const out: Buffer[] = [];
  for (let i = 0; i < inner.length; ) {
    const c = String.fromCodePoint(inner.codePointAt(i)!);
    if (c === '"') return null;
    if (c !== '\\') {
      out.push(Buffer.from(c, 'utf8'));
      i += c.length;
      continue;
    }
    const octal = /^[0-3][0-7]{2}/.exec(inner.slice(i + 1, i + 4))?.[0];
    const esc = C_UNESCAPES[inner[i + 1] ?? ''];
    if (octal) out.push(Buffer.from([parseInt(octal, 8)]));
    else if (esc !== undefined) out.push(Buffer.from([esc]));
    else return null;
    i += octal ? 4 : 2;
  }
  return Buffer.concat(out);
}

/** The bytes of `path` at `commit` (binary-safe), or null when the commit has no such file. */
export async function readBlob(repo: string, commit: string, path: string): Promise<Buffer | null> {
  notAnOption(commit);
  if (isQuotedPath(path)) {
    // No argument can carry a name that is not UTF-8 (Node writes arguments as UTF-8): found in the tree by its bytes.
    const entry = (await treeEntries(repo, commit)).get(pathBytes(path).toString('latin1'));
    return entry?.type === 'blob' ? catBlob(repo, entry.oid) : null;
  }
  return catBlob(repo, `${commit}:${path}`);
}

async function catBlob(repo: string, object: string): Promise<Buffer | null> {
  const child = spawn('git', ['cat-file', 'blob', object], { cwd: repo, stdio: ['ignore', 'pipe', 'pipe'] });
  const chunks: Buffer[] = [];
  child.stdout.on('data', (b: Buffer) => chunks.push(b));
  const code = await exitOf(child);
  return code === 0 ? Buffer.concat(chunks) : null;
}

/** Every entry of `commit`'s tree, keyed by its name's bytes read as Latin-1 (one character per byte). */
async function treeEntries(repo: string, commit: string): Promise<Map<string, { type: string; oid: string }>> {
  const out = new Map<string, { type: string; oid: string }>();
  // "<mode> <type> <oid>\t<name>\0" per entry.
  for await (const rec of gitRecordsRaw(repo, ['ls-tree', '-r', '-z', '--full-tree', '--end-of-options', commit], '\0')) {
    const tab = rec.indexOf(0x09);
    if (tab < 0) continue;
    const [, type = '', oid = ''] = rec.subarray(0, tab).toString('latin1').split(' ');
    out.set(rec.subarray(tab + 1).toString('latin1'), { type, oid });
  }
  return out;
}

/** Which of `paths` (files, from the repository root) exist at `commit`, in the order given. */
export async function filesAt(repo: string, commit: string, paths: readonly string[]): Promise<string[]> {
  notAnOption(commit);
  if (!paths.length) return [];
  const plain = paths.filter((p) => !isQuotedPath(p));
  const present = new Set<string>();
  if (plain.length) {
    const out = await git(repo, ['ls-tree', '-z', '--name-only', '--full-tree', commit, '--', ...plain.map((p) => `:(literal)${p}`)]);
    for (const p of out.split('\0')) if (p) present.add(p);
  }
  if (plain.length < paths.length) {
    const tree = await treeEntries(repo, commit);
    for (const p of paths) if (isQuotedPath(p) && tree.get(pathBytes(p).toString('latin1'))?.type === 'blob') present.add(p);
  }
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
