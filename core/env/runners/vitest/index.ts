import { fileURLToPath } from 'node:url';
import { JS_NEW_FILES, JS_WHOLE } from '../js-harness.ts';
import { isJsModule, parseJestReport } from '../js-report.ts';
import type { ParseInput, ParsedRun, Runner } from '../types.ts';

/** The vitest command line run_state.sh uses (before the test files), the repository's own vitest. */
export const VITEST_CMD = 'node_modules/.bin/vitest run --no-cache --reporter=json --outputFile=<report>';

export const vitestRunner: Runner = {
  name: 'vitest',
  // The whole runners/ folder is mounted: the script sources the shared checkout.sh and node-modules.sh.
  script: 'vitest/run_state.sh',
  dir: fileURLToPath(new URL('..', import.meta.url)),
  // vitest comes with the repository's dependencies, installed by the env image in $FORESIGHT_NODE_MODULES.
  installCmd: 'npm ci',
  testCmd: VITEST_CMD,
  // vitest: 0 all passed, 1 tests or test files failed (also an error outside every test: no evidence without a failing test).
  exitCodes: { ok: [0, 1], noTestsCollected: [] },
  runs: (testFile) => isJsModule(testFile),
  harness: {
    // vitest reads vitest.config.*, else vite.config.*; a workspace file lists projects with their own.
    whole: [...JS_WHOLE, '**/vitest.config.*', '**/vitest.workspace.*', '**/vite.config.*'],
    sections: [],
    newFiles: JS_NEW_FILES,
    // Tests often sit beside the code (src/a.test.ts): a new file there is the fix's own; new test files are newFiles.
    newFilesInTestDirs: false,
    plugins: false,
    configModules: 'vitest',
    reportPipe: true,
  },
  // The report (ParseInput.junitXml holds it, whatever its format) is vitest's json reporter's, jest's shape.
  parse({ junitXml, testFiles }: ParseInput): ParsedRun {
    return junitXml === null ? { tests: {}, collectionErrors: [] } : parseJestReport('vitest', junitXml, testFiles);
  },
};
