import { jsRunner } from '../js-harness.ts';
import { parseJestReport } from '../js-report.ts';

/** The jest command line run_state.sh uses (before the test files), the repository's own jest. */
export const JEST_CMD = 'node_modules/.bin/jest --ci --json --outputFile=<report> --runTestsByPath --no-watchman';

export const jestRunner = jsRunner({
  name: 'jest',
  testCmd: JEST_CMD,
  configs: ['**/jest.config.*'],
  packageKey: 'jest',
  newFilesInTestDirs: false,
  parseReport: (text, files) => parseJestReport('jest', text, files),
});
