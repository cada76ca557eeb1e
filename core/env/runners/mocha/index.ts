import { jsRunner } from '../js-harness.ts';
import { parseMochaReport } from '../js-report.ts';

/** The mocha command line run_state.sh uses (before the test files), the repository's own mocha. */
export const MOCHA_CMD = 'node_modules/.bin/mocha --reporter /foresight/mocha/foresight-json.cjs';

export const mochaRunner = jsRunner({
  name: 'mocha',
  testCmd: MOCHA_CMD,
  // .mocharc.* (and mocha < 8's test/mocha.opts) hold the spec, require and ui options.
  configs: ['**/.mocharc.*', '**/mocha.opts'],
  packageKey: 'mocha',
  // Its report: mocha's json, one line per mocha process.
  parseReport: (text, files) => parseMochaReport(text, files),
});
