import { isTestFile, isTestModule } from '../foundation/files.ts';
import { gitBytes, pathBytes, pathShown, pathText, readBlob } from '../foundation/git.ts';
import { dataConsumers, type DataConsumers } from './data-consumers.ts';

export interface SplitPatch {
  /** Diff of non-test files. */
  source: string;
  /** Diff of test files. */
  tests: string;
  /** What to run: test modules touched and present at head, data files a conftest hook collects, and the modules that read the PR's other data files. */
  testFiles: string[];
  /** The modules added for the PR's data files (fixtures, golden files), and the data files no module reads. */
  dataConsumers: DataConsumers;
  /** Every test file touched and present at head (modules and support files: models, fixtures, conftest.py). */
  overlayFiles: string[];
}

/**
 * A PR's diff (base..head) split into source and test parts. The names are read as bytes, NUL-separated
 * (-z): otherwise git quotes unusual ones ("tests/test_gr\303\274\303\237e.py") and they match no test
 * pattern, and a name that is not UTF-8, decoded as UTF-8, names no file. Stored names are pathText's.
 * The diff is one `git diff` cut at its file headers: a path argument cannot carry a name that is not
 * UTF-8. core.quotePath on writes every such name in the headers C-quoted, so the patch is UTF-8 text
 * that `git apply` maps back to the same bytes. `--end-of-options` keeps a revision from the artifacts
 * from ever being read as an option.
 */
export async function splitPatch(clone: string, base: string, head: string): Promise<SplitPatch> {
  const status = await gitBytes(clone, ['diff', '-z', '--name-status', '--no-renames', '--end-of-options', base, head]);
  // "<status>\0<path>\0" per file: without renames or copies there is exactly one path.
  const fields = splitNul(status);
  const touched: Array<{ path: string; deleted: boolean; test: boolean }> = [];
  for (let i = 0; i + 1 < fields.length; i += 2) {
    const path = pathText(fields[i + 1]!);
    touched.push({ path, deleted: fields[i]!.toString('latin1') === 'D', test: isTestFile(pathShown(path)) });
  }
  const tests = touched.filter((t) => t.test);
  const isTest = new Map(touched.map((t) => [t.path, t.test]));
  const diff = await gitBytes(clone, ['diff', '--no-color', '--no-ext-diff', '--no-renames', '--binary', '--src-prefix=a/', '--dst-prefix=b/', '--end-of-options', base, head], {
    config: ['core.quotePath=true'],
  });
  const parts = { source: [] as Buffer[], tests: [] as Buffer[] };
  for (const section of fileSections(diff)) {
    const path = section.path === null ? null : pathText(section.path);
    const test = path === null ? false : (isTest.get(path) ?? isTestFile(pathShown(path)));
    (test ? parts.tests : parts.source).push(section.text);
  }
  const modules = tests.filter((t) => !t.deleted && isTestModule(pathShown(t.path))).map((t) => t.path);
  const data = tests.filter((t) => !t.deleted && !isTestModule(pathShown(t.path))).map((t) => t.path);
  const collected = await collectedDataFiles(clone, head, data);
  // Collected files are tests themselves; an expected output stands for its input, which is collected.
  const read = await dataConsumers(clone, head, data.filter((f) => !collected.includes(f) && !collected.some((c) => f.startsWith(`${c}.`))), modules);
  const runs = [...modules, ...collected.filter((f) => !modules.includes(f))];
  return {
    source: Buffer.concat(parts.source).toString('utf8'),
    tests: Buffer.concat(parts.tests).toString('utf8'),
    testFiles: [...runs, ...[...new Set(read.consumers.map((c) => c.module))].filter((m) => !runs.includes(m))],
    dataConsumers: read,
    overlayFiles: tests.filter((t) => !t.deleted).map((t) => t.path),
  };
}

function splitNul(buf: Buffer): Buffer[] {
  const out: Buffer[] = [];
  for (let from = 0; from < buf.length; ) {
    const end = buf.indexOf(0, from);
    out.push(buf.subarray(from, end < 0 ? buf.length : end));
    from = end < 0 ? buf.length : end + 1;
  }
  return out;
}

const HEADER = Buffer.from('diff --git ');

/**
 * A diff cut into its files: each from its "diff --git" line to the next. A line of a file's diff starts
 * with " ", "+", "-", "\\", "@@", a header word, or (binary) a base-85 line, which holds no space: never
 * with "diff --git ". The path is the header's (the same on both sides without renames), null if unreadable.
 */
function* fileSections(diff: Buffer): Generator<{ path: Buffer | null; text: Buffer }> {
  const starts: number[] = [];
  for (let at = 0; at < diff.length; ) {
    if (diff.subarray(at, at + HEADER.length).equals(HEADER)) starts.push(at);
    const nl = diff.indexOf(0x0a, at);
    at = nl < 0 ? diff.length : nl + 1;
  }
  for (const [i, start] of starts.entries()) {
    const text = diff.subarray(start, starts[i + 1] ?? diff.length);
    const nl = text.indexOf(0x0a);
    yield { path: headerPath(text.subarray(HEADER.length, nl < 0 ? text.length : nl)), text };
  }
}

/** The path of `a/<path> b/<path>`, each side C-quoted ("a/caf\351.py") when git quotes it. */
function headerPath(rest: Buffer): Buffer | null {
  if (rest[0] === 0x22) {
    const end = closingQuote(rest);
    const a = end < 0 ? null : quotedBytes(rest.subarray(0, end + 1));
    return a && a.subarray(0, 2).toString('latin1') === 'a/' ? a.subarray(2) : null;
  }
  // Unquoted: "a/" + P + " b/" + P, so P's length is (length - 5) / 2.
  const n = (rest.length - 5) / 2;
  return Number.isInteger(n) && n > 0 && rest.subarray(0, 2).toString('latin1') === 'a/' ? rest.subarray(2, 2 + n) : null;
}

function closingQuote(s: Buffer): number {
  for (let i = 1; i < s.length; i++) {
    if (s[i] === 0x5c) i++;
    else if (s[i] === 0x22) return i;
  }
  return -1;
}

/** The bytes a C-quoted header field names (pathBytes of its text: the quoted form is ASCII). */
function quotedBytes(field: Buffer): Buffer | null {
  try {
    return pathBytes(field.toString('latin1'));
  } catch {
    return null;
  }
}

const COLLECT_HOOK = /^\s*def\s+pytest_collect_file\s*\(/m;

/**
 * Data files that are tests themselves: golden-file suites (a lexer's sample and its expected tokens) whose
 * conftest.py, in the file's folder or above (below the top level), collects files with a `pytest_collect_file` hook. A changed
 * expected-output file (`x.abnf.output`, `session.output`) stands for the input beside it (`x.abnf`, `session`),
 * the file the hook collects;
 * Python files are never data (modules are found by name, helpers are not run).
 */
export async function collectedDataFiles(clone: string, head: string, paths: readonly string[]): Promise<string[]> {
  // Names are matched as their bytes, one character each (Latin-1): a folder or name that is not UTF-8 keeps its parts.
  const stored = (bin: string): string => pathText(Buffer.from(bin, 'latin1'));
  const hooks = new Map<string, Promise<boolean>>();
  const hasHook = (dir: string): Promise<boolean> => {
    let p = hooks.get(dir);
    if (!p) {
      p = readBlob(clone, head, stored(dir ? `${dir}/conftest.py` : 'conftest.py')).then((b) => b !== null && COLLECT_HOOK.test(b.toString('utf8')));
      hooks.set(dir, p);
    }
    return p;
  };
  const out: string[] = [];
  for (const path of paths) {
    const bin = pathBytes(path).toString('latin1');
    if (bin.endsWith('.py') || bin.endsWith('.pyc')) continue;
    const parts = bin.split('/');
    let hooked = false;
    // Not the top-level conftest.py: a hook there usually collects docs (doctests of .rst files), not test data.
    for (let i = parts.length - 1; i >= 1 && !hooked; i--) hooked = await hasHook(parts.slice(0, i).join('/'));
    if (!hooked) continue;
    const input = /^(.+\/[^/.][^/]*)\.[^./]+$/.exec(bin)?.[1];
    const file = input !== undefined && (await readBlob(clone, head, stored(input))) !== null ? stored(input) : path;
    if (!out.includes(file)) out.push(file);
  }
  return out;
}
