/**
 * Test files by the usual conventions: a tests/ or __tests__/ folder anywhere, a test/ folder at the
 * top, test_*.py, *_test.py, conftest.py, *.test.ts ... A package's own `test` module (Django's
 * django/test/, the test framework it ships) is source.
 */
export function isTestFile(path: string): boolean {
  const base = path.split('/').pop() ?? path;
  if (/(^|\/)(tests|__tests__)\//.test(path) || /^(test|spec)\//.test(path)) return true;
  return /^(test_.*\.py|.*_test\.py|conftest\.py|.*\.(test|spec)\.[cm]?[jt]sx?|.*_test\.go)$/.test(base);
}

const SOURCE_EXT = /\.(py|pyx|js|jsx|mjs|cjs|ts|tsx|go|rs|rb|java|c|h|cc|cpp|hpp)$/;
/** Files that shape behaviour without being code: templates, styles, shipped data. */
const BEHAVIOUR_EXT = /\.(html|jinja2?|j2|css|scss|sql|xml|json|ya?ml|toml|cfg|ini|sh)$/;
const DOC = /(^|\/)(docs?|documentation|changelog|changes|news|release[-_]?notes)(\/|$)|\.(rst|md|txt|po|mo|svg|png|jpe?g|gif|ico|woff2?|ttf|eot)$|(^|\/)(AUTHORS|LICENSE|CHANGELOG|README)[^/]*$/i;

/** Source code (not tests, docs or data). */
export function isSourceFile(path: string): boolean {
  return SOURCE_EXT.test(path) && !isTestFile(path);
}

/** What a changed file is, for SZZ: code and behaviour files are blamed; tests only when nothing else changed. */
export function fileKind(path: string): 'source' | 'behaviour' | 'test' | 'doc' {
  if (isTestFile(path)) return 'test';
  if (SOURCE_EXT.test(path)) return 'source';
  if (DOC.test(path)) return 'doc';
  return BEHAVIOUR_EXT.test(path) ? 'behaviour' : 'doc';
}

/** Blank lines and comment-only lines carry no behaviour: SZZ skips them. */
export function isBlankOrComment(line: string, path: string): boolean {
  const t = line.trim();
  if (!t) return true;
  if (/\.(py|sh|ya?ml|toml|cfg|ini)$/.test(path)) return t.startsWith('#');
  if (/\.(html|jinja2?|j2)$/.test(path)) return t.startsWith('{#') || t.startsWith('<!--');
  if (path.endsWith('.sql')) return t.startsWith('--');
  return t.startsWith('//') || t.startsWith('/*') || t.startsWith('*') || t.startsWith('#');
}

/** A file a test runner collects tests from (not a helper, fixture or conftest). */
export function isTestModule(path: string): boolean {
  const base = path.split('/').pop() ?? path;
  return /^(test_.*\.py|.*_test\.py|.*\.(test|spec)\.[cm]?[jt]sx?|.*_test\.go)$/.test(base) || (isTestFile(path) && /^tests?\.py$/.test(base));
}
