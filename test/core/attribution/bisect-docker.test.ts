/**
 * Execution-confirmed attribution through real Docker, on histories the test generates (PRs squashed as
 * "Title (#N)" or merged from a branch): a bug induced by a deletion, one induced by a rename, and one
 * whose fixed line was last touched by a refactor after the inducer. In each, blame alone (stages/szz's
 * pick) names the wrong PR and the bisection names the inducer; a commit whose test module cannot import
 * is skipped, never blamed; where PR2's whole module cannot import, its test changes are laid over the
 * commit's own module (its patch, or where that conflicts, its changed test definitions), and so are they
where PR2's whole support module crashes Django's runner (a Django-like history). Then the demo repository: a bug born with its PR (#3 -> #8) is confirmed, and
 * one a direct commit caused (-> #10) is unattributed. One container per history (the bookworm base
 * image has pytest; PYTHONPATH points at the work tree).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bisectInducer, decideAttribution, EraPool, type BisectResult } from '../../../core/attribution/index.ts';
import { connectDocker, DEFAULT_BASE_ALIAS, ensureImage, getRunner, isDockerReachable, openChainEnv } from '../../../core/env/index.ts';
import { git } from '../../../core/foundation/git.ts';
import { commitToChange, listChanges } from '../../../core/history/changes.ts';
import { positions } from '../../../core/history/mainline.ts';
import type { Candidate } from '../../../core/foundation/model/candidate.ts';
import type { PullRequest } from '../../../core/foundation/model/change.ts';
import { attributeFix } from '../../../stages/szz/attribute.ts';
import { MetaChanges } from '../../../stages/szz/meta.ts';
import { pickIntroducer, toEvidence } from '../../../stages/szz/pick.ts';
import { makeDemoRepo } from '../../../pipeline/demo/make-demo-repo.ts';
import { djangoScaffold } from '../../helpers/django-like-repo.ts';
import { gitRepo, type GitRepo } from '../../helpers/git-repo.ts';

const docker = connectDocker();
const dockerUp = await isDockerReachable(docker);
const skip = !dockerUp && !process.env['CI'];
if (skip) console.warn('[bisect-docker.test] SKIPPED: Docker is not reachable and CI is unset');

const pytest = getRunner('pytest');
const django = getRunner('django');
const day = (n: number): string => `2024-03-${String(n).padStart(2, '0')}T12:00:00Z`;

/** One PR per step after an initial commit: squash-merged as "Title (#N)", or merged from a branch (`merge`). */
async function history(prs: Array<{ title: string; files?: Record<string, string>; delete?: string[]; merge?: boolean }>): Promise<GitRepo> {
  const repo = await gitRepo();
  await repo.commit({ files: { 'README.md': 'demo\n' }, message: 'Initial commit', date: day(1) });
  for (const [i, pr] of prs.entries()) {
    const change = { files: pr.files ?? {}, delete: pr.delete ?? [], date: day(i + 2) };
    if (!pr.merge) {
      await repo.commit({ ...change, message: `${pr.title} (#${i + 1})` });
      continue;
    }
    const branch = `dev/pr-${i + 1}`;
    await repo.git(['checkout', '-q', '-b', branch]);
    await repo.commit({ ...change, message: pr.title });
    await repo.git(['checkout', '-q', 'main']);
    await repo.merge({ branch, message: `Merge pull request #${i + 1} from ${branch}\n\n${pr.title}`, date: change.date });
  }
  return repo;
}

interface Outcome {
  blame: string | null;
  result: BisectResult;
  decision: ReturnType<typeof decideAttribution>;
  /** Each probed commit (#N: PR N's commit, @i: the i-th first-parent commit of no change), in probe order, with its outcome. */
  probes: string[];
  /** Whether every commit blame named is a first-parent commit (false: a merged branch's commit). */
  blamedOnMainline: boolean;
}

/** One container per history: every commit runs in the bookworm base image with the work tree on PYTHONPATH (pytest), or Django's runner. */
function basePool(dir: string, runner = pytest): EraPool {
  return new EraPool({
    eraOf: async () => ({ kind: 'ready', image: DEFAULT_BASE_ALIAS, runner, ...(runner === pytest ? { env: { PYTHONPATH: '/tmp/testbed' } } : {}) }),
    open: (era) => openChainEnv({ gitDir: join(dir, '.git'), docker, ...era }),
  });
}

/** stages/szz's pick for PR2 (default: the last PR), then the bisection of its fail->pass tests in `pool` (default: a new container). */
async function attribute(
  repo: { dir: string },
  f2p: string[],
  testFiles: string[],
  opts: { pr2?: string; reference?: string; pool?: EraPool; transplant?: boolean; overlayFiles?: string[] } = {},
): Promise<Outcome> {
  const { mainline, changes } = await listChanges(repo.dir, { branch: 'main', units: 'auto', tracker: 'auto' });
  const pr2 = opts.pr2 ? changes.find((c) => c.id === opts.pr2)! : changes[changes.length - 1]!;
  const byId = new Map<string, PullRequest>(changes.map((c) => [c.id, c]));
  const att = await attributeFix(repo.dir, pr2, { variant: 'foresight', meta: new MetaChanges(repo.dir) });
  const evidence = toEvidence(att, commitToChange(changes), pr2.id);
  const cand: Candidate = { repo: 'gen/bisect', tracker: 'github', pr2, references: [], signals: ['fix_keywords'], reportedAt: null, advisories: [], duplicates: [], excluded: null };
  const picked = pickIntroducer(cand, evidence, byId);
  const pool = opts.pool ?? basePool(repo.dir);
  try {
    const result = await bisectInducer({
      mainline,
      changes,
      fix: { baseSha: pr2.baseSha, headSha: pr2.mergeSha },
      failToPass: f2p,
      testFiles,
      ...(opts.overlayFiles ? { overlayFiles: opts.overlayFiles } : {}),
      // The blamed commits themselves: a merged PR's branch commit is mapped to its merge on the mainline.
      candidates: [...new Set(evidence.candidates.flatMap((c) => c.lines.map((l) => l.sha)))],
      envFor: pool.envFor,
      ...(opts.transplant === false ? { transplant: false } : {}),
    });
    const number = new Map(mainline.map((c, i) => [c.sha, String(i)]));
    const changeOf = commitToChange(changes);
    // A PR's commit as #N, a commit of no change by its first-parent index (@0: the initial commit).
    const name = (sha: string): string => (changeOf.has(sha) ? `#${changeOf.get(sha)}` : `@${number.get(sha)}`);
    const probes = result.steps.map((s) => `${name(s.commit)}:${s.outcome}${s.outcome === 'skip' ? `(${s.reason})` : ''}${s.transplanted ? '(transplanted)' : ''}`);
    const seconds = result.steps.map((s) => s.seconds.toFixed(1)).join(' ');
    const decision = decideAttribution({ bisect: result, changes, blame: evidence.candidates[0]?.change ?? null, reference: opts.reference ?? null, order: positions(mainline) });
    console.log(`[bisect-docker] ${pr2.title}: blame ${picked ? `#${picked.pr1.id}` : 'none'}, bisection ${result.kind}; probes ${probes.join(' ')}; seconds ${seconds}; cost ${JSON.stringify(result.cost)}`);
    const blamedOnMainline = evidence.candidates.every((c) => c.lines.every((l) => number.has(l.sha)));
    return { blame: picked?.pr1.id ?? null, result, decision, probes, blamedOnMainline };
  } finally {
    if (!opts.pool) await pool.close();
  }
}

// The slugify histories: #1 adds a guarded slugify with its tests, #2 (the inducer) drops the guard,
// #3 adds titlecase and rewrites the test module (`tests3`), #4 (PR2) restores the guard and adds its test.
const GUARDED = "def slugify(s):\n    if s is None:\n        return ''\n    return '-'.join(s.lower().split())\n";
const PLAIN = "def slugify(s):\n    return '-'.join(s.lower().split())\n";
const TITLECASE = "\n\ndef titlecase(s):\n    return s.title()\n";
const TESTS1 = "from text import slugify\n\n\ndef test_slugify():\n    assert slugify('A b') == 'a-b'\n\n\ndef test_slugify_spaces():\n    assert slugify(' a  b ') == 'a-b'\n";
function slugifyHistory(tests3: string, tests4: string): Promise<GitRepo> {
  return history([
    { title: 'Add slugify', files: { 'text.py': GUARDED, 'tests/test_text.py': TESTS1 } },
    { title: 'Simplify slugify', files: { 'text.py': PLAIN } },
    { title: 'Add titlecase', files: { 'text.py': PLAIN + TITLECASE, 'tests/test_text.py': tests3 } },
    { title: 'Fix slugify crashing on None', files: { 'text.py': GUARDED + TITLECASE, 'tests/test_text.py': tests4 } },
  ]);
}

// Concurrent: each history has its repository and container of its own, and a probe mostly waits on Docker.
describe.skipIf(skip).concurrent('execution-confirmed attribution (Docker, generated histories)', () => {
  const repos: GitRepo[] = [];
  beforeAll(async () => {
    await ensureImage(DEFAULT_BASE_ALIAS, { docker });
  }, 600_000);
  afterAll(async () => {
    await Promise.all(repos.map((r) => r.remove()));
  });

  it('deletion: #5 deletes the None guard greet relies on; blame names greet\'s author #1, bisection #5, stepping over #3 whose tests cannot import', async () => {
    const repo = await history([
      {
        title: 'Add text helpers',
        merge: true,
        files: {
          'textutil.py': "def normalize(s):\n    if s is None:\n        return ''\n    return ' '.join(s.split())\n",
          'greet.py': "from textutil import normalize\n\n\ndef greet(name):\n    return 'hello ' + normalize(name)\n",
          'tests/test_greet.py': "from greet import greet\n\n\ndef test_greet():\n    assert greet('  ann ') == 'hello ann'\n",
        },
      },
      { title: 'Document the helpers', files: { 'README.md': 'demo: greet and normalize\n' } },
      // Broken between #3 and #4: greet.py imports a package that is not there yet.
      { title: 'Move normalize into a package', files: { 'greet.py': "from text.normalize import normalize\n\n\ndef greet(name):\n    return 'hello ' + normalize(name)\n" }, delete: ['textutil.py'] },
      { title: 'Add the missing text package', files: { 'text/__init__.py': '', 'text/normalize.py': "def normalize(s):\n    if s is None:\n        return ''\n    return ' '.join(s.split())\n" } },
      { title: 'Simplify normalize', files: { 'text/normalize.py': "def normalize(s):\n    return ' '.join(s.split())\n" } },
      { title: 'Update the docs', files: { 'README.md': 'demo: greet, normalize\n' } },
      {
        title: 'Fix greet crashing on a missing name',
        files: {
          'greet.py': "from text.normalize import normalize\n\n\ndef greet(name):\n    if name is None:\n        return 'hello '\n    return 'hello ' + normalize(name)\n",
          'tests/test_greet.py': "from greet import greet\n\n\ndef test_greet():\n    assert greet('  ann ') == 'hello ann'\n\n\ndef test_greet_none():\n    assert greet(None) == 'hello '\n",
        },
      },
    ]);
    repos.push(repo);
    const out = await attribute(repo, ['tests/test_greet.py::test_greet_none'], ['tests/test_greet.py']);
    expect(out.blame).toBe('1');
    // #1 is a merged branch: blame names its branch commit, the bisection probes its merge commit.
    expect(out.blamedOnMainline).toBe(false);
    expect(out.result).toMatchObject({ kind: 'found' });
    expect(out.decision).toMatchObject({ kind: 'attributed', change: '5', method: 'execution', disagreements: [{ source: 'blame', change: '1' }] });
    // (d) the initial commit and #3 cannot import the test module: skipped, and #3 is not the answer;
    // the found commit's parent #4 passes twice more before #5 is believed.
    expect(out.probes).toEqual(['#6:bad', '@0:skip(import_error)', '#1:good', '#3:skip(import_error)', '#4:good', '#5:bad', '#4:good', '#4:good']);
    // One run per probe, and one more where the module does not import (the PR's test changes alone, laid
    // on the commit's own module, do not import either): never a rerun of the whole file.
    expect(out.result.cost).toMatchObject({ containers: 1, runs: 10 });
  }, 300_000);

  it('rename: #3 renames the constant the fixed line looks up by name; blame names the line\'s author #1, bisection #3', async () => {
    const repo = await history([
      {
        title: 'Add client settings',
        files: {
          'config.py': 'DEFAULT_TIMEOUT = 30\nDEFAULT_RETRIES = 3\n',
          'client.py': "import config\n\n\ndef setting(opts, name):\n    return opts.get(name, getattr(config, 'DEFAULT_' + name.upper(), None))\n",
          'tests/test_client.py': "from client import setting\n\n\ndef test_explicit():\n    assert setting({'timeout': 5}, 'timeout') == 5\n",
        },
      },
      { title: 'Add a changelog', files: { 'CHANGELOG.md': '- settings\n' } },
      { title: 'Rename the timeout constant', files: { 'config.py': 'TIMEOUT_SECONDS = 30\nDEFAULT_RETRIES = 3\n' } },
      { title: 'Tidy the readme', files: { 'README.md': 'demo client\n' } },
      {
        title: 'Fix the default timeout being lost',
        files: {
          'client.py': "import config\n\n\ndef setting(opts, name):\n    defaults = {'timeout': config.TIMEOUT_SECONDS, 'retries': config.DEFAULT_RETRIES}\n    return opts.get(name, defaults.get(name))\n",
          'tests/test_client.py':
            "from client import setting\n\n\ndef test_explicit():\n    assert setting({'timeout': 5}, 'timeout') == 5\n\n\ndef test_default_timeout():\n    assert setting({}, 'timeout') == 30\n",
        },
      },
    ]);
    repos.push(repo);
    const out = await attribute(repo, ['tests/test_client.py::test_default_timeout'], ['tests/test_client.py']);
    expect(out.blame).toBe('1');
    expect(out.decision).toMatchObject({ kind: 'attributed', change: '3', method: 'execution', disagreements: [{ source: 'blame', change: '1' }] });
    expect(out.probes).toEqual(['#4:bad', '@0:skip(import_error)', '#1:good', '#2:good', '#3:bad', '#2:good', '#2:good']);
    expect(out.result.cost).toMatchObject({ containers: 1, runs: 8 });
  }, 300_000);

  it('refactor: #3 rewrites the buggy line #2 wrote; blame names the refactor, bisection #2', async () => {
    const repo = await history([
      {
        title: 'Add order totals',
        files: {
          'orders.py': 'def total(prices, discount=0.0):\n    return round(sum(prices) * (1 - discount), 2)\n',
          'tests/test_orders.py': 'from orders import total\n\n\ndef test_total():\n    assert total([1.0, 2.0]) == 3.0\n',
        },
      },
      { title: 'Round totals for display', files: { 'orders.py': 'def total(prices, discount=0.0):\n    return round(sum(prices) * (1 - discount), 1)\n' } },
      {
        title: 'Refactor totals for readability',
        files: { 'orders.py': 'def total(prices, discount=0.0):\n    subtotal = sum(prices)\n    factor = 1 - discount\n    return round(subtotal * factor, 1)\n' },
      },
      { title: 'Document totals', files: { 'README.md': 'orders: total()\n' } },
      {
        title: 'Fix totals losing cents',
        files: {
          'orders.py': 'def total(prices, discount=0.0):\n    subtotal = sum(prices)\n    factor = 1 - discount\n    return round(subtotal * factor, 2)\n',
          'tests/test_orders.py': 'from orders import total\n\n\ndef test_total():\n    assert total([1.0, 2.0]) == 3.0\n\n\ndef test_total_cents():\n    assert total([1.23]) == 1.23\n',
        },
      },
    ]);
    repos.push(repo);
    const out = await attribute(repo, ['tests/test_orders.py::test_total_cents'], ['tests/test_orders.py']);
    expect(out.blame).toBe('3');
    expect(out.decision).toMatchObject({ kind: 'attributed', change: '2', method: 'execution', disagreements: [{ source: 'blame', change: '3' }] });
    // Before the refactor (#2) it already fails, so the search gallops back from there: #1 passes.
    expect(out.probes).toEqual(['#4:bad', '#2:bad', '#3:bad', '#1:good', '#1:good', '#1:good']);
    expect(out.result.cost).toMatchObject({ containers: 1, runs: 6 });
  }, 300_000);

  it('a test module that grew an import after the inducer: the whole module cannot import at #1, the PR\'s test changes laid on #1\'s own module pass there, and #2 is found, not #3 (where the module starts to import)', async () => {
    const tests3 = TESTS1.replace('import slugify\n', 'import slugify, titlecase\n') + "\n\ndef test_titlecase():\n    assert titlecase('a b') == 'A B'\n";
    const tests4 = tests3.replace("== 'a-b'\n\n\ndef test_slugify_spaces", "== 'a-b'\n\n\ndef test_slugify_none():\n    assert slugify(None) == ''\n\n\ndef test_slugify_spaces");
    const repo = await slugifyHistory(tests3, tests4);
    repos.push(repo);
    const f2p = ['tests/test_text.py::test_slugify_none'];
    const out = await attribute(repo, f2p, ['tests/test_text.py']);
    expect(out.decision).toMatchObject({ kind: 'attributed', change: '2' });
    expect(out.result).toMatchObject({ kind: 'found' });
    expect(out.probes).toContain('#1:good(transplanted)');
    expect(out.probes).toContain('#2:bad(transplanted)');
    // Without the transplant nothing runs before #3, PR2's base, where the module starts to import:
    // that boundary is no arrival blame does not name, and the search finds nothing.
    const whole = await attribute(repo, f2p, ['tests/test_text.py'], { transplant: false });
    expect(whole.result).toMatchObject({ kind: 'all_skipped' });
    expect(whole.decision).toMatchObject({ kind: 'attributed', change: '1', method: 'blame' });
  }, 300_000);

  it("a test module rewritten after the inducer: PR2's patch conflicts at #1 and #2, so the test it adds is laid over their own modules as a definition, and #2 is found", async () => {
    // #3 rewrites the module (parametrized, an import #1 and #2 lack); PR2 adds its test in the rewritten part.
    const tests3 =
      "import pytest\nfrom text import slugify, titlecase\n\n\n@pytest.mark.parametrize('s, want', [('A b', 'a-b'), (' a  b ', 'a-b')])\ndef test_slugify(s, want):\n    assert slugify(s) == want\n\n\ndef test_titlecase():\n    assert titlecase('a b') == 'A B'\n";
    const tests4 = tests3.replace("== want\n", "== want\n\n\ndef test_slugify_none():\n    assert slugify(None) == ''\n");
    const repo = await slugifyHistory(tests3, tests4);
    repos.push(repo);
    const out = await attribute(repo, ['tests/test_text.py::test_slugify_none'], ['tests/test_text.py']);
    expect(out.decision).toMatchObject({ kind: 'attributed', change: '2', method: 'execution' });
    expect(out.probes).toContain('#1:good(transplanted)');
    expect(out.probes).toContain('#2:bad(transplanted)');
  }, 300_000);

  it("PR2's whole module fails at #2 for another reason (an autouse fixture needs what #3 adds): #2 runs again as #1's transplanted pass ran, passes, and #3 is found, not #2", async () => {
    const tests2 = TESTS1.replace('import slugify\n', 'import slugify, titlecase\n') + "\n\ndef test_titlecase():\n    assert titlecase('a b') == 'A B'\n";
    const tests3 = `import pytest\nimport text\n${tests2}\n\n@pytest.fixture(autouse=True)\ndef _c_locale():\n    assert text.LOCALE == 'C'\n`;
    const tests4 = `${tests3}\n\ndef test_slugify_none():\n    assert slugify(None) == ''\n`;
    // Here #2 adds titlecase and #3 is the inducer (and adds LOCALE, which PR2's module's fixture needs).
    const repo = await history([
      { title: 'Add slugify', files: { 'text.py': GUARDED, 'tests/test_text.py': TESTS1 } },
      { title: 'Add titlecase', files: { 'text.py': GUARDED + TITLECASE, 'tests/test_text.py': tests2 } },
      { title: 'Simplify slugify, add LOCALE', files: { 'text.py': `LOCALE = 'C'\n\n\n${PLAIN}${TITLECASE}`, 'tests/test_text.py': tests3 } },
      { title: 'Fix slugify crashing on None', files: { 'text.py': `LOCALE = 'C'\n\n\n${GUARDED}${TITLECASE}`, 'tests/test_text.py': tests4 } },
    ]);
    repos.push(repo);
    const out = await attribute(repo, ['tests/test_text.py::test_slugify_none'], ['tests/test_text.py']);
    expect(out.result).toMatchObject({ kind: 'found' });
    expect(out.decision).toMatchObject({ kind: 'attributed', change: '3' });
    expect(out.probes).toContain('#1:good(transplanted)');
    // #2's whole-module failure is recorded as another failure; run as #1 ran, #2 passes (three times).
    expect(out.probes).toContain('#2:skip(other_failure)');
    expect(out.probes.filter((p) => p === '#2:good(transplanted)')).toHaveLength(3);
  }, 300_000);
});

describe.skipIf(skip).concurrent("execution-confirmed attribution (Docker, a Django-like history and Django's runner)", () => {
  const repos: GitRepo[] = [];
  beforeAll(async () => {
    await ensureImage(DEFAULT_BASE_ALIAS, { docker });
  }, 600_000);
  afterAll(async () => {
    await Promise.all(repos.map((r) => r.remove()));
  });

  // #1 adds add() with its None guard and a test app whose models use Field; #2 (the inducer) drops the
  // guard; #3 gives Field a `code` option and the app's model uses it; #4 (PR2) restores the guard, adds
  // its test and a model of its own. Before #3, PR2's whole models.py crashes Django's setup (it imports
  // every app's models before any test), as Django 3434dbd39d's did on `violation_error_code`.
  const CALC = (guarded: boolean): string => `def add(a, b):\n${guarded ? '    if b is None:\n        return a\n' : ''}    return a + b\n`;
  const FIELD = (code: boolean): string => `class Field:\n    def __init__(self, null=False${code ? ', code=None' : ''}):\n        self.null = null\n`;
  const MODELS = (code: boolean, extra: boolean): string =>
    `from django.db.fields import Field\n\n\nclass Item:\n    value = Field(${code ? 'code="v"' : ''})\n\n\nclass Other:\n    name = Field()\n${extra ? '\n\nclass Extra:\n    note = Field(null=True)\n' : ''}`;
  const TESTS = (none: boolean): string =>
    `from django.test import SimpleTestCase\nfrom django.utils.calc import add\n\n\nclass AddTests(SimpleTestCase):\n    def test_add(self):\n        self.assertEqual(add(2, 3), 5)\n${none ? '\n    def test_add_none(self):\n        self.assertEqual(add(2, None), 2)\n' : ''}`;

  it("PR2's whole models.py crashes the runner before #3: its changes laid on #1's and #2's own models run there, #1 passes and #2 is found", async () => {
    const repo = await history([
      {
        title: 'Add add',
        files: { ...djangoScaffold(), 'django/db/__init__.py': '', 'django/db/fields.py': FIELD(false), 'django/utils/calc.py': CALC(true), 'tests/calc/__init__.py': '', 'tests/calc/models.py': MODELS(false, false), 'tests/calc/tests.py': TESTS(false) },
      },
      { title: 'Simplify add', files: { 'django/utils/calc.py': CALC(false) } },
      { title: 'Add Field.code', files: { 'django/db/fields.py': FIELD(true), 'tests/calc/models.py': MODELS(true, false) } },
      { title: 'Fix add with None', files: { 'django/utils/calc.py': CALC(true), 'tests/calc/models.py': MODELS(true, true), 'tests/calc/tests.py': TESTS(true) } },
    ]);
    repos.push(repo);
    const f2p = ['test_add_none (calc.tests.AddTests)'];
    const pool = basePool(repo.dir, django);
    try {
      const out = await attribute(repo, f2p, ['tests/calc/tests.py'], { pool, overlayFiles: ['tests/calc/models.py'] });
      expect(out.result).toMatchObject({ kind: 'found' });
      expect(out.decision).toMatchObject({ kind: 'attributed', change: '2', method: expect.stringContaining('execution') });
      expect(out.probes).toContain('#1:good(transplanted)');
      expect(out.probes).toContain('#2:bad(transplanted)');
      // Laid over whole, PR2's models crash the runner at #1 and #2: nothing passes, nothing is found.
      const whole = await attribute(repo, f2p, ['tests/calc/tests.py'], { pool, overlayFiles: ['tests/calc/models.py'], transplant: false });
      expect(whole.result.kind).not.toBe('found');
      expect(whole.probes.filter((p) => p.startsWith('#1:') || p.startsWith('#2:')).every((p) => p.endsWith('skip(runner_crash)'))).toBe(true);
    } finally {
      await pool.close();
    }
  }, 300_000);
});

describe.skipIf(skip)('execution-confirmed attribution (Docker, the demo repository)', () => {
  let ws: { root: string; clone: string };
  let pool: EraPool;
  beforeAll(async () => {
    await ensureImage(DEFAULT_BASE_ALIAS, { docker });
    const root = await mkdtemp(join(tmpdir(), 'foresight-bisect-demo-'));
    ws = { root, clone: join(root, 'clone') };
    await makeDemoRepo(ws.clone);
    pool = basePool(ws.clone);
  }, 600_000);
  afterAll(async () => {
    await pool?.close();
    if (ws) await rm(ws.root, { recursive: true, force: true });
  });

  it('#8 fixes a bug parse_duration had from #3 on: its tests cannot import before #3 and fail from it, so execution confirms blame\'s #3', async () => {
    const out = await attribute({ dir: ws.clone }, ['tests/test_timeparse.py::test_parse_uppercase_units'], ['tests/test_timeparse.py'], { pr2: '8', pool });
    expect(out.blame).toBe('3');
    expect(out.result.kind).toBe('introduced');
    // #8's base (#7) fails; the commit before #3 (PR #2, docs) cannot import the tests; #3 fails; nothing older can import them.
    expect(out.probes.slice(0, 3)).toEqual(['#7:bad', '#2:skip(import_error)', '#3:bad']);
    expect(out.decision).toMatchObject({ kind: 'attributed', change: '3', method: 'execution+blame', disagreements: [] });
  }, 300_000);

  it('#10 fixes what a direct commit after #6 broke: the bisection lands on that commit, which belongs to no change: unattributed, not #6', async () => {
    const out = await attribute({ dir: ws.clone }, ['tests/test_numbers.py::test_clamp_keeps_floats'], ['tests/test_numbers.py'], { pr2: '10', reference: '6', pool });
    expect(out.result.kind).toBe('found');
    expect(out.decision).toMatchObject({ kind: 'unattributed' });
    const direct = (await git(ws.clone, ['log', '--format=%H', '--grep=clamp: return an int', 'main'])).trim();
    expect(out.decision.kind === 'unattributed' && out.decision.commit).toBe(direct);
    expect(out.decision.kind === 'unattributed' && out.decision.disagreements).toContainEqual({ source: 'reference', change: '6' });
    // Both bisections of the demo ran in one container.
    expect(pool.containers).toBe(1);
  }, 300_000);
});
