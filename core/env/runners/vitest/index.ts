import { jsRunner } from '../js-harness.ts';
import { parseJestReport } from '../js-report.ts';

/** The vitest command line run_state.sh uses (before the test files), the repository's own vitest (before 1.3: without --no-cache). */
export const VITEST_CMD = 'node_modules/.bin/vitest run --no-cache --reporter=json --outputFile=<report>';

export const vitestRunner = jsRunner({
  name: 'vitest',
  testCmd: VITEST_CMD,
  // vitest reads vitest.config.*, else vite.config.*; a workspace file lists projects with their own.
  configs: ['**/vitest.config.*', '**/vitest.workspace.*', '**/vite.config.*'],
  newFilesInTestDirs: false,
  // Its json reporter writes jest's shape.
  parseReport: (text, files) => parseJestReport('vitest', text, files),
});
