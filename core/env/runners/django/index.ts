import { fileURLToPath } from 'node:url';
import type { ParseInput, ParsedRun, Runner } from '../types.ts';
import { djangoLabel, djangoTestFile, isDjangoLog, parseDesc, parseDjangoLog, splitPasses } from './parse-django.ts';

/**
 * The command run_state.sh runs (before the labels), with $FORESIGHT_PYTHON for python3, the checkout
 * first on PYTHONPATH, and runtests.py run through a thin wrapper that turns any import-time exception
 * of a test module into a failed test of that module and lists the collected tests.
 */
export const DJANGO_CMD = 'cd tests && python3 runtests.py --settings=test_sqlite --parallel 1 -v 2 --noinput';

export const djangoRunner: Runner = {
  name: 'django',
  // The whole runners/ folder is mounted: the script sources the shared runners/checkout.sh.
  script: 'django/run_state.sh',
  dir: fileURLToPath(new URL('..', import.meta.url)),
  // Django itself is the checkout (on PYTHONPATH); the SQLite settings need only its two required
  // dependencies. Optional ones (tests/requirements/py3.txt) come from the recipe.
  installCmd: 'python3 -m pip install asgiref sqlparse',
  testCmd: DJANGO_CMD,
  // runtests.py: 0 all passed, 1 tests failed or errored; a run of no test module exits 0 with 0 tests.
  exitCodes: { ok: [0, 1], noTestsCollected: [] },
  // What run_state.sh turns into labels: modules of a test app under tests/ (not the pre-1.6 layout's
  // django/contrib/*/tests/, nor tests/test_sqlite.py), gis_tests only with a GIS database (its needs_gis).
  runs(testFile, backend) {
    const label = djangoLabel(testFile);
    return label !== null && (backend === 'postgis' || label.split('.')[0] !== 'gis_tests');
  },
  /**
   * run_state.sh writes Django's whole log (there is no JUnit) to the report path, which the env hands
   * over as `junitXml`; the combined output is the fallback when that file is missing.
   */
  parse({ junitXml, output, testFiles }: ParseInput): ParsedRun {
    const log = junitXml !== null && isDjangoLog(junitXml) ? junitXml : output;
    const { tests, collectionErrors, problem, failureKinds, notRun } = parseDjangoLog(log, testFiles);
    return {
      tests,
      collectionErrors,
      ...(problem !== undefined ? { problem } : {}),
      ...(failureKinds ? { failureKinds } : {}),
      ...(notRun ? { notRun } : {}),
    };
  },
  testFileOf: djangoTestFile,
  // runtests.py and its default settings decide what runs and how it reports; the service settings live in the image.
  harness: {
    whole: ['tests/runtests.py', 'tests/test_sqlite.py', '**/sitecustomize.py', '**/usercustomize.py', '**/*.pth'],
    sections: [],
    newFiles: ['**/test_*.py', '**/tests.py'],
    plugins: false,
    // Django's report is its run log: the runner's own output.
    reportPipe: false,
  },
  // run_state.sh's wrapper runs the suite FORESIGHT_PASSES times between one database setup and teardown.
  splitPasses,
  // `test_x (app.tests.C)` runs alone as the label `app.tests.C.test_x` (runtests.py takes method labels).
  selectArg(id, testFiles) {
    const d = parseDesc(id);
    if (!d || djangoTestFile(id, testFiles) === null) return null;
    const label = `${d.cls}.${d.name}`;
    return /^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)+$/.test(label) ? label : null;
  },
};
