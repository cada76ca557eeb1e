/** Test files by the usual conventions (tests/ folders, test_*.py, *_test.py, conftest.py, *.test.ts ...). */
export function isTestFile(path: string): boolean {
  const base = path.split('/').pop() ?? path;
  if (/(^|\/)(tests?|testing|__tests__|spec)\//.test(path)) return true;
  return /^(test_.*\.py|.*_test\.py|conftest\.py|.*\.(test|spec)\.[cm]?[jt]sx?|.*_test\.go)$/.test(base);
}

const SOURCE_EXT = /\.(py|pyx|js|jsx|mjs|cjs|ts|tsx|go|rs|rb|java|c|h|cc|cpp|hpp)$/;

/** Source code whose lines SZZ blames (not tests, docs or data). */
export function isSourceFile(path: string): boolean {
  return SOURCE_EXT.test(path) && !isTestFile(path);
}

/** Blank lines and comment-only lines carry no behaviour: SZZ skips them. */
export function isBlankOrComment(line: string, path: string): boolean {
  const t = line.trim();
  if (!t) return true;
  if (path.endsWith('.py')) return t.startsWith('#');
  return t.startsWith('//') || t.startsWith('/*') || t.startsWith('*') || t.startsWith('#');
}

/** A file a test runner collects tests from (not a helper, fixture or conftest). */
export function isTestModule(path: string): boolean {
  const base = path.split('/').pop() ?? path;
  return /^(test_.*\.py|.*_test\.py|.*\.(test|spec)\.[cm]?[jt]sx?|.*_test\.go)$/.test(base) || (/(^|\/)tests?\//.test(path) && /^test.*\.py$/.test(base));
}
