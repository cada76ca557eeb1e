import { isTestFile, isTestModule } from '../foundation/files.ts';
import { git, readBlob } from '../foundation/git.ts';

export interface SplitPatch {
  /** Diff of non-test files. */
  source: string;
  /** Diff of test files. */
  tests: string;
  /** Test modules touched and present at head. */
  testFiles: string[];
  /** Every test file touched and present at head (modules and support files: models, fixtures, conftest.py). */
  overlayFiles: string[];
}

/**
 * A PR's diff (base..head) split into source and test parts. The names come NUL-separated (-z):
 * otherwise git quotes unusual ones ("tests/test_gr\303\274\303\237e.py") and they match no test
 * pattern. `--end-of-options` keeps a revision from the artifacts from ever being read as an option.
 */
export async function splitPatch(clone: string, base: string, head: string): Promise<SplitPatch> {
  const status = await git(clone, ['diff', '-z', '--name-status', '--no-renames', '--end-of-options', base, head]);
  // "<status>\0<path>\0" per file: without renames or copies there is exactly one path.
  const fields = status.split('\0');
  const touched: Array<{ path: string; deleted: boolean }> = [];
  for (let i = 0; i + 1 < fields.length; i += 2) touched.push({ path: fields[i + 1]!, deleted: fields[i] === 'D' });
  const tests = touched.filter((t) => isTestFile(t.path));
  const sources = touched.filter((t) => !isTestFile(t.path));
  const diff = async (paths: string[]): Promise<string> =>
    paths.length
      ? git(clone, ['diff', '--no-color', '--no-ext-diff', '--no-renames', '--binary', '--end-of-options', base, head, '--', ...paths.map(literal)])
      : '';
  const modules = tests.filter((t) => !t.deleted && isTestModule(t.path)).map((t) => t.path);
  const collected = await collectedDataFiles(clone, head, tests.filter((t) => !t.deleted && !isTestModule(t.path)).map((t) => t.path));
  return {
    source: await diff(sources.map((s) => s.path)),
    tests: await diff(tests.map((t) => t.path)),
    testFiles: [...modules, ...collected.filter((f) => !modules.includes(f))],
    overlayFiles: tests.filter((t) => !t.deleted).map((t) => t.path),
  };
}

/** A path after `--` is still a pathspec: `*`, `?` or `[` in a name would match other files. */
function literal(path: string): string {
  return `:(literal)${path}`;
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
  const hooks = new Map<string, Promise<boolean>>();
  const hasHook = (dir: string): Promise<boolean> => {
    let p = hooks.get(dir);
    if (!p) {
      p = readBlob(clone, head, dir ? `${dir}/conftest.py` : 'conftest.py').then((b) => b !== null && COLLECT_HOOK.test(b.toString('utf8')));
      hooks.set(dir, p);
    }
    return p;
  };
  const out: string[] = [];
  for (const path of paths) {
    if (path.endsWith('.py') || path.endsWith('.pyc')) continue;
    const parts = path.split('/');
    let hooked = false;
    // Not the top-level conftest.py: a hook there usually collects docs (doctests of .rst files), not test data.
    for (let i = parts.length - 1; i >= 1 && !hooked; i--) hooked = await hasHook(parts.slice(0, i).join('/'));
    if (!hooked) continue;
    const input = /^(.+\/[^/.][^/]*)\.[^./]+$/.exec(path)?.[1];
    const file = input !== undefined && (await readBlob(clone, head, input)) !== null ? input : path;
    if (!out.includes(file)) out.push(file);
  }
  return out;
}
