import { fileURLToPath } from 'node:url';
import type { ParseInput, ParsedRun, Runner } from '../types.ts';
import { collectionErrorsFromOutput, parseJunit } from './parse-junit.ts';

/** The pytest command line run_state.sh uses (before `--junitxml=<out> <files...>`). */
export const PYTEST_CMD =
  'python3 -m pytest -p no:cacheprovider -o junit_family=xunit1 --continue-on-collection-errors -q -rN';

export const pytestRunner: Runner = {
  name: 'pytest',
  script: 'run_state.sh',
  dir: fileURLToPath(new URL('.', import.meta.url)),
  installCmd: 'python3 -m pip install pytest',
  testCmd: PYTEST_CMD,
  parse({ junitXml, output, testFiles }: ParseInput): ParsedRun {
    const fromOutput = collectionErrorsFromOutput(output, testFiles);
    if (junitXml === null) return { tests: {}, collectionErrors: fromOutput };
    const parsed = parseJunit(junitXml, testFiles);
    const collectionErrors = [...new Set([...parsed.collectionErrors, ...fromOutput])].sort();
    return { tests: parsed.tests, collectionErrors };
  },
};
