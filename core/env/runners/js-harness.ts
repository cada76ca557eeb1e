/** What the JavaScript runners share: the files they run, their exit codes, and the harness parts common to all three. */

const TEST_EXTS = ['js', 'jsx', 'ts', 'tsx', 'mjs', 'cjs', 'mts', 'cts'];

/** Test files by the runners' default patterns (`*.test.*`, `*.spec.*`, `__tests__/`): a new one could be collected. */
export const JS_TEST_FILES: readonly string[] = [...TEST_EXTS.flatMap((e) => [`**/*.test.${e}`, `**/*.spec.${e}`]), '**/__tests__/**'];

/**
 * Restored whole for every JavaScript runner: the dependencies (a node_modules the patch adds, or a link
 * in its place, would replace the runner and what the tests import) and the Babel configuration, which
 * transforms the tests and the code under test for jest and for mocha's @babel/register.
 */
export const JS_WHOLE: readonly string[] = ['**/node_modules', '**/node_modules/**', '**/babel.config.*', '**/.babelrc', '**/.babelrc.*'];

/** New files that must not be: test files, and `__mocks__` modules (a root one mocks a package for every test). */
export const JS_NEW_FILES: readonly string[] = [...JS_TEST_FILES, '**/__mocks__/**'];
