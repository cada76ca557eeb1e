import { fileURLToPath } from 'node:url';
import { isTestModule } from '../../../foundation/files.ts';
import type { ParseInput, ParsedRun, Runner } from '../types.ts';
import { collectionErrorsFromOutput, parseJunit } from './parse-junit.ts';

/** The pytest command line run_state.sh uses (before `--junitxml=<out> <files...>`). */
export const PYTEST_CMD =
  'python3 -m pytest -p no:cacheprovider -o junit_family=xunit1 --continue-on-collection-errors -q -rN';

export const pytestRunner: Runner = {
  name: 'pytest',
  // The whole runners/ folder is mounted: the script sources the shared runners/checkout.sh.
  script: 'pytest/run_state.sh',
  dir: fileURLToPath(new URL('..', import.meta.url)),
  // The image is Debian bookworm with its python3, python3-pytest and git (core/env/build-base-image.sh);
  // a repository with dependencies gets them from its recipe.
  installCmd: 'debootstrap --variant=minbase --include=python3,python3-pytest,git bookworm',
  testCmd: PYTEST_CMD,
  // pytest: 0 all passed, 1 tests failed, 5 no tests collected (2–4: interrupted, internal or usage error).
  exitCodes: { ok: [0, 1], noTestsCollected: [5] },
  // Python modules and the data files a conftest hook collects (extract keeps only those); never another language's test module.
  runs: (testFile) => testFile.endsWith('.py') || !isTestModule(testFile),
  harness: {
    // pytest reads its configuration from the first of these it finds upward from the tests.
    whole: ['**/conftest.py', '**/pytest.ini', '**/.pytest.ini', '**/pytest.toml', '**/.pytest.toml', '**/tox.ini', '**/sitecustomize.py', '**/usercustomize.py', '**/*.pth'],
    sections: [
      { glob: '**/setup.cfg', format: 'ini', names: ['tool:pytest'] },
      { glob: '**/pyproject.toml', format: 'toml', names: ['tool.pytest'] },
    ],
    newFiles: ['**/test_*.py', '**/*_test.py', '**/tests.py'],
    plugins: true,
    reportPipe: true,
  },
  parse({ junitXml, output, testFiles }: ParseInput): ParsedRun {
    const fromOutput = collectionErrorsFromOutput(output, testFiles);
    if (junitXml === null) return { tests: {}, collectionErrors: fromOutput };
    const parsed = parseJunit(junitXml, testFiles);
    const collectionErrors = [...new Set([...parsed.collectionErrors, ...fromOutput])].sort();
    return { ...parsed, collectionErrors };
  },
  // A JUnit-derived id is the node id; one whose file is not a requested file cannot be selected.
  selectArg(id, testFiles) {
    // A data file collected whole by a conftest hook: its id is the file, which pytest selects as such.
    if (!id.includes('::') && testFiles.includes(id) && !id.startsWith('-')) return id;
    const file = id.split('::')[0];
    return file !== undefined && id.includes('::') && testFiles.includes(file) && !id.startsWith('-') ? id : null;
  },
};
