/** Runner plug-ins: how to run one repository's test suite inside a chain container and read its results. */

export type TestStatus = 'pass' | 'fail' | 'error' | 'skip';

export interface ParsedRun {
  /** Test id (runner-specific, e.g. a pytest node id) → status. */
  tests: Record<string, TestStatus>;
  /** Test file paths (repo-relative) that could not be imported/collected. */
  collectionErrors: string[];
  /**
   * Set when the output shows the run is not evidence although a report exists: the runner crashed
   * before its summary (settings/app loading failed, a missing dependency), was cut short, or its own
   * count of tests disagrees with the parsed results. Optional: pytest's parser never sets it.
   */
  problem?: string;
  /**
   * A failing or erroring test's id → the type of the exception it ended with (`AssertionError`,
   * `AttributeError`, the class name without its module), when the report says. Attribution compares
   * them: a test that fails with `AttributeError` where PR2's base fails it with `AssertionError` fails
   * for another reason (the code under test is not there yet).
   */
  failureKinds?: Record<string, string>;
  /**
   * A test reported as passed that did not run (its status is then `skip`) → why, e.g. an `async def`
   * test that a runner of its era called without awaiting. Optional: only when the output shows it.
   */
  notRun?: Record<string, string>;
}

/**
 * A module run because it reads a PR's data files (core/extract/data-consumers.ts): a runner that can select
 * cases (pytest's foresight_keep.py) runs only those whose parametrisation names one of the files, plus
 * KEEP_SAMPLE of its other cases (the same ones at every commit) for PASS_TO_PASS; a module whose ids name
 * none of them runs whole. A runner that cannot select runs the whole module.
 */
export interface KeepRule {
  module: string;
  data: readonly string[];
}

/** How many of a data-read module's other cases run beside the ones naming its data: its regression sample. */
export const KEEP_SAMPLE = 20;

export interface ParseInput {
  /** The runner's JUnit XML, or null when the run produced none. */
  junitXml: string | null;
  /** The run's combined stdout+stderr (possibly truncated in the middle). */
  output: string;
  /** The test files that were requested, repo-relative. */
  testFiles: string[];
}

/**
 * What decides how a runner collects and reports tests, which an agent's patch must not change: before
 * grading, the grader restores it to the row's gold version (runners/harness.py does the work in the
 * container). Globs are repo-relative; `**` spans directories.
 */
export interface HarnessDeclaration {
  /** Files restored whole to the gold tree, or removed when the gold tree lacks them. */
  whole: readonly string[];
  /** Files of which only these sections are restored (INI section names; TOML table prefixes; a JSON object's top-level keys). */
  sections: ReadonlyArray<{ glob: string; format: 'ini' | 'toml' | 'json'; names: readonly string[] }>;
  /** Files that may not be new: one the gold tree lacks is removed (it could be collected, or shadow a graded test). */
  newFiles: readonly string[];
  /** Restore the plug-in modules the gold configuration loads (pytest's `-p` and `pytest_plugins`). */
  plugins: boolean;
  /**
   * Whether a new file in a graded test file's directory (its topmost tests/ ancestor, else its own) is
   * removed as one that could shadow a graded test. Optional: true. False where tests sit beside the code
   * and only `newFiles` can be collected (Go: a new source file of the package is the fix's own).
   */
  newFilesInTestDirs?: boolean;
  /**
   * Restore the repository modules this JavaScript runner's gold configuration loads (jest's setup files,
   * global setup and test environment; vitest's setup files; mocha's `require`): JavaScript's `plugins`.
   * Optional: none.
   */
  configModules?: 'jest' | 'vitest' | 'mocha';
  /**
   * The runner writes its report through a pipe the grader holds (`/dev/fd/3`), never to a path the test
   * process could rewrite afterwards; and in guarded grading it runs the interpreter isolated (`-I`) with
   * plug-in autoload limited to the list taken before the patch (FORESIGHT_GUARD, FORESIGHT_PLUGINS).
   */
  reportPipe: boolean;
}

export interface Runner {
  name: string;
  /** Path of the in-container helper script, relative to `dir` (mounted at /foresight). */
  script: string;
  /**
   * Absolute host path of the runner folder (mounted read-only at /foresight).
   * Optional: defaults to `core/env/runners/<name>/`.
   */
  dir?: string;
  parse(input: ParseInput): ParsedRun;
  /** Command that installs the runner's test tool into an image that lacks it (informational). */
  installCmd: string;
  /** The test command the helper script runs, without the per-run arguments (informational). */
  testCmd: string;
  /**
   * What the runner's exit codes mean: `ok` (every test passed, or tests failed), `noTestsCollected` (the
   * runner says it found no test). Any other code without a failing test is an infrastructure error.
   */
  exitCodes: { ok: readonly number[]; noTestsCollected: readonly number[] };
  /**
   * Whether this runner can run a test file extract found, with the database backend `backend` (Django's
   * runtests.py: its test apps' modules, gis_tests only on PostGIS; pytest: Python modules and hook-collected data files, no
   * JavaScript or Go test module). Optional: without it, every one.
   */
  runs?(testFile: string, backend: string): boolean;
  /**
   * The requested test file a test id belongs to (to match ids against `collectionErrors`), or null.
   * Optional: without it an id is pytest's `<file>::...`.
   */
  testFileOf?(id: string, testFiles: readonly string[]): string | null;
  /**
   * The argument that runs this one test alone (pytest's node id, Django's dotted label), or null.
   * Optional: a runner without it repeats a state on its whole test files.
   */
  selectArg?(id: string, testFiles: readonly string[]): string | null;
  /**
   * The runner can run its selection several times in one process (FORESIGHT_PASSES=<n>: one start,
   * test databases set up once) and report each pass apart: this splits such a report into one per pass
   * the process reached, with that pass's exit code (null: the pass did not finish). Optional: without
   * it every run is a process of its own.
   */
  splitPasses?(report: string): Array<{ report: string; exitCode: number | null }>;
  /** What grading restores before it runs the tests (and how the report reaches it). */
  harness: HarnessDeclaration;
}
