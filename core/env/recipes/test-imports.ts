/**
 * What a PR's tests import, read statically (no checkout, no interpreter): the `import` / `from … import`
 * lines of its test modules and of every conftest.py on their path (pytest loads those first), and the
 * conftests' `pytest_plugins`. Only the top-level module of each import counts. An install candidate may
 * leave out a requirement the offline wheels cannot provide only when no module here comes from it
 * (`importedFrom`): the distribution's import names are its normalised name plus the few well-known
 * mismatches (`pyyaml` → `yaml`), so a mapping this misses keeps the requirement needed only when the names agree.
 */
import path from 'node:path';
import { readBlob } from '../../foundation/git.ts';

export interface TestImports {
  /** Top-level module → where it is first imported (`tests/test_x.py:3`). */
  modules: Map<string, string>;
  /** The Python files read: the test modules and their conftest chain. */
  files: string[];
}

/** Per distribution (normalised name), import names other than its own normalised name. */
const IMPORT_NAMES: Readonly<Record<string, readonly string[]>> = {
  pyyaml: ['yaml'],
  pillow: ['PIL'],
  beautifulsoup4: ['bs4'],
  'scikit-learn': ['sklearn'],
  'scikit-image': ['skimage'],
  'python-dateutil': ['dateutil'],
  attrs: ['attr'],
  protobuf: ['google'],
  pyzmq: ['zmq'],
  'opencv-python': ['cv2'],
  'opencv-python-headless': ['cv2'],
  pyjwt: ['jwt'],
  dnspython: ['dns'],
  pycryptodome: ['Crypto'],
  pycryptodomex: ['Cryptodome'],
  pyserial: ['serial'],
  mysqlclient: ['MySQLdb'],
  pymysql: ['pymysql', 'MySQLdb'],
  'psycopg2-binary': ['psycopg2'],
  'psycopg-binary': ['psycopg'],
  setuptools: ['pkg_resources', '_distutils_hack'],
  'msgpack-python': ['msgpack'],
  pyopenssl: ['OpenSSL'],
  ipython: ['IPython'],
  gitpython: ['git'],
  pygobject: ['gi'],
  'faiss-cpu': ['faiss'],
  'pytest-xdist': ['xdist'],
  'typing-extensions': ['typing_extensions'],
  'python-magic': ['magic'],
  'python-multipart': ['multipart', 'python_multipart'],
  'python-dotenv': ['dotenv'],
  'google-api-python-client': ['googleapiclient'],
  tensorflow: ['tensorflow', 'tf'],
  pywin32: ['win32api', 'win32con', 'pywintypes'],
};

/** Namespace packages whose distributions are named `<namespace>-<part>`. */
const NAMESPACES = new Set(['google', 'azure', 'zope', 'jaraco', 'backports', 'sphinxcontrib', 'ruamel', 'oslo']);

/** PEP 503's normal form of a distribution name. */
export function normaliseDist(name: string): string {
  return name.toLowerCase().replace(/[-_.]+/g, '-');
}

/** The distribution a requirement string names (`diff-cover>=2.5.0 ; python_version < "3.11"` → `diff-cover`), or null. */
export function requirementName(req: string): string | null {
  return /^\s*([A-Za-z0-9][A-Za-z0-9._-]*)/.exec(req)?.[1] ?? null;
}

/** The module names a distribution is likely imported by, lower-cased. */
export function importNames(dist: string): string[] {
  const norm = normaliseDist(dist);
  const names = new Set<string>([norm.replace(/-/g, '_')]);
  for (const n of IMPORT_NAMES[norm] ?? []) names.add(n);
  if (norm.startsWith('python-')) names.add(norm.slice('python-'.length).replace(/-/g, '_'));
  if (norm.endsWith('-python')) names.add(norm.slice(0, -'-python'.length).replace(/-/g, '_'));
  // `zope.interface`, `ruamel.yaml`, `google-cloud-storage`: the namespace is what is imported.
  const first = dist.split(/[.]/)[0]!;
  if (first !== dist) names.add(first);
  const head = norm.split('-')[0]!;
  if (NAMESPACES.has(head)) names.add(head);
  return [...names].map((n) => n.toLowerCase());
}

/** Where the tests import a module of `dist` (`tests/test_x.py:3 imports yaml`), or null when they do not. */
export function importedFrom(dist: string, imports: TestImports): string | null {
  const wanted = new Set(importNames(dist));
  for (const [mod, where] of imports.modules) if (wanted.has(mod.toLowerCase())) return `${where} imports ${mod}`;
  return null;
}

const IMPORT_LINE = /^\s*import\s+(.+)$/;
const FROM_LINE = /^\s*from\s+([A-Za-z_][\w.]*)\s+import\b/;
const PLUGINS_LINE = /^\s*pytest_plugins\s*=\s*(.+)$/;

/** The top-level modules a Python source imports, with the line of the first import of each. */
export function parseImports(source: string): Map<string, number> {
  const found = new Map<string, number>();
  const add = (dotted: string, line: number): void => {
    const top = dotted.trim().split('.')[0]!;
    if (/^[A-Za-z_]\w*$/.test(top) && !found.has(top)) found.set(top, line);
  };
  // Lines inside a triple-quoted string (a docstring's example) are no imports.
  let quote: string | null = null;
  const lines = source.split(/\r?\n/);
  for (const [i, raw] of lines.entries()) {
    const inString = quote !== null;
    for (const m of raw.matchAll(/"""|'''/g)) {
      if (quote === null) quote = m[0];
      else if (quote === m[0]) quote = null;
    }
    if (inString) continue;
    const code = raw.replace(/#.*$/, '');
    const from = FROM_LINE.exec(code);
    if (from) {
      add(from[1]!, i + 1);
      continue;
    }
    const imp = IMPORT_LINE.exec(code);
    if (imp) {
      for (const part of imp[1]!.replace(/[()\\;].*$/, '').split(',')) add(part.trim().split(/\s+as\s+/)[0]!, i + 1);
      continue;
    }
    const plugins = PLUGINS_LINE.exec(code);
    if (plugins) {
      // `pytest_plugins = ["pkg.fixtures", ...]` (one line, or the strings on the lines up to the closing bracket).
      let text = plugins[1]!;
      if (/^[[(]/.test(text.trim())) for (let j = i + 1; j < lines.length && !/[\])]/.test(text); j++) text += lines[j]!;
      for (const m of text.matchAll(/["']([A-Za-z_][\w.]*)["']/g)) add(m[1]!, i + 1);
    }
  }
  return found;
}

/** Every conftest.py pytest loads for a test file: in its directory and each one above it, root first. */
export function conftestChain(file: string): string[] {
  const out: string[] = [];
  let dir = path.posix.dirname(file);
  for (;;) {
    out.unshift(dir === '.' ? 'conftest.py' : `${dir}/conftest.py`);
    if (dir === '.' || dir === '/' || dir === '') break;
    dir = path.posix.dirname(dir);
  }
  return out;
}

/** The modules the PR's test files at `commit` import, with their conftest chain's. Files that are not Python are read for their conftests only. */
export async function testImports(clone: string, commit: string, testFiles: readonly string[]): Promise<TestImports> {
  const files: string[] = [];
  for (const f of testFiles) {
    for (const c of conftestChain(f)) if (!files.includes(c)) files.push(c);
    if (f.endsWith('.py') && !files.includes(f)) files.push(f);
  }
  const modules = new Map<string, string>();
  const read: string[] = [];
  for (const f of files) {
    const blob = await readBlob(clone, commit, f).catch(() => null);
    if (blob === null) continue;
    read.push(f);
    for (const [mod, line] of parseImports(blob.toString('utf8'))) if (!modules.has(mod)) modules.set(mod, `${f}:${line}`);
  }
  return { modules, files: read };
}
