import { isTestFile, isTestModule } from '../../core/files.ts';
import { git } from '../../core/git.ts';

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
  return {
    source: await diff(sources.map((s) => s.path)),
    tests: await diff(tests.map((t) => t.path)),
    testFiles: tests.filter((t) => !t.deleted && isTestModule(t.path)).map((t) => t.path),
    overlayFiles: tests.filter((t) => !t.deleted).map((t) => t.path),
  };
}

/** A path after `--` is still a pathspec: `*`, `?` or `[` in a name would match other files. */
function literal(path: string): string {
  return `:(literal)${path}`;
}
