/**
 * Data-driven tests: a PR whose tests are data files (fixtures, golden files, snapshots) that a parametrised
 * module reads — sqlfluff's `test/fixtures/dialects/<dialect>/*.sql` read by `test/dialects/dialects_test.py`
 * — touches no test module, and its new cases are the module's new parametrised ids. The modules that consume
 * a changed data file are found from the repository's own structure at the PR's head:
 *  - named after the module: a folder `tests/test_x/` beside `tests/test_x.py` (pytest-datadir) or a snapshot
 *    `__snapshots__/test_x.*`;
 *  - the module (or a helper it imports: `from ..conftest import get_parse_fixtures`) names the file
 *    (`"hex.txt"`), or the file's folder as a path from the folder the two share (`"data" / "cases"`,
 *    `os.path.join("test", "fixtures", "dialects")`, `"test/fixtures/dialects/"`);
 *  - weaker: one folder name written as a path (`Path(__file__).parent / "data"`), or the file's name without
 *    its extension quoted (Django's `fixtures = ["people"]`) — taken only when nothing stronger names the file.
 * The search starts in the nearest folder above the file that holds test modules (a Django test app) and
 * widens to the enclosing ones up to the test directory only while no module there names the file. A
 * reference to a sibling (`"fixtures/rules"` for a file under fixtures/dialects/) names another folder and
 * counts for nothing. A data file no module references selects nothing: never the whole suite.
 */
import { spawn } from 'node:child_process';
import { ForesightError } from '../foundation/errors.ts';
import { isTestModule } from '../foundation/files.ts';
import { gitBytes, notAnOption, pathShown, pathText } from '../foundation/git.ts';

export interface DataConsumer {
  /** The test module run for the data. */
  module: string;
  /** The changed data files it reads. */
  files: string[];
  /** How it was found: what it names, and through which helper. */
  reason: string;
}

export interface DataConsumers {
  /** Modules added to the PR's test files (the PR did not touch them), with the files and the evidence. */
  consumers: DataConsumer[];
  /** Changed data files no test module references: they select nothing. */
  unreferenced: string[];
  /** More modules consumed the data than are run: how many were found, how many kept. */
  capped: { found: number; kept: number } | null;
}

/**
 * At most this many modules are added for one PR's data. Each runs in every state and repetition; data that
 * more modules name equally is shared infrastructure, not one suite's cases, and running them all would cost
 * a suite's time for the few ids that flip. The strongest references are kept first.
 */
export const MAX_DATA_CONSUMERS = 8;

/** What runs of each consumer: the cases naming its data files (the runner's KeepRule), not the whole module. */
export function keepRules(dc: Pick<DataConsumers, 'consumers'>): Array<{ module: string; data: string[] }> {
  // A module found through several references (it names "after.sql" and "before.sql") reads all their files.
  const byModule = new Map<string, Set<string>>();
  for (const c of dc.consumers) for (const f of c.files) (byModule.get(c.module) ?? byModule.set(c.module, new Set()).get(c.module)!).add(f);
  return [...byModule].map(([module, data]) => ({ module, data: [...data].sort() }));
}

const NO_CONSUMERS: DataConsumers = { consumers: [], unreferenced: [], capped: null };

/** How strongly a text references a data file: 2 names the file or its folder path; 1 a lone folder name or the bare stem. */
interface Ref {
  strength: 1 | 2;
  what: string;
}

/**
 * The test modules at `head` that consume `dataFiles` (changed, present at head, not modules, not collected
 * by a conftest hook), other than `touchedModules` (already run). Python modules only: the runner's ids are theirs.
 */
export async function dataConsumers(clone: string, head: string, dataFiles: readonly string[], touchedModules: readonly string[]): Promise<DataConsumers> {
  notAnOption(head);
  const files = dataFiles.filter((f) => !/\.py[ci]?$/.test(f) && testRoot(pathShown(f)) !== null);
  if (!files.length) return NO_CONSUMERS;
  const byRoot = new Map<string, string[]>();
  for (const f of files) {
    const root = testRoot(pathShown(f))!;
    byRoot.set(root, [...(byRoot.get(root) ?? []), f]);
  }

  // module -> file -> its reference (the strongest found)
  const found = new Map<string, Map<string, Ref>>();
  const unreferenced: string[] = [];
  for (const [root, inRoot] of byRoot) {
    const tree = await pythonFiles(clone, head, root);
    const modules = tree.filter((p) => isTestModule(p));
    const shown = inRoot.map((f) => pathShown(f));
    const texts = await readTexts(clone, head, await grepFiles(clone, head, root, searchTerms(shown, root)));
    const helpers = [...texts].filter(([p, text]) => !isTestModule(p) && shown.some((f) => reference(text, p, f) !== null)).map(([p]) => p);
    const imports = await importsOf(clone, head, root, modules, helpers);
    for (const [i, file] of inRoot.entries()) {
      const refs = consumersOf(shown[i]!, root, modules, texts, imports);
      if (!refs.size) unreferenced.push(file);
      for (const [module, ref] of refs) {
        const m = found.get(module) ?? new Map<string, Ref>();
        m.set(file, ref);
        found.set(module, m);
      }
    }
  }

  const touched = new Set(touchedModules);
  const ranked = [...found]
    .filter(([module]) => !touched.has(module))
    .map(([module, refs]) => ({ module, refs, strength: Math.max(...[...refs.values()].map((r) => r.strength)) }))
    .sort((a, b) => b.strength - a.strength || b.refs.size - a.refs.size || (a.module < b.module ? -1 : 1));
  const kept = ranked.slice(0, MAX_DATA_CONSUMERS);
  const consumers: DataConsumer[] = [];
  for (const { module, refs } of kept) {
    // One entry per distinct reason: the files a module reads the same way share it.
    const byReason = new Map<string, string[]>();
    for (const [file, ref] of refs) byReason.set(ref.what, [...(byReason.get(ref.what) ?? []), file]);
    for (const [reason, fs] of byReason) consumers.push({ module, files: fs, reason });
  }
  return { consumers, unreferenced, capped: ranked.length > kept.length ? { found: ranked.length, kept: kept.length } : null };
}

/** The test directory a file lies in (a tests/ or __tests__/ folder, or test/ or spec/ at the top), or null. */
export function testRoot(path: string): string | null {
  const parts = path.split('/');
  for (let i = 0; i < parts.length - 1; i++) {
    if (parts[i] === 'tests' || parts[i] === '__tests__' || (i === 0 && (parts[i] === 'test' || parts[i] === 'spec'))) return parts.slice(0, i + 1).join('/');
  }
  return null;
}

const dirOf = (p: string): string => p.slice(0, Math.max(0, p.lastIndexOf('/')));
const baseOf = (p: string): string => p.slice(p.lastIndexOf('/') + 1);
/** A file's name up to its first dot (`select_a.sql` -> `select_a`, `test_x.py` -> `test_x`). */
const stemOf = (name: string): string => name.replace(/^(\.?[^.]*).*$/, '$1');
const under = (path: string, dir: string): boolean => dir === '' || path.startsWith(`${dir}/`);

/** What to grep for: each folder name below the test directory, each file name, each stem long enough to mean something. */
function searchTerms(files: readonly string[], root: string): string[] {
  const terms = new Set<string>();
  for (const f of files) {
    for (const part of dirOf(f).slice(root.length + 1).split('/')) if (part) terms.add(part);
    terms.add(baseOf(f));
    if (stemOf(baseOf(f)).length >= 3) terms.add(stemOf(baseOf(f)));
  }
  return [...terms];
}

/**
 * The modules that consume `file` (a shown path): in the nearest folder above it holding test modules, else
 * the next one up, to the test directory. Strong references (2) are taken when any module has one; else weak.
 */
function consumersOf(file: string, root: string, modules: readonly string[], texts: ReadonlyMap<string, string>, imports: ReadonlyMap<string, string[]>): Map<string, Ref> {
  for (const scope of scopes(file, root, modules)) {
    const refs = new Map<string, Ref>();
    for (const module of modules.filter((m) => under(m, scope))) {
      let best = namedAfter(module, file);
      const consider = (r: Ref | null): void => {
        if (r && (!best || r.strength > best.strength)) best = r;
      };
      const own = texts.get(module);
      if (own !== undefined) consider(reference(own, module, file));
      for (const helper of imports.get(module) ?? []) {
        const r = reference(texts.get(helper)!, helper, file);
        if (r) consider({ strength: r.strength, what: `imports ${helper}, which ${r.what}` });
      }
      if (best) refs.set(module, best);
    }
    if (!refs.size) continue;
    const strong = [...refs].filter(([, r]) => r.strength === 2);
    return new Map(strong.length ? strong : refs);
  }
  return new Map();
}

/** Folders from the file's own up to the test directory that hold a test module below them, nearest first. */
function scopes(file: string, root: string, modules: readonly string[]): string[] {
  const out: string[] = [];
  for (let dir = dirOf(file); dir.length >= root.length; dir = dirOf(dir)) {
    if (modules.some((m) => under(m, dir))) out.push(dir);
    if (dir === root) break;
  }
  return out;
}

/** `tests/test_x/data.txt` (pytest-datadir) or `tests/__snapshots__/test_x.ambr` belongs to `tests/test_x.py`. */
function namedAfter(module: string, file: string): Ref | null {
  const dir = dirOf(module);
  const stem = stemOf(baseOf(module));
  const rest = dir === '' ? file : file.startsWith(`${dir}/`) ? file.slice(dir.length + 1) : null;
  if (rest === null) return null;
  const parts = rest.split('/');
  if (parts.length > 1 && parts[0] === stem) return { strength: 2, what: `is named after it (${[dir, stem].filter(Boolean).join('/')}/)` };
  if (parts.length > 1 && /^_{0,2}snapshots?_{0,2}$/.test(parts[0]!) && stemOf(parts[1]!) === stem) return { strength: 2, what: `is named after it (snapshot ${[dir, parts[0]].filter(Boolean).join('/')}/${parts[1]})` };
  return null;
}

const esc = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
/** Between two names of one path: a slash, or the quotes, comma or `/` between two string literals (join, pathlib). */
const SEP = String.raw`(?:[/\\]|["']\s*[,/]\s*[rRbBuUfF]{0,2}["'])`;
/** Not inside a longer name (a dot-word continues a name too: `data.py` is not `data`). */
const LEFT = String.raw`(?<![\w.-])`;
const RIGHT = String.raw`(?![\w-])(?!\.\w)`;
/** A path literal's opening: a call that takes paths, a join argument, or pathlib's `/`. */
const PATHISH = /(?:\b\w*(?:path|join|open|dir|file|glob)\w*\s*\(|[,/])\s*[rRbBuUfF]{0,2}$/i;

/**
 * How `text` (of the Python file at `at`) references the data file `file`: its name, or its folder as a path
 * from the folder `at` and `file` share. Null when it does not, or names only siblings.
 */
export function reference(text: string, at: string, file: string): Ref | null {
  const name = baseOf(file);
  const dir = dirOf(file);
  const parent = baseOf(dir);
  // The file by name, unless written under another folder ("other/hex.txt").
  for (const m of text.matchAll(new RegExp(`${LEFT}${esc(name)}${RIGHT}`, 'g'))) {
    const before = new RegExp(`([\\w.-]+)${SEP}$`).exec(text.slice(Math.max(0, m.index - 200), m.index));
    if (!before || before[1] === parent) return { strength: 2, what: `names the file "${name}"` };
  }
  // Its folder, as a path from where the two meet: the longest run of folder names, not followed by another name.
  let common = dirOf(at);
  while (common && !under(file, common)) common = dirOf(common);
  const parts = dir.slice(common ? common.length + 1 : 0).split('/').filter(Boolean);
  let best: Ref | null = null;
  if (parts.length) {
    for (const m of text.matchAll(new RegExp(`${LEFT}${esc(parts[0]!)}${RIGHT}`, 'g'))) {
      let end = m.index + m[0].length;
      let n = 1;
      for (; n < parts.length; n++) {
        const next = new RegExp(`^${SEP}${esc(parts[n]!)}${RIGHT}`).exec(text.slice(end));
        if (!next) break;
        end += next[0].length;
      }
      const after = new RegExp(`^${SEP}([\\w.-]+)`).exec(text.slice(end));
      // Followed by another name: a sibling folder, or another file of the folder.
      if (after && after[1] !== (n < parts.length ? parts[n] : name)) continue;
      const path = parts.slice(0, n).join('/');
      if (n >= 2) return { strength: 2, what: `names its folder "${path}"` };
      // One name alone is weak evidence, and only written as a path: "data/..." or a path call's, join's or `/`'s literal.
      const quoted = /["']$/.test(text.slice(0, m.index)) && /^["']/.test(text.slice(end));
      const pathish = /^[/\\]/.test(text.slice(end)) || (quoted && PATHISH.test(text.slice(Math.max(0, m.index - 80), m.index - 1)));
      if (pathish) best = { strength: 1, what: `names its folder "${path}"` };
    }
  }
  if (best) return best;
  // The bare stem, quoted: Django's fixtures = ["people"] loads fixtures/people.json.
  const stem = stemOf(name);
  if (stem.length >= 3 && new RegExp(`["']${esc(stem)}["']`).test(text)) return { strength: 1, what: `names "${stem}" (the file without its extension)` };
  return null;
}

/** Python files (modules and helpers) under `root` at `commit`, as stored names. */
async function pythonFiles(clone: string, commit: string, root: string): Promise<string[]> {
  const out = await gitBytes(clone, ['ls-tree', '-r', '-z', '--name-only', '--full-tree', '--end-of-options', commit, '--', `:(literal)${root}`]);
  return splitZ(out).map((b) => pathText(b)).filter((p) => p.endsWith('.py'));
}

/** The Python files under `root` holding any of `terms` (fixed strings). git grep exits 1 when none does. */
async function grepFiles(clone: string, commit: string, root: string, terms: readonly string[]): Promise<string[]> {
  if (!terms.length) return [];
  const prefix = `${commit}:`;
  const out = await gitOk(clone, ['grep', '-z', '-l', '-I', '-F', ...terms.flatMap((t) => ['-e', t]), commit, '--', `:(glob)${root}/**/*.py`]);
  return splitZ(out).map((b) => pathText(b)).map((p) => (p.startsWith(prefix) ? p.slice(prefix.length) : p));
}

/**
 * For each module, the helpers among `helpers` it imports (`from ..conftest import x`, `from .fixtures import
 * load`, `import tests.util`): one level, by Python's rules for relative names and from each enclosing folder
 * for absolute ones (pytest puts the rootdir on sys.path).
 */
async function importsOf(clone: string, commit: string, root: string, modules: readonly string[], helpers: readonly string[]): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>();
  if (!helpers.length) return out;
  const names = new Set(helpers.map((h) => (baseOf(h) === '__init__.py' ? baseOf(dirOf(h)) : stemOf(baseOf(h)))).filter(Boolean));
  const candidates = new Set(await grepFiles(clone, commit, root, [...names]));
  const texts = await readTexts(clone, commit, modules.filter((m) => candidates.has(m)));
  const known = new Set(helpers);
  for (const [module, text] of texts) {
    const hits = importedPaths(module, text).filter((p) => known.has(p));
    if (hits.length) out.set(module, [...new Set(hits)]);
  }
  return out;
}

const IMPORT = /^[ \t]*(?:from[ \t]+(\.*)([\w.]*)[ \t]+import[ \t]+(\([^)]*\)|[^\n#]*)|import[ \t]+([^\n#]+))/gm;

/** The files an import statement of `module` may load: `<name>.py` or `<name>/__init__.py` per resolution. */
export function importedPaths(module: string, text: string): string[] {
  const out: string[] = [];
  const add = (dots: number, dotted: string): void => {
    const rel = dotted.split('.').filter(Boolean).join('/');
    const bases: string[] = [];
    if (dots > 0) {
      let dir = dirOf(module);
      for (let i = 1; i < dots; i++) dir = dirOf(dir);
      bases.push(dir);
    } else {
      for (let dir = dirOf(module); ; dir = dirOf(dir)) {
        bases.push(dir);
        if (!dir) break;
      }
    }
    for (const b of bases) {
      const p = [b, rel].filter(Boolean).join('/');
      if (rel) out.push(`${p}.py`);
      out.push(`${p}/__init__.py`);
    }
  };
  for (const m of text.matchAll(IMPORT)) {
    if (m[4] !== undefined) {
      for (const item of m[4].split(',')) add(0, item.trim().split(/\s+/)[0] ?? '');
      continue;
    }
    const dots = m[1]!.length;
    const from = m[2]!;
    add(dots, from);
    for (const item of m[3]!.replace(/[()\\]/g, ' ').split(',')) {
      const name = item.trim().split(/\s+/)[0];
      if (name && /^\w+$/.test(name)) add(dots, from ? `${from}.${name}` : name);
    }
  }
  return out;
}

/** The text of each path at `commit` (one `git cat-file --batch`); binary or missing files are left out. */
async function readTexts(clone: string, commit: string, paths: readonly string[]): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  // A name that is not UTF-8 cannot be written as a batch line; such files are read by no one here.
  const plain = paths.filter((p) => !p.startsWith('"') && !p.includes('\n'));
  if (!plain.length) return out;
  const buf = await gitOk(clone, ['cat-file', '--batch'], plain.map((p) => `${commit}:${p}\n`).join(''));
  let at = 0;
  for (const path of plain) {
    const nl = buf.indexOf(0x0a, at);
    if (nl < 0) break;
    const header = buf.subarray(at, nl).toString('latin1');
    at = nl + 1;
    const size = /^[0-9a-f]+ blob (\d+)$/.exec(header)?.[1];
    if (size === undefined) continue; // "<object> missing"
    const body = buf.subarray(at, at + Number(size));
    at += Number(size) + 1;
    if (!body.includes(0)) out.set(path, body.toString('utf8'));
  }
  return out;
}

function splitZ(buf: Buffer): Buffer[] {
  const out: Buffer[] = [];
  for (let from = 0; from < buf.length; ) {
    const end = buf.indexOf(0, from);
    const stop = end < 0 ? buf.length : end;
    if (stop > from) out.push(buf.subarray(from, stop));
    from = stop + 1;
  }
  return out;
}

/** Run git with `input` on stdin; exit 0, or 1 for `git grep` matching nothing, is success. */
function gitOk(repo: string, args: string[], input: string | null = null): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const child = spawn('git', args, { cwd: repo, stdio: [input === null ? 'ignore' : 'pipe', 'pipe', 'pipe'] });
    const chunks: Buffer[] = [];
    let stderr = '';
    child.stdout!.on('data', (b: Buffer) => chunks.push(b));
    child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code === 0 || (code === 1 && args[0] === 'grep' && !stderr.trim())) resolve(Buffer.concat(chunks));
      else reject(new ForesightError(`git ${args[0]} exited ${code} in ${repo}: ${stderr.trim().split('\n')[0] ?? ''}`, { remedy: 'check that the path is a git clone with full history and that the revision exists' }));
    });
    if (input !== null) {
      // A git that exits early (a bad revision) closes its stdin: its exit code reports that, not EPIPE.
      child.stdin!.on('error', () => undefined);
      child.stdin!.end(input);
    }
  });
}
