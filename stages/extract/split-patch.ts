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

/** A PR's diff (base..head) split into source and test parts. */
export async function splitPatch(clone: string, base: string, head: string): Promise<SplitPatch> {
  const status = await git(clone, ['diff', '--name-status', '--no-renames', base, head]);
  const touched: Array<{ path: string; deleted: boolean }> = status
    .split('\n')
    .filter(Boolean)
    .map((l) => {
      const [st, path] = l.split('\t');
      return { path: path!, deleted: st === 'D' };
    });
  const tests = touched.filter((t) => isTestFile(t.path));
  const sources = touched.filter((t) => !isTestFile(t.path));
  const diff = async (paths: string[]): Promise<string> =>
    paths.length ? git(clone, ['diff', '--no-color', '--no-ext-diff', '--no-renames', '--binary', base, head, '--', ...paths]) : '';
  return {
    source: await diff(sources.map((s) => s.path)),
    tests: await diff(tests.map((t) => t.path)),
    testFiles: tests.filter((t) => !t.deleted && isTestModule(t.path)).map((t) => t.path),
    overlayFiles: tests.filter((t) => !t.deleted).map((t) => t.path),
  };
}
