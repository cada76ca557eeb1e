import { fileURLToPath } from 'node:url';
import type { ParseInput, ParsedRun, Runner } from '../types.ts';
import { parseGoReport } from './parse-go.ts';

/** The command run_state.sh runs in each directory of the requested test files (run_state.sh adds `-run '^(TestA|TestB)$' .`). */
export const GO_CMD = 'go test -json -count=1 -vet=off';

/**
 * A test file `go test` builds: `*_test.go`, not named `_*` or `.*`, not under testdata/, vendor/ or a
 * directory named `_*` or `.*` (go ignores those; a `_test.go` under testdata/ is a fixture).
 */
export function isGoTestFile(file: string): boolean {
  if (!file.endsWith('_test.go')) return false;
  const parts = file.split('/');
  return !parts.some((p, i) => p.startsWith('_') || p.startsWith('.') || (i < parts.length - 1 && (p === 'testdata' || p === 'vendor')));
}

/** A top-level test or fuzz test as run_state.sh finds them (tests.awk) and `-run` selects them. */
const TEST_NAME = /^(Test|Fuzz)(?![a-z])[\p{L}\p{N}_]*$/u;

export const goRunner: Runner = {
  name: 'go',
  // The whole runners/ folder is mounted: the script sources the shared runners/checkout.sh.
  script: 'go/run_state.sh',
  dir: fileURLToPath(new URL('..', import.meta.url)),
  // The env image's Go is the recipe's (Debian's golang-<v>-go); Debian's default one otherwise.
  installCmd: 'apt-get install golang-go',
  testCmd: GO_CMD,
  // go test: 0 all passed, 1 a test or the package's setup failed, 2 the package did not build. A run of
  // no test is 0 with no test event (parse-go.ts: nothing collected).
  exitCodes: { ok: [0, 1, 2], noTestsCollected: [] },
  runs: (testFile) => isGoTestFile(testFile),
  harness: {
    // Test files (TestMain, helpers, the tests themselves) and their fixtures are restored whole, so a
    // TestMain the patch adds or changes is undone and a new *_test.go is removed. The vendored modules
    // too: a vendored assertion library is test harness (a patch must not make it pass everything).
    // go.mod and go.sum are not: a fix may change them.
    whole: ['**/*_test.go', '**/testdata/**', 'vendor/**'],
    sections: [],
    newFiles: ['**/*_test.go'],
    plugins: false,
    // Tests sit beside the code: a new source file in a package is the fix's, and go collects only *_test.go.
    newFilesInTestDirs: false,
    // run_state.sh writes the report once through the pipe; neither go nor the tests hold it.
    reportPipe: true,
  },
  /** run_state.sh's report is JSON lines (handed over as `junitXml`); without it nothing ran that counts. */
  parse({ junitXml, testFiles }: ParseInput): ParsedRun {
    if (junitXml === null) return { tests: {}, collectionErrors: [] };
    return parseGoReport(junitXml, testFiles);
  },
  // `<file>::TestX` runs alone as `-run '^TestX$'` in the file's directory: exactly that test and its subtests.
  selectArg(id, testFiles) {
    const at = id.lastIndexOf('::');
    if (at < 0) return null;
    const file = id.slice(0, at);
    const name = id.slice(at + 2);
    return testFiles.includes(file) && isGoTestFile(file) && TEST_NAME.test(name) ? name : null;
  },
};
