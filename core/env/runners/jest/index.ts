import { fileURLToPath } from 'node:url';
import { JS_NEW_FILES, JS_WHOLE } from '../js-harness.ts';
import { isJsModule, parseJestReport } from '../js-report.ts';
import type { ParseInput, ParsedRun, Runner } from '../types.ts';

/** The jest command line run_state.sh uses (before the test files), the repository's own jest. */
export const JEST_CMD = 'node_modules/.bin/jest --ci --json --outputFile=<report> --runTestsByPath --no-watchman';

export const jestRunner: Runner = {
  name: 'jest',
  // The whole runners/ folder is mounted: the script sources the shared checkout.sh and node-modules.sh.
  script: 'jest/run_state.sh',
  dir: fileURLToPath(new URL('..', import.meta.url)),
  // jest comes with the repository's dependencies, installed by the env image in $FORESIGHT_NODE_MODULES.
  installCmd: 'npm ci',
  testCmd: JEST_CMD,
  // jest: 0 all passed, 1 tests or test files failed (a run that finds no test exits 1 with an empty report).
  exitCodes: { ok: [0, 1], noTestsCollected: [] },
  runs: (testFile) => isJsModule(testFile),
  harness: {
    whole: [...JS_WHOLE, '**/jest.config.*'],
    sections: [{ glob: '**/package.json', format: 'json', names: ['jest'] }],
    newFiles: JS_NEW_FILES,
    // Tests often sit beside the code (src/a.test.ts): a new file there is the fix's own; new test files are newFiles.
    newFilesInTestDirs: false,
    plugins: false,
    configModules: 'jest',
    reportPipe: true,
  },
  // The report (ParseInput.junitXml holds it, whatever its format) is jest's --json; nothing is read from the console.
  parse({ junitXml, testFiles }: ParseInput): ParsedRun {
    return junitXml === null ? { tests: {}, collectionErrors: [] } : parseJestReport('jest', junitXml, testFiles);
  },
};
