import { fileURLToPath } from 'node:url';
import { JS_NEW_FILES, JS_WHOLE } from '../js-harness.ts';
import { isJsModule, parseMochaReport } from '../js-report.ts';
import type { ParseInput, ParsedRun, Runner } from '../types.ts';

/** The mocha command line run_state.sh uses (before the test files), the repository's own mocha. */
export const MOCHA_CMD = 'node_modules/.bin/mocha --reporter /foresight/mocha/foresight-json.cjs';

export const mochaRunner: Runner = {
  name: 'mocha',
  // The whole runners/ folder is mounted: the script sources the shared checkout.sh and node-modules.sh.
  script: 'mocha/run_state.sh',
  dir: fileURLToPath(new URL('..', import.meta.url)),
  // mocha comes with the repository's dependencies, installed by the env image in $FORESIGHT_NODE_MODULES.
  installCmd: 'npm ci',
  testCmd: MOCHA_CMD,
  // run_state.sh: 0 all passed, 1 a test failed or a file could not be loaded (mocha's own code, its failure count, is mapped).
  exitCodes: { ok: [0, 1], noTestsCollected: [] },
  runs: (testFile) => isJsModule(testFile),
  harness: {
    // .mocharc.* (and mocha < 8's test/mocha.opts) hold the spec, require and ui options.
    whole: [...JS_WHOLE, '**/.mocharc.*', '**/mocha.opts'],
    sections: [{ glob: '**/package.json', format: 'json', names: ['mocha'] }],
    newFiles: JS_NEW_FILES,
    plugins: false,
    configModules: 'mocha',
    reportPipe: true,
  },
  // The report (ParseInput.junitXml holds it, whatever its format) is mocha's json, one line per mocha process.
  parse({ junitXml, testFiles }: ParseInput): ParsedRun {
    return junitXml === null ? { tests: {}, collectionErrors: [] } : parseMochaReport(junitXml, testFiles);
  },
};
