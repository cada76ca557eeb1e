/**
 * Execution-confirmed attribution wired into validate, through real Docker on a history the test
 * generates (squash-merged PRs "Title (#N)"), mined by discover, szz, extract and validate as `make mine` does:
 *  - #5 fixes the default timeout; blame names #1, which wrote the fixed line, but #3 renamed the constant
 *    it looks up: the bisection lands on #3, the chain moves to #3, is re-extracted (its own test file) and
 *    validated again, and its sets are #3's;
 *  - #7 fixes retries() that #6 brought in: its tests cannot import before #6 and fail from it, so the
 *    bisection confirms blame's #6.
 * One container for the whole run (one explicit image: the bookworm base has pytest; a root conftest.py puts
 * the work tree on sys.path).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../core/foundation/config.ts';
import { connectDocker, DEFAULT_BASE_ALIAS, ensureImage, isDockerReachable } from '../../../core/env/index.ts';
import type { ValidatedChain } from '../../../core/foundation/model/validated.ts';
import { validateStage } from '../../../stages/validate/index.ts';
import { mineValidated } from '../../helpers/mine-validated.ts';
import { gitRepo, type GitRepo } from '../../helpers/git-repo.ts';

const docker = connectDocker();
const dockerUp = await isDockerReachable(docker);
const skip = !dockerUp && !process.env['CI'];
if (skip) console.warn('[attribution-docker.test] SKIPPED: Docker is not reachable and CI is unset');

const day = (n: number): string => `2024-03-${String(n).padStart(2, '0')}T12:00:00Z`;
const CLIENT_V1 = "import config\n\n\ndef setting(opts, name):\n    return opts.get(name, getattr(config, 'DEFAULT_' + name.upper(), None))\n";
const CLIENT_V2 = "import config\n\n\ndef setting(opts, name):\n    defaults = {'timeout': config.TIMEOUT_SECONDS, 'retries': config.DEFAULT_RETRIES}\n    return opts.get(name, defaults.get(name))\n";
const RETRIES = (fixed: boolean) => `\n\ndef retries(opts):\n    return opts.get('retries', ${fixed ? 'config.DEFAULT_RETRIES' : '0'})\n`;
const TEST_CLIENT_V1 = "from client import setting\n\n\ndef test_explicit():\n    assert setting({'timeout': 5}, 'timeout') == 5\n";
const TEST_CLIENT_V2 = `${TEST_CLIENT_V1}\n\ndef test_default_timeout():\n    assert setting({}, 'timeout') == 30\n`;
const TEST_RETRIES = (withDefault: boolean) =>
  `from client import retries\n\n\ndef test_retries_explicit():\n    assert retries({'retries': 5}) == 5\n${withDefault ? "\n\ndef test_retries_default():\n    assert retries({}) == 3\n" : ''}`;

async function history(): Promise<GitRepo> {
  const repo = await gitRepo();
  const prs: Array<{ title: string; files: Record<string, string> }> = [
    { title: 'Add client settings', files: { 'config.py': 'DEFAULT_TIMEOUT = 30\nDEFAULT_RETRIES = 3\n', 'client.py': CLIENT_V1, 'tests/test_client.py': TEST_CLIENT_V1 } },
    { title: 'Add a changelog', files: { 'CHANGELOG.md': '- settings\n' } },
    {
      title: 'Rename the timeout constant',
      files: {
        'config.py': 'TIMEOUT_SECONDS = 30\nDEFAULT_RETRIES = 3\n',
        'tests/test_config.py': 'import config\n\n\ndef test_timeout_seconds():\n    assert config.TIMEOUT_SECONDS == 30\n\n\ndef test_retries():\n    assert config.DEFAULT_RETRIES == 3\n',
      },
    },
    { title: 'Tidy the readme', files: { 'README.md': 'demo client\n' } },
    { title: 'Fix the default timeout being lost', files: { 'client.py': CLIENT_V2, 'tests/test_client.py': TEST_CLIENT_V2 } },
    { title: 'Add a retries helper', files: { 'client.py': CLIENT_V2 + RETRIES(false), 'tests/test_retries.py': TEST_RETRIES(false) } },
    { title: 'Fix retries ignoring the configured default', files: { 'client.py': CLIENT_V2 + RETRIES(true), 'tests/test_retries.py': TEST_RETRIES(true) } },
  ];
  // The root conftest.py puts the work tree on sys.path at every commit (pytest's rootdir insertion).
  await repo.commit({ files: { 'README.md': 'demo\n', 'conftest.py': '' }, message: 'Initial commit', date: day(1) });
  for (const [i, pr] of prs.entries()) await repo.commit({ files: pr.files, message: `${pr.title} (#${i + 1})`, date: day(i + 2) });
  return repo;
}

describe.skipIf(skip)('validate: execution-confirmed attribution (Docker, a generated history)', () => {
  let repo: GitRepo;
  let dataRoot: string;
  let chains: ValidatedChain[];
  beforeAll(async () => {
    await ensureImage(DEFAULT_BASE_ALIAS, { docker });
    repo = await history();
    dataRoot = await mkdtemp(join(tmpdir(), 'foresight-attribution-'));
    chains = await mineValidated(repo.dir, dataRoot, 'gen/attr');
  }, 600_000);
  afterAll(async () => {
    await repo?.remove();
    if (dataRoot) await rm(dataRoot, { recursive: true, force: true });
  });

  it("moves #5's chain from blame's #1 to #3, which renamed the constant, re-extracted and validated for #3", () => {
    const c = chains.find((x) => x.pr2.id === '5')!;
    expect(c.szz.candidates[0]?.change).toBe('1');
    expect(c.pr1.id).toBe('3');
    expect(c.instance_id).toMatch(/__3-5$/);
    expect(c.attribution).toMatchObject({ decision: 'attributed', method: 'execution', change: '3', execution: 'found', moved_from: '1', disagreements: [{ source: 'blame', change: '1' }] });
    // At most six probes, and two more repeating the found commit's parent before #3 is believed.
    expect(c.attribution!.steps.length).toBeLessThanOrEqual(8);
    expect(c.attribution!.steps.filter((s) => s.role === 'confirm')).toHaveLength(2);
    // Re-extracted for #3: its own test file and base, and the sets of #3's states.
    expect(c.pr1_test_files).toEqual(['tests/test_config.py']);
    expect(c.pr1_base).toBe(c.pr1.baseSha);
    expect(c.FAIL_TO_PASS).toEqual(['tests/test_config.py::test_timeout_seconds']);
    expect(c.PASS_TO_PASS).toEqual(['tests/test_config.py::test_retries']);
    expect(c.ANTICIPATION_FAIL_TO_PASS).toEqual(['tests/test_client.py::test_default_timeout']);
    expect(c.excluded).toBeNull();
    expect(c.gradeable).toBe(true);
  });

  it("confirms blame's #6 for #7: its tests cannot import before #6 and fail from it", () => {
    const c = chains.find((x) => x.pr2.id === '7')!;
    expect(c.pr1.id).toBe('6');
    expect(c.attribution).toMatchObject({ decision: 'attributed', method: 'execution+blame', change: '6', execution: 'introduced', moved_from: null, disagreements: [] });
    // #6 is PR2's base (the bad end); #5 cannot import the tests, nor can anything probed further back: with the
    // bad end next to the skip there is nothing to halve, and the window's points stop at the history's start.
    expect(c.attribution!.steps.map((s) => `${s.role}:${s.outcome}${s.reason ? `(${s.reason})` : ''}`)).toEqual(['bad_end:bad', ...Array(4).fill('good_end:skip(import_error)')]);
    // The bad end is validate's S4, not run again.
    expect(c.attribution!.steps[0]).toMatchObject({ role: 'bad_end', reused: true, seconds: 0 });
    // Each skip ran twice: #7's whole test module, then #7's test changes laid on the commit's own module (which does not import either).
    expect(c.attribution!.cost).toMatchObject({ runs: 8 });
  });

});

describe('validate: the attribution setting', () => {
  it('is on by default, FORESIGHT_ATTRIBUTION=off turns it off, and it is part of validate\'s cache key', () => {
    const on = loadConfig({});
    const off = loadConfig({ FORESIGHT_ATTRIBUTION: 'off' });
    expect(on.validate.attribution).toBe('execution');
    expect(off.validate.attribution).toBe('off');
    expect(() => loadConfig({ FORESIGHT_ATTRIBUTION: 'bisect' })).toThrow(/FORESIGHT_ATTRIBUTION/);
    expect(JSON.stringify(validateStage.config(on))).not.toBe(JSON.stringify(validateStage.config(off)));
    // With it on, validate reads the history as discover lists it: the branch is in its key.
    expect(JSON.stringify(validateStage.config(on))).not.toBe(JSON.stringify(validateStage.config(loadConfig({ FORESIGHT_BRANCH: 'dev' }))));
    // The bisection's budget is in the key with attribution on, and out of it with attribution off (unread).
    const budget = { FORESIGHT_BISECT_GOOD_END_PROBES: '20', FORESIGHT_BISECT_MAX_PROBES: '32' };
    expect(JSON.stringify(validateStage.config(on))).not.toBe(JSON.stringify(validateStage.config(loadConfig(budget))));
    expect(JSON.stringify(validateStage.config(off))).toBe(JSON.stringify(validateStage.config(loadConfig({ ...budget, FORESIGHT_ATTRIBUTION: 'off' }))));
  });
});
