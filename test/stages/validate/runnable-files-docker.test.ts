/**
 * Validate runs only the test files its environment runs (runnableTestFiles), through real Docker on a history
 * the test generates (squash-merged PRs "Title (#N)"), mined by discover, szz, extract and validate as `make mine` does:
 *  - #2 fixes #1's browser code and touches only a JavaScript test: pytest runs none of PR2's test files, so
 *    the chain is pr2_no_tests before any container, not an environment failure (env_failed_pr2);
 *  - #3 fixes #1's Python code with a Python test and the JavaScript test beside it: the row keeps the file pytest runs;
 *  - #5 fixes #4's renderer and touches only a golden-file case that a conftest hook collects: pytest runs it,
 *    and it is PR2's fail->pass test.
 * Then, without Docker: which files a runner runs on which backend, and validateChain's exclusions of Django
 * chains (JavaScript tests; gis_tests without PostGIS) with container work that throws when touched; and
 * ChainWork.run excluding such a chain from its recipes alone, with a Docker client that throws when touched
 * (no era chosen: no image built, no candidate checked in a container).
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig, NO_SECRETS } from '../../../core/foundation/config.ts';
import { connectDocker, DEFAULT_BASE_ALIAS, ensureImage, isDockerReachable, packageSources, planTestFiles, runnableTestFiles, type EraEnv } from '../../../core/env/index.ts';
import { djangoRunner } from '../../../core/env/runners/django/index.ts';
import { pytestRunner } from '../../../core/env/runners/pytest/index.ts';
import { RecipeSchema } from '../../../core/env/recipes/schema.ts';
import { silentLogger } from '../../../core/foundation/log.ts';
import { ExtractedChainSchema, type ExtractedChain } from '../../../core/foundation/model/extracted.ts';
import { ValidatedChainSchema, type ValidatedChain } from '../../../core/foundation/model/validated.ts';
import type { StageName } from '../../../core/foundation/stage.ts';
import { runPipeline } from '../../../pipeline/pipeline.ts';
import type { ContainerDeps } from '../../../stages/validate/backend-containers.ts';
import { ChainWork } from '../../../stages/validate/validate-and-attribute.ts';
import { chainOnBackends, validateChain } from '../../../stages/validate/validate-states.ts';
import type Docker from 'dockerode';
import { validatedChain } from '../../helpers/chain-fixture.ts';
import { gitRepo, type GitRepo } from '../../helpers/git-repo.ts';

const docker = connectDocker();
const dockerUp = await isDockerReachable(docker);
const skip = !dockerUp && !process.env['CI'];
if (skip) console.warn('[runnable-files-docker.test] SKIPPED: Docker is not reachable and CI is unset');

const day = (n: number): string => `2024-05-${String(n).padStart(2, '0')}T12:00:00Z`;
const LABEL_TESTS = "from label import label\n\n\ndef test_plain():\n    assert label('a') == 'a'\n\n\ndef test_strip():\n    assert label(' a ') == 'a'\n";
const JS_TEST = (n: number) => `import { label } from './label.js';\ntest('keeps ${n} inner space', () => expect(label('a b')).toBe('a b'));\n`;
// A golden-file suite: each *.case file is one test (input, "---", expected output), collected by this hook.
const GOLDEN_HOOK = `import pytest


class CaseFile(pytest.File):
    def collect(self):
        yield Case.from_parent(self, name="render")


class Case(pytest.Item):
    def runtest(self):
        from render import render
        given, expected = self.path.read_text().split("---\\n")
        assert render(given.strip()) == expected.strip()


def pytest_collect_file(parent, file_path):
    if file_path.suffix == ".case":
        return CaseFile.from_parent(parent, path=file_path)
`;

async function history(): Promise<GitRepo> {
  const repo = await gitRepo();
  const prs: Array<{ title: string; files: Record<string, string> }> = [
    {
      title: 'Trim labels',
      files: { 'label.py': 'def label(s):\n    return s.strip()\n', 'web/label.js': 'export function label(s) {\n  return s.trim().replace(/ +/, "");\n}\n', 'tests/test_label.py': LABEL_TESTS },
    },
    { title: 'Fix browser labels losing their inner space', files: { 'web/label.js': 'export function label(s) {\n  return s.trim();\n}\n', 'web/label.test.js': JS_TEST(1) } },
    {
      title: 'Fix labels keeping inner newlines',
      files: {
        'label.py': "def label(s):\n    return ' '.join(s.split())\n",
        'tests/test_label.py': `${LABEL_TESTS}\n\ndef test_newline():\n    assert label('a\\nb') == 'a b'\n`,
        'web/label.test.js': JS_TEST(2),
      },
    },
    { title: 'Render in capitals', files: { 'render.py': 'def render(s):\n    return s.upper()\n', 'tests/golden/conftest.py': GOLDEN_HOOK, 'tests/golden/plain.case': 'ABC\n---\nABC\n', 'tests/golden/lower.case': 'abc\n---\nABC\n' } },
    { title: 'Fix rendering of empty input', files: { 'render.py': "def render(s):\n    return s.upper() or '(empty)'\n", 'tests/golden/empty.case': '\n---\n(empty)\n' } },
  ];
  // The root conftest.py puts the work tree on sys.path at every commit (pytest's rootdir insertion).
  await repo.commit({ files: { 'README.md': 'labels\n', 'conftest.py': '', 'label.py': 'def label(s):\n    return s\n', 'render.py': 'def render(s):\n    return s\n' }, message: 'Initial commit', date: day(1) });
  for (const [i, pr] of prs.entries()) await repo.commit({ files: pr.files, message: `${pr.title} (#${i + 1})`, date: day(i + 2) });
  return repo;
}

describe.skipIf(skip)('validate: the test files its environment runs (Docker, a generated history)', () => {
  let repo: GitRepo;
  let dataRoot: string;
  let chains: ValidatedChain[];
  const chain = (pr2: string): ValidatedChain => {
    const c = chains.find((x) => x.pr2.id === pr2);
    if (!c) throw new Error(`no chain for #${pr2}: ${chains.map((x) => x.instance_id).join(', ')}`);
    return c;
  };
  beforeAll(async () => {
    await ensureImage(DEFAULT_BASE_ALIAS, { docker });
    repo = await history();
    dataRoot = await mkdtemp(join(tmpdir(), 'foresight-runnable-'));
    // Attribution off: the bisection is not what this is about.
    const config = loadConfig({ FORESIGHT_OFFLINE: '1', FORESIGHT_IMAGE: DEFAULT_BASE_ALIAS, FORESIGHT_RUNS: '1', FORESIGHT_ATTRIBUTION: 'off' });
    for (const only of ['discover', 'szz', 'extract', 'validate'] as StageName[]) {
      await runPipeline({ dataRoot, repo: { name: 'gen/runnable', clone: repo.dir }, config, log: silentLogger, only });
    }
    const lines = (await readFile(join(dataRoot, 'gen__runnable', 'validate', 'items.jsonl'), 'utf8')).split('\n').filter(Boolean);
    chains = lines.map((l) => ValidatedChainSchema.parse(JSON.parse(l)));
  }, 600_000);
  afterAll(async () => {
    await repo?.remove();
    if (dataRoot) await rm(dataRoot, { recursive: true, force: true });
  });

  it('#2 touched only a JavaScript test: pr2_no_tests at validate, before any container, not an environment failure', () => {
    const c = chain('2');
    expect(c.pr1.id).toBe('1');
    expect(c.excluded).toMatchObject({ reason: 'pr2_no_tests', stage: 'validate' });
    expect(c.excluded!.detail).toMatch(/touched no test file the pytest runner runs: web\/label\.test\.js$/);
    // An excluded row keeps the files PR2 touched, as extract found them.
    expect(c.anticipation_test_files).toEqual(['web/label.test.js']);
    expect(c.states).toEqual([]);
    expect(c.cost).toBeNull();
    expect(c.gradeable).toBe(false);
  });

  it('#3 touched a Python test and the JavaScript one: the row runs the Python file, and its sets hold', () => {
    const c = chain('3');
    expect(c.pr1.id).toBe('1');
    expect(c.excluded).toBeNull();
    expect(c.anticipation_test_files).toEqual(['tests/test_label.py']);
    // What the grading bundle lays over is unchanged: the JavaScript test is still PR2's overlay.
    expect(c.anticipation_overlay_files).toContain('web/label.test.js');
    expect(c.states.map((s) => [s.name, s.testFiles])).toContainEqual(['S4', ['tests/test_label.py']]);
    expect(c.ANTICIPATION_FAIL_TO_PASS).toEqual(['tests/test_label.py::test_newline']);
    expect(c.FAIL_TO_PASS).toEqual(['tests/test_label.py::test_strip']);
  });

  it('#5 touched only a golden-file case a conftest hook collects: pytest runs it, and it is the fail->pass test', () => {
    const c = chain('5');
    expect(c.pr1.id).toBe('4');
    expect(c.excluded).toBeNull();
    expect(c.anticipation_test_files).toEqual(['tests/golden/empty.case']);
    expect(c.ANTICIPATION_FAIL_TO_PASS).toEqual(['tests/golden/empty.case::render']);
    expect(c.FAIL_TO_PASS).toEqual(['tests/golden/lower.case::render']);
    expect(c.PASS_TO_PASS).toEqual(['tests/golden/plain.case::render']);
  });
});

describe('runnableTestFiles: a recipe\'s testFiles globs, then what its runner runs on a backend', () => {
  const files = ['tests/test_a.py', 'tests/golden/x.case', 'web/a.test.js', 'pkg/b_test.go', 'tests/admin/tests.py', 'js_tests/admin/core.test.js', 'tests/gis_tests/geoapp/tests.py'];
  it('pytest runs Python modules and hook-collected data files, never another language\'s test module; Django only test apps\' modules, gis_tests only on PostGIS', () => {
    expect(runnableTestFiles({ recipe: null, runner: pytestRunner }, files, 'sqlite')).toEqual(['tests/test_a.py', 'tests/golden/x.case', 'tests/admin/tests.py', 'tests/gis_tests/geoapp/tests.py']);
    expect(runnableTestFiles({ recipe: null, runner: djangoRunner }, files, 'sqlite')).toEqual(['tests/admin/tests.py']);
    expect(runnableTestFiles({ recipe: null, runner: djangoRunner }, files, 'postgis')).toEqual(['tests/admin/tests.py', 'tests/gis_tests/geoapp/tests.py']);
    // As run_state.sh labels them: not the settings module beside the apps, not the pre-1.6 layout, not an unimportable path.
    const elsewhere = ['tests/test_sqlite.py', 'django/contrib/auth/tests/test_management.py', 'tests/admin-x/tests.py'];
    expect(runnableTestFiles({ recipe: null, runner: djangoRunner }, elsewhere, 'postgis')).toEqual([]);
    expect(runnableTestFiles({ recipe: null, runner: null }, files, 'sqlite')).toEqual(files);
  });
  it("a recipe's testFiles globs run first: what they leave out is not run", () => {
    const recipe = RecipeSchema.parse({ runner: 'pytest', testFiles: ['tests/admin/**'] });
    expect(runnableTestFiles({ recipe, runner: pytestRunner }, files, 'sqlite')).toEqual(['tests/admin/tests.py']);
    expect(planTestFiles({ recipe, runner: pytestRunner }, ['tests/test_a.py'], ['sqlite'])).toEqual({
      kind: 'none', reason: 'no_tests', detail: "touched no test file the pytest runner runs among its recipe's testFiles (tests/admin/**): tests/test_a.py",
    });
  });
});

describe("validateChain: a Django chain whose tests its environment cannot run is excluded before any container", () => {
  const era = (backends: string[]): EraEnv => ({ kind: 'ready', image: 'never-started', recipe: RecipeSchema.parse({ runner: 'django', backends }), runner: djangoRunner, built: false });
  const chain = (pr1: string[], pr2: string[]): ExtractedChain => ExtractedChainSchema.parse(validatedChain({ pr1_test_files: pr1, anticipation_test_files: pr2 }));
  // Any use of the containers (or of another era) throws: the exclusion must come before them.
  const untouchable = new Proxy({}, { get: (_, key) => { throw new Error(`container work was touched (${String(key)})`); } }) as ContainerDeps;
  const deps = { cfg: loadConfig({}).validate, containers: untouchable, eraWithout: async (): Promise<EraEnv> => { throw new Error('no era change expected'); } };
  const DJANGO_BACKENDS = ['sqlite', 'postgresql', 'mysql'];

  it("PR2's tests are all gis_tests and the recipe names no PostGIS: pr2_tests_skipped, not an environment failure", async () => {
    const e = era(DJANGO_BACKENDS);
    const r = await validateChain(chain(['tests/admin_views/tests.py'], ['tests/gis_tests/geoapp/tests.py']), { pr1: e, pr2: e }, deps);
    expect(r.stateRuns).toBe(0);
    expect(r.chain.excluded).toEqual({
      reason: 'pr2_tests_skipped', stage: 'validate',
      detail: 'PR #8 touched test files that run only on the postgis backend, which the recipe does not name (it names sqlite, postgresql, mysql): tests/gis_tests/geoapp/tests.py',
    });
    expect(r.chain).toMatchObject({ runner: 'django', cost: null, states: [], gradeable: false });
  });

  it("PR1's tests are all JavaScript: pr1_no_tests", async () => {
    const e = era(DJANGO_BACKENDS);
    const r = await validateChain(chain(['js_tests/admin/actions.test.js'], ['tests/admin_changelist/tests.py']), { pr1: e, pr2: e }, deps);
    expect(r.chain.excluded).toMatchObject({ reason: 'pr1_no_tests', detail: expect.stringMatching(/touched no test file the django runner runs: js_tests\/admin\/actions\.test\.js$/) });
  });

  it('with PostGIS among the backends, a chain with gis_tests runs there only, each PR with the files that backend runs', () => {
    const e = era([...DJANGO_BACKENDS, 'postgis']);
    const plan = chainOnBackends(chain(['tests/admin_views/tests.py', 'js_tests/admin/core.test.js'], ['tests/gis_tests/geoapp/tests.py', 'tests/admin_views/tests.py']), { pr1: e, pr2: e });
    expect(plan.kind === 'runs' && plan.on.map((b) => [b.backend, b.chain.pr1_test_files, b.chain.anticipation_test_files])).toEqual([
      ['sqlite', ['tests/admin_views/tests.py'], ['tests/admin_views/tests.py']],
      ['postgresql', ['tests/admin_views/tests.py'], ['tests/admin_views/tests.py']],
      ['mysql', ['tests/admin_views/tests.py'], ['tests/admin_views/tests.py']],
      ['postgis', ['tests/admin_views/tests.py'], ['tests/gis_tests/geoapp/tests.py', 'tests/admin_views/tests.py']],
    ]);
    const gisOnly = chainOnBackends(chain(['tests/admin_views/tests.py'], ['tests/gis_tests/geoapp/tests.py']), { pr1: e, pr2: e });
    expect(gisOnly.kind === 'runs' && gisOnly.on.map((b) => b.backend)).toEqual(['postgis']);
  });
});

describe('ChainWork.run: a chain whose tests run nowhere here is excluded from its recipes alone, before any era is chosen', () => {
  let repo: GitRepo;
  let dataRoot: string;
  afterAll(async () => {
    await repo?.remove();
    if (dataRoot) await rm(dataRoot, { recursive: true, force: true });
  });
  it("a Django chain whose PR1 touched only js_tests: pr1_no_tests, Docker never touched, no image built", async () => {
    repo = await gitRepo();
    const files = { 'setup.cfg': '[metadata]\nname = Django\nclassifiers =\n    Programming Language :: Python :: 3.11\n', 'tests/runtests.py': '' };
    const pr1 = await repo.commit({ files: { ...files, 'django/contrib/admin/static/actions.js': 'x\n', 'js_tests/admin/actions.test.js': 'test()\n' }, message: 'Fixed #1 -- admin actions', date: day(1) });
    const pr2 = await repo.commit({ files: { 'django/contrib/admin/static/actions.js': 'y\n', 'tests/admin_views/tests.py': 'x = 1\n' }, message: 'Fixed #2 -- admin actions again', date: day(2) });
    dataRoot = await mkdtemp(join(tmpdir(), 'foresight-runs-nothing-'));
    // Any use of Docker (an image lookup or build, a container) throws.
    const untouchedDocker = new Proxy({}, { get: (_, key) => { throw new Error(`Docker was touched (${String(key)})`); } }) as Docker;
    const config = loadConfig({ FORESIGHT_OFFLINE: '1', FORESIGHT_ATTRIBUTION: 'off' });
    const work = await ChainWork.open({
      repo: { name: 'django/django', clone: repo.dir }, repoDir: join(dataRoot, 'django__django'), validate: config.validate, discover: config.discover,
      sourceSettings: {}, images: config.images, packages: packageSources(config, NO_SECRETS), docker: untouchedDocker, log: silentLogger, poolSize: 1,
    });
    const chain = ExtractedChainSchema.parse(validatedChain({ pr1_head: pr1, pr2_head: pr2, pr1_test_files: ['js_tests/admin/actions.test.js'], anticipation_test_files: ['tests/admin_views/tests.py'] }));
    const out = await work.run(chain, new AbortController().signal);
    expect(out.chain.excluded).toMatchObject({ reason: 'pr1_no_tests', stage: 'validate', detail: expect.stringMatching(/touched no test file the django runner runs: js_tests\/admin\/actions\.test\.js$/) });
    expect(out).toMatchObject({ stateRuns: 0, imagesBuilt: [] });
    expect(out.chain.runner).toBe('django');
    expect(work.usedImages.size).toBe(0);
    await work.close();
  });
});
