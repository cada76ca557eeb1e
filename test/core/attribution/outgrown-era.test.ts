/**
 * A commit that outgrew its era's environment: from some commit on, the code imports a name an
 * installed package of the era's first install candidate lacks (here pip's vendored `tomli`, which
 * bullseye's pip 20.3 has not; Django's 2021-06..10 commits and asgiref's ThreadSensitiveContext in
 * Debian's 3.3.1 are the real case). Its runs crash before any test on Python 3.9; the era's next
 * candidate (Python 3.11) is chosen for those commits and remembered, and the bisection finds the inducer
 * inside the stretch, where it used to skip every commit. Real Docker, a generated history, a detected recipe.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bisectInducer, EraPool, type EraImage } from '../../../core/attribution/index.ts';
import { applyCachePolicy, ChainEnvPool, CHOICE_FILE, connectDocker, DEFAULT_BASE_ALIAS, DEFAULT_LIMITS, eraEnvironment, EnvImages, isDockerReachable, openChainEnv, outgrownEnvironment, type ChoiceFile, type EnvironmentOptions, type StateRun } from '../../../core/env/index.ts';
import { loadConfig } from '../../../core/foundation/config.ts';
import { validateChain } from '../../../stages/validate/validate-states.ts';
import { validatedChain } from '../../helpers/chain-fixture.ts';
import { getRunner } from '../../../core/env/index.ts';
import { absoluteGitDir } from '../../../core/foundation/git.ts';
import { listChanges } from '../../../core/history/changes.ts';
import { silentLogger } from '../../../core/foundation/log.ts';
import { gitRepo, type GitRepo } from '../../helpers/git-repo.ts';

const docker = connectDocker();
const reachable = await isDockerReachable(docker);
const skip = !reachable && !process.env['CI'];
if (skip) console.warn('[outgrown-era.test] SKIPPED: Docker is not reachable and CI is unset');

const pytest = getRunner('pytest');

function run(kind: 'report' | 'no_report', outputTail: string, parsed: Partial<StateRun['parsed']> = {}, exitCode = 1): StateRun {
  const p = { tests: {}, collectionErrors: [], ...parsed };
  return kind === 'report' ? { kind, exitCode, durationMs: 1, parsed: p, outputTail } : { kind, why: 'missing', exitCode, durationMs: 1, parsed: p, outputTail };
}

const ASGIREF = "ImportError: cannot import name 'ThreadSensitiveContext' from 'asgiref.sync' (/usr/lib/python3/dist-packages/asgiref/sync.py)";

describe('outgrownEnvironment: a run that shows the commit needs another environment', () => {
  it("Django's crash on bullseye's asgiref, and a test module that cannot import a name from the venv's site-packages", () => {
    expect(outgrownEnvironment(run('no_report', `Traceback (most recent call last):\n  File "tests/runtests.py", line 27\n${ASGIREF}\n`), pytest.exitCodes)).toBe(ASGIREF);
    const collect = "E   ImportError: cannot import name 'tomli' from 'pip._vendor' (/opt/venv/lib/python3.9/site-packages/pip/_vendor/__init__.py)";
    expect(outgrownEnvironment(run('report', `${collect}\n`, { collectionErrors: ['tests/test_text.py'] }, 2), pytest.exitCodes)).toMatch(/^ImportError: cannot import name 'tomli'/);
  });

  it('never a repository module, a run that is evidence, or a timeout', () => {
    const own = "ImportError: cannot import name 'slugify' from 'text' (/tmp/testbed/text.py)";
    expect(outgrownEnvironment(run('no_report', own), pytest.exitCodes)).toBeNull();
    // A test that fails on the import inside its body ran: that is a failing test (evidence), not the environment.
    expect(outgrownEnvironment(run('report', ASGIREF, { tests: { 't.py::a': 'fail' } }), pytest.exitCodes)).toBeNull();
    expect(outgrownEnvironment({ kind: 'timeout', exitCode: null, durationMs: 1, parsed: { tests: {}, collectionErrors: [] }, outputTail: ASGIREF }, pytest.exitCodes)).toBeNull();
  });
});

const day = (n: number): string => `2021-02-${String(n).padStart(2, '0')}T12:00:00Z`;
const GUARDED = "def slugify(s):\n    if s is None:\n        return ''\n    return '-'.join(s.lower().split())\n";
const PLAIN = "def slugify(s):\n    return '-'.join(s.lower().split())\n";
// bullseye's pip 20.3 vendors `toml`; pip 21.2+ (bookworm's 23) vendors `tomli`.
const TOMLI = 'from pip._vendor import tomli  # noqa: F401 (a newer dependency)\n\n\n';
const TESTS = "from text import slugify\n\n\ndef test_slugify():\n    assert slugify('A b') == 'a-b'\n";
const TESTS_FIX = `${TESTS}\n\ndef test_none():\n    assert slugify(None) == ''\n`;
const TITLE = (fixed: boolean) => `\n\ndef titlecase(s):\n    return s.title() if s else ${fixed ? "''" : 'None'}\n`;
const TESTS_TITLE = "import text\n\n\ndef test_slugify_kept():\n    assert text.slugify('A') == 'a'\n\n\ndef test_titlecase():\n    assert text.titlecase('a b') == 'A B'\n";
const TESTS_TITLE_FIX = `${TESTS_TITLE}\n\ndef test_empty():\n    assert text.titlecase('') == ''\n`;

describe.skipIf(skip)('an era whose later commits outgrew its first install candidate (Docker, a detected recipe)', () => {
  let repo: GitRepo;
  let dataDir: string;
  let opts: EnvironmentOptions;
  const shas: string[] = [];
  const made = new Set<string>();

  beforeAll(async () => {
    repo = await gitRepo();
    dataDir = await mkdtemp(join(tmpdir(), 'foresight-outgrown-'));
    // Names no Python and dates from before Python 3.10: 3.9 (bullseye) is the era's first candidate.
    const steps: Array<{ title: string; files: Record<string, string> }> = [
      { title: 'Add slugify', files: { 'setup.py': "from setuptools import setup\n\nsetup(name='slug', version='0.1', py_modules=['text'])\n", 'conftest.py': '', 'text.py': GUARDED, 'tests/test_text.py': TESTS } },
      { title: 'Add a changelog', files: { 'CHANGELOG.md': '- slugify\n' } },
      { title: 'Read settings with the vendored TOML parser', files: { 'text.py': TOMLI + GUARDED } },
      { title: 'Add a readme', files: { 'README.md': 'slug\n' } },
      { title: 'Simplify slugify', files: { 'text.py': TOMLI + PLAIN } },
      { title: 'Note the simplification', files: { 'CHANGELOG.md': '- slugify\n- simpler\n' } },
      { title: 'Fix slugify crashing on None', files: { 'text.py': TOMLI + GUARDED, 'tests/test_text.py': TESTS_FIX } },
      { title: 'Add titlecase', files: { 'text.py': TOMLI + GUARDED + TITLE(false), 'tests/test_title.py': TESTS_TITLE } },
      { title: 'Fix titlecase of empty strings', files: { 'text.py': TOMLI + GUARDED + TITLE(true), 'tests/test_title.py': TESTS_TITLE_FIX } },
    ];
    await repo.commit({ files: { 'LICENSE': 'MIT\n' }, message: 'Initial commit', date: day(1) });
    for (const [i, s] of steps.entries()) shas.push(await repo.commit({ files: s.files, message: `${s.title} (#${i + 1})`, date: day(i + 2) }));
    opts = {
      repo: 'gen/outgrown', clone: repo.dir, gitDir: await absoluteGitDir(repo.dir), repoDir: join(dataDir, 'gen__outgrown'), log: silentLogger,
      images: new EnvImages({ docker }), image: null, runner: 'pytest', signal: new AbortController().signal, limits: { runTimeoutSec: 120 },
    };
  }, 120_000);
  afterAll(async () => {
    if (made.size) await applyCachePolicy('base', { used: [...made] });
    await repo?.remove();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  /** The pool of a bisection; `fallback: false` is the code before: the era's first candidate, whatever a run shows. */
  const pool = (fallback: boolean): EraPool =>
    new EraPool({
      eraOf: async (commit, without): Promise<EraImage> => {
        const era = await eraEnvironment(opts, commit, undefined, fallback ? without : []);
        if (era.kind === 'broken') return era;
        made.add(era.image);
        return { kind: 'ready', image: era.image, runner: era.runner, env: era.recipe.env, ...(fallback && era.label !== undefined ? { label: era.label } : {}) };
      },
      open: ({ image, runner, env }) => openChainEnv({ gitDir: opts.gitDir, docker, image, runner, env: env ?? {} }),
    });

  const bisect = async (fallback: boolean) => {
    const { mainline, changes } = await listChanges(repo.dir, { branch: 'main', units: 'auto', tracker: 'auto' });
    const p = pool(fallback);
    try {
      const res = await bisectInducer({
        mainline,
        changes,
        fix: { baseSha: shas[5]!, headSha: shas[6]! },
        failToPass: ['tests/test_text.py::test_none'],
        testFiles: ['tests/test_text.py'],
        // Blame's candidate: the changelog, whose parent (#1) passes on 3.9.
        candidates: [shas[1]!],
        envFor: p.envFor,
      });
      const probes = res.steps.map((s) => `#${shas.indexOf(s.commit) + 1}:${s.role}:${s.outcome}${s.outcome === 'skip' ? `(${s.reason})` : ''}`);
      console.log(`[outgrown-era] fallback ${fallback}: ${res.kind}; ${probes.join(' ')}; cost ${JSON.stringify(res.cost)}`);
      return res;
    } finally {
      await p.close();
    }
  };

  it('the commits from #3 on run on the next candidate, remembered as an era of their own, and the bisection finds #5 inside the stretch', async () => {
    // The era is first chosen where its tests run on 3.9 (#1 changed them): checked there, trustworthy.
    const first = await eraEnvironment(opts, shas[0]!);
    expect(first).toMatchObject({ kind: 'ready', label: 'py3.9 .' });

    const before = await bisect(false);
    // Before: every commit of the stretch crashed on 3.9 (skips), so the inducer could not be told apart.
    expect(before.kind).not.toBe('found');
    expect(before.steps.filter((s) => s.outcome === 'skip').length).toBeGreaterThan(0);

    const res = await bisect(true);
    const at = (sha: string) => res.steps.filter((s) => s.commit === sha).map((s) => s.outcome);
    expect(res).toMatchObject({ kind: 'found', commit: shas[4], good: shas[3] });
    expect(res.steps.every((s) => s.outcome !== 'skip')).toBe(true);
    expect(at(shas[3]!)).toContain('good');

    const file = JSON.parse(await readFile(join(opts.repoDir, CHOICE_FILE), 'utf8')) as ChoiceFile;
    const eras = Object.values(file.eras).map((e) => ({ chosen: e.chosen, at: shas.indexOf(e.commit) + 1 }));
    // The era of the whole history (chosen at #1) and the one of the commits that outgrew it: Python 3.11,
    // its no-isolation twin on 3.9 not built (it installs the same packages).
    expect(eras).toContainEqual({ chosen: 'py3.9 .', at: 1 });
    const later = eras.find((e) => e.chosen !== 'py3.9 .');
    expect(later?.chosen).toBe('py3.11 .');
    expect(later!.at).toBeGreaterThanOrEqual(3);
    expect(Object.keys(file.eras)).toHaveLength(2);
  }, 900_000);

  it("validate: a chain whose states crash on the era's first candidate is validated on the next, and its row names that image", async () => {
    // #8 adds titlecase with its test, #9 fixes it for empty strings: both after the stretch began.
    const [pr1Base, pr1Head, pr2Head] = [shas[6]!, shas[7]!, shas[8]!];
    const chain = validatedChain({
      instance_id: 'gen__outgrown__8-9', pr1_base: pr1Base, pr1_head: pr1Head, pr2_base: pr1Head, pr2_head: pr2Head,
      pr1_test_files: ['tests/test_title.py'], pr1_overlay_files: ['tests/test_title.py'],
      anticipation_test_files: ['tests/test_title.py'], anticipation_overlay_files: ['tests/test_title.py'],
    });
    // The era's choice is made at #1 (where 3.9 runs its tests), and so is 3.9 here, where the module cannot even import.
    await eraEnvironment(opts, shas[0]!);
    const era = await eraEnvironment(opts, pr1Head, chain.pr1_test_files);
    expect(era).toMatchObject({ kind: 'ready', label: 'py3.9 .' });
    const cfg = loadConfig({ FORESIGHT_RUNS: '1' }).validate;
    const pool = new ChainEnvPool(docker, 1);
    const signal = new AbortController().signal;
    try {
      const asked: string[][] = [];
      const { chain: v } = await validateChain(chain, { pr1: era, pr2: era }, {
        cfg,
        containers: { docker, pool, gitDir: opts.gitDir, limits: { ...DEFAULT_LIMITS, runTimeoutSec: 120 }, baseAlias: DEFAULT_BASE_ALIAS, lockDir: null, repoDir: opts.repoDir, log: silentLogger, signal },
        eraWithout: async (commit, files, without) => {
          asked.push([...without]);
          return eraEnvironment(opts, commit, files, without);
        },
      });
      // PR1's era moves when S1 crashes, PR2's (another head) when S4 does.
      expect(asked).toEqual([['py3.9 .'], ['py3.9 .']]);
      expect(v.excluded).toBeNull();
      expect(v.FAIL_TO_PASS).toEqual(['tests/test_title.py::test_titlecase']);
      expect(v.PR2_FAIL_TO_PASS).toEqual(['tests/test_title.py::test_empty']);
      expect(v.env_image_pr1).not.toBe(era.kind === 'ready' ? era.image : null);
      const next = await eraEnvironment(opts, pr1Head, chain.pr1_test_files, ['py3.9 .']);
      expect(next).toMatchObject({ kind: 'ready', label: 'py3.11 .' });
      expect(v.env_image_pr1).toBe(next.kind === 'ready' ? next.image : null);
      expect(v.env_image_pr2).toBe(v.env_image_pr1);
    } finally {
      await pool.close();
    }
  }, 900_000);
});
