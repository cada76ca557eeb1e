/**
 * A feature chain whose PR1 tests crash the runner at pr1_base, through real Docker and Django's runner on a
 * Django-like history the test generates (squash-merged PRs "Title (#N)"), mined as `make mine` does:
 *  - #1 gives Field a `db_default` option, and its test app's models.py uses it: laid over pr1_base, that
 *    models.py crashes the runner while loading the app, before any test (as Django's own feature PRs do);
 *  - #2 fixes a falsy db_default being lost, with a test of its own.
 * Mined to the end once (detected recipe, offline judges, emit's eval image and gold self-check): S1 is decided
 * on the test app's base version, the chain is a row, FAIL_TO_PASS the test #1 adds, PASS_TO_PASS the base's own
 * tests that pass at both commits, and it is a `test` row. Then the same chain when the test app is new in #1
 * (no base version to run), mined through validate: pr1_base_crash.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectDocker, DEFAULT_BASE_ALIAS, ensureImage, isDockerReachable } from '../../../core/env/index.ts';
import { loadConfig, loadSecrets } from '../../../core/foundation/config.ts';
import { silentLogger } from '../../../core/foundation/log.ts';
import type { ValidatedChain } from '../../../core/foundation/model/validated.ts';
import { runPipeline } from '../../../pipeline/pipeline.ts';
import { djangoScaffold } from '../../helpers/django-like-repo.ts';
import { mineValidated, readValidated } from '../../helpers/mine-validated.ts';
import { gitRepo, type GitRepo } from '../../helpers/git-repo.ts';

const docker = connectDocker();
const dockerUp = await isDockerReachable(docker);
const skip = !dockerUp && !process.env['CI'];
if (skip) console.warn('[base-crash-docker.test] SKIPPED: Docker is not reachable and CI is unset');

const day = (n: number): string => `2024-06-${String(n).padStart(2, '0')}T12:00:00Z`;

/** django/db/fields.py: before #1 no db_default; #1 adds it and loses a falsy one; #2 keeps it. */
const FIELD = (v: 0 | 1 | 2): string =>
  [
    'class Field:',
    `    def __init__(self, null=False${v ? ', db_default=None' : ''}):`,
    '        self.null = null',
    ...(v ? ['        self.db_default = db_default'] : []),
    '',
    '    def to_python(self, value):',
    '        return None if value is None and self.null else value',
    ...(v ? ['', '    def get_default(self):', `        return self.db_default${v === 1 ? ' or None' : ''}`] : []),
    '',
  ].join('\n');
const MODELS = (dbDefault: boolean): string =>
  `from django.db.fields import Field\n\n\nclass Item:\n    name = Field(null=True)\n${dbDefault ? '    count = Field(db_default=5)\n' : ''}`;
const TESTS = (v: 0 | 1 | 2): string =>
  [
    'from django.db.fields import Field',
    'from django.test import SimpleTestCase',
    '',
    'from .models import Item',
    '',
    '',
    'class FieldTests(SimpleTestCase):',
    '    def test_null(self):',
    '        self.assertTrue(Item.name.null)',
    '',
    '    def test_to_python(self):',
    '        self.assertIsNone(Item.name.to_python(None))',
    ...(v ? ['', '    def test_db_default(self):', '        self.assertEqual(Item.count.get_default(), 5)'] : []),
    ...(v === 2 ? ['', '    def test_db_default_falsy(self):', '        self.assertEqual(Field(db_default=0).get_default(), 0)'] : []),
    '',
  ].join('\n');

/** `app`: the test app #1's tests live in (`defaults`, there before #1; `newapp`, added by #1). */
async function history(app: 'defaults' | 'newapp'): Promise<GitRepo> {
  const repo = await gitRepo();
  const base: Record<string, string> = { ...djangoScaffold(), 'django/db/__init__.py': '', 'django/db/fields.py': FIELD(0), 'tests/defaults/__init__.py': '', 'tests/defaults/models.py': MODELS(false), 'tests/defaults/tests.py': TESTS(0) };
  await repo.commit({ files: base, message: 'Initial commit', date: day(1) });
  const at = (f: string): string => `tests/${app}/${f}`;
  const pr1 = { 'django/db/fields.py': FIELD(1), [at('__init__.py')]: '', [at('models.py')]: MODELS(true), [at('tests.py')]: TESTS(1) };
  await repo.commit({ files: pr1, message: 'Add the db_default field option (#1)', date: day(2) });
  await repo.commit({ files: { 'django/db/fields.py': FIELD(2), [at('tests.py')]: TESTS(2) }, message: 'Fix Field.get_default() losing a falsy db_default (#2)', date: day(3) });
  return repo;
}

// Two runs: the repeats of S1 run the base version too. Attribution off: the bisection is not what this is about.
const mine = (repo: GitRepo, dataRoot: string, name: string): Promise<ValidatedChain[]> =>
  mineValidated(repo.dir, dataRoot, name, { FORESIGHT_RUNNER: 'django', FORESIGHT_RUNS: '2', FORESIGHT_ATTRIBUTION: 'off' });

// Concurrent: the two histories are mined side by side (each run mostly waits on its containers).
describe.skipIf(skip).concurrent("validate: PR1's test app uses a field option PR1 adds (Docker, Django's runner)", () => {
  const repos: GitRepo[] = [];
  let dataRoot: string;
  let defaults: Promise<string> | undefined;
  /**
   * The `defaults` history mined to the end once, as a user runs it (detected recipe, default judges): its data
   * root. The first two tests read its validated chain and its rows.
   */
  const minedDefaults = (): Promise<string> =>
    (defaults ??= (async () => {
      const repo = await history('defaults');
      repos.push(repo);
      const root = join(dataRoot, 'e2e');
      const env = { ...process.env, FORESIGHT_OFFLINE: '1', FORESIGHT_LLM_BASE_URL: '', FORESIGHT_JOBS: '1', FORESIGHT_RUNS: '2', FORESIGHT_ATTRIBUTION: 'off' };
      await runPipeline({ dataRoot: root, repo: { name: 'gen/basecrash', clone: repo.dir }, config: loadConfig(env), secrets: loadSecrets(env), log: silentLogger });
      return root;
    })());
  beforeAll(async () => {
    await ensureImage(DEFAULT_BASE_ALIAS, { docker });
    dataRoot = await mkdtemp(join(tmpdir(), 'foresight-base-crash-'));
  }, 600_000);
  afterAll(async () => {
    await Promise.all(repos.map((r) => r.remove()));
    if (dataRoot) await rm(dataRoot, { recursive: true, force: true });
  });

  it('S1 is decided on the base version of the test app: a row, FAIL_TO_PASS the test #1 adds, PASS_TO_PASS the base\'s own tests', async () => {
    const chains = await readValidated(await minedDefaults(), 'gen/basecrash');
    expect(chains.map((c) => [c.pr1.id, c.pr2.id])).toEqual([['1', '2']]);
    const c = chains[0]!;
    expect(c.runner).toBe('django');
    expect(c.pr1_overlay_files).toContain('tests/defaults/models.py');
    const s1 = c.states.find((s) => s.name === 'S1')!;
    // The overlaid models.py crashed the runner; S1 then ran the app's base version, twice.
    expect(s1.decidedBy).toMatchObject({ reason: 'base_version_after_overlay_crash', overlay: c.pr1_head, crash: expect.stringMatching(/unexpected keyword argument 'db_default'/) });
    expect(s1).toMatchObject({ checkout: c.pr1_base, overlay: null, outcome: { kind: 'ran' }, runs: 2 });
    expect(s1.tests).toEqual({ 'test_null (defaults.tests.FieldTests)': 'pass', 'test_to_python (defaults.tests.FieldTests)': 'pass' });
    expect(c).toMatchObject({
      excluded: null,
      gradeable: true,
      FAIL_TO_PASS: ['test_db_default (defaults.tests.FieldTests)'],
      PASS_TO_PASS: ['test_null (defaults.tests.FieldTests)', 'test_to_python (defaults.tests.FieldTests)'],
      ANTICIPATION_FAIL_TO_PASS: ['test_db_default_falsy (defaults.tests.FieldTests)'],
    });
  }, 600_000);

  it('mined to the end as a user runs it (detected recipe, default judges): a `test` row whose gold patch passes its self-check, and mining_evidence says how S1 was decided', async () => {
    const root = await minedDefaults();
    const rows = (await readFile(join(root, 'gen__basecrash', 'emit', 'hf', 'jsonl', 'test.jsonl'), 'utf8')).trim().split('\n').map((l) => JSON.parse(l) as Record<string, string>);
    expect(rows.map((r) => [r.instance_id, r.runner, JSON.parse(r.FAIL_TO_PASS!), JSON.parse(r.PASS_TO_PASS!)])).toEqual([
      ['basecrash__1-2', 'django', ['test_db_default (defaults.tests.FieldTests)'], ['test_null (defaults.tests.FieldTests)', 'test_to_python (defaults.tests.FieldTests)']],
    ]);
    expect(JSON.parse(rows[0]!.mining_evidence!)).toMatchObject({ s1_decided_by: { reason: 'base_version_after_overlay_crash', crash: expect.stringMatching(/db_default/) } });
  }, 900_000);

  it('with the test app new in #1 there is no base version to run: pr1_base_crash, quoting the crash', async () => {
    const repo = await history('newapp');
    repos.push(repo);
    const [c] = await mine(repo, dataRoot, 'gen/newapp');
    expect(c!.states.find((s) => s.name === 'S1')!.decidedBy?.reason).toBe('base_version_after_overlay_crash');
    expect(c!.excluded).toMatchObject({ reason: 'pr1_base_crash', stage: 'validate', detail: expect.stringMatching(/^S1: .*db_default.*; the base's own version of PR1's test files: /) });
  }, 600_000);
});
