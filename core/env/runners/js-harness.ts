/** What the JavaScript runners share: the files they run, their exit codes, and the harness parts common to all three. */
import { fileURLToPath } from 'node:url';
import { isJsModule } from './js-report.ts';
import type { ParseInput, ParsedRun, Runner } from './types.ts';

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

/**
 * A JavaScript runner: the same folder, install, exit codes, files and harness shape for jest, vitest and
 * mocha; what differs is the command, the runner's own config files and package.json key, and the report.
 */
export function jsRunner(spec: {
  name: 'jest' | 'vitest' | 'mocha';
  testCmd: string;
  /** The runner's own config files (restored whole beside JS_WHOLE). */
  configs: readonly string[];
  /** package.json's key holding the runner's configuration, if it reads one. */
  packageKey?: string;
  /** False where tests sit beside the code (a new file there is the fix's own; new test files are newFiles). */
  newFilesInTestDirs?: boolean;
  /** The report's text (ParseInput.junitXml holds it, whatever its format) read into results. */
  parseReport(text: string, testFiles: readonly string[]): ParsedRun;
}): Runner {
  return {
    name: spec.name,
    // The whole runners/ folder is mounted: the script sources the shared checkout.sh and node-modules.sh.
    script: `${spec.name}/run_state.sh`,
    dir: fileURLToPath(new URL('.', import.meta.url)),
    // The runner comes with the repository's dependencies, installed by the env image in $FORESIGHT_NODE_MODULES.
    installCmd: 'npm ci',
    testCmd: spec.testCmd,
    // 0 all passed, 1 tests or test files failed (run_state.sh maps mocha's failure count to 1); a run that
    // finds no test reports none (no evidence), whatever its exit code.
    exitCodes: { ok: [0, 1], noTestsCollected: [] },
    runs: (testFile) => isJsModule(testFile),
    harness: {
      whole: [...JS_WHOLE, ...spec.configs],
      sections: spec.packageKey ? [{ glob: '**/package.json', format: 'json', names: [spec.packageKey] }] : [],
      newFiles: JS_NEW_FILES,
      ...(spec.newFilesInTestDirs === false ? { newFilesInTestDirs: false } : {}),
      plugins: false,
      configModules: spec.name,
      reportPipe: true,
    },
    parse: ({ junitXml, testFiles }: ParseInput): ParsedRun => (junitXml === null ? { tests: {}, collectionErrors: [] } : spec.parseReport(junitXml, testFiles)),
  };
}
