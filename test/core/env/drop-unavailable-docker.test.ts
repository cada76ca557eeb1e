/**
 * Requirements the machine cannot provide, on a generated history mined end to end with real Docker and the
 * offline pip sources (no recipe file: detected candidates, offline judges). Like sqlfluff 2.0, the project
 * has a setup.py only (a legacy editable install keeps its metadata in the work tree) and reads its own
 * version from its metadata; its dependencies name two packages no offline index has
 * (`nonexistent-devtool-xyz==1.0`, `nonexistent-othertool-abc`: sqlfluff's `diff-cover`, `chardet` off 3.11)
 * and a pin no offline version satisfies (`iniconfig<0.0.1`: sqlfluff's `click<=8.3.0`), so every detected
 * install fails, and pip names only one of them at a time:
 *  - #1 → #2: their tests do not import the missing ones: the candidate is built again without all of them
 *    (one retry at most to learn them all) and with the pin dropped, its runner runs PR1's tests, and the
 *    chain reaches a `test` row; the drops are in env-recipes.json and in the row's install command.
 *  - #3 → #4: their tests import one: it is never left out, and the chain is env_failed_pr1 naming it (the
 *    era chosen for #1 leaves it out, so it is passed over for #3's tests, not run).
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHOICE_FILE, connectDocker, DEFAULT_BASE_ALIAS, ensureImage, isDockerReachable, type ChoiceFile } from '../../../core/env/index.ts';
import { loadConfig } from '../../../core/foundation/config.ts';
import { silentLogger } from '../../../core/foundation/log.ts';
import { runPipeline } from '../../../pipeline/pipeline.ts';
import { gitRepo, type GitRepo } from '../../helpers/git-repo.ts';

const docker = connectDocker();
const dockerUp = await isDockerReachable(docker);
const skip = !dockerUp && !process.env['CI'];
if (skip) console.warn('[drop-unavailable-docker.test] SKIPPED: Docker is not reachable and CI is unset');

const MISSING = 'nonexistent-devtool-xyz';
const OTHER = 'nonexistent-othertool-abc';
const day = (n: number): string => `2024-05-${String(n).padStart(2, '0')}T12:00:00Z`;
/** New dependency files each run: the builds really build. */
const NONCE = randomBytes(6).toString('hex');
// Python 3.11 only: two detected candidates (`.` and its no-isolation twin), no other base image.
const SETUP_PY = `from setuptools import setup

setup(
    name="dropkit",
    version="0.1.0",
    description="foresight drop test ${NONCE}",
    python_requires=">=3.11,<3.12",
    packages=["dropkit"],
    install_requires=["${MISSING}==1.0", "${OTHER}", "iniconfig<0.0.1"],
)
`;
// The project's version from its installed metadata (sqlfluff's __init__): no metadata, no import.
const INIT = 'import importlib.metadata\n\n__version__ = importlib.metadata.version("dropkit")\n';

const WORDS = (fixed: boolean) => `def count(text):\n    return len(text.split(${fixed ? '' : '" "'}))\n`;
// A test older than the PRs in their test file: it passes at pr1_base and pr1_head (PASS_TO_PASS).
const PACKAGE_TEST = 'import dropkit\n\n\ndef test_package():\n    assert dropkit.__version__ == "0.1.0"\n';
const WORD_TESTS = (fixed: boolean) =>
  `${PACKAGE_TEST}\n\ndef test_count():\n    from dropkit.words import count\n    assert count("a b") == 2\n${fixed ? '\n\ndef test_repeated_spaces():\n    from dropkit.words import count\n    assert count("a  b") == 2\n' : ''}`;
const SENTENCES = (fixed: boolean) => `def sentences(text):\n    return [s.strip() for s in text.split(".")${fixed ? ' if s.strip()' : ''}]\n`;
const SENTENCE_TESTS = (fixed: boolean) =>
  `import nonexistent_devtool_xyz\nfrom dropkit.sentences import sentences\n\n\ndef test_split():\n    assert sentences("a. b")[:2] == ["a", "b"]\n${fixed ? '\n\ndef test_trailing_dot():\n    assert sentences("a.") == ["a"]\n' : ''}`;

async function history(): Promise<GitRepo> {
  const repo = await gitRepo();
  const files = { 'README.md': 'dropkit\n', 'setup.py': SETUP_PY, 'dropkit/__init__.py': INIT, 'tests/test_words.py': PACKAGE_TEST };
  await repo.commit({ files, message: 'Initial commit', date: day(1) });
  const prs: Array<{ title: string; files: Record<string, string> }> = [
    { title: 'Add word counting', files: { 'dropkit/words.py': WORDS(false), 'tests/test_words.py': WORD_TESTS(false) } },
    { title: 'Fix word counting of repeated spaces', files: { 'dropkit/words.py': WORDS(true), 'tests/test_words.py': WORD_TESTS(true) } },
    { title: 'Add sentence splitting', files: { 'dropkit/sentences.py': SENTENCES(false), 'tests/test_sentences.py': SENTENCE_TESTS(false) } },
    { title: 'Fix sentence splitting returning an empty sentence after a trailing dot', files: { 'dropkit/sentences.py': SENTENCES(true), 'tests/test_sentences.py': SENTENCE_TESTS(true) } },
  ];
  for (const [i, pr] of prs.entries()) await repo.commit({ files: pr.files, message: `${pr.title} (#${i + 1})`, date: day(i + 2) });
  return repo;
}

interface Row {
  instance_id: string;
  install_cmd: string;
  FAIL_TO_PASS: string;
  PASS_TO_PASS: string;
  exclusion_reason?: string | null;
  exclusion_detail?: string | null;
}

describe.skipIf(skip)('a requirement the offline wheels lack, left out only when the tests do not import it (Docker, a generated history)', () => {
  let repo: GitRepo;
  let dataRoot: string;
  let test: Row[];
  let verified: Row[];
  let eras: ChoiceFile['eras'][string][];

  beforeAll(async () => {
    await ensureImage(DEFAULT_BASE_ALIAS, { docker });
    repo = await history();
    dataRoot = await mkdtemp(join(tmpdir(), 'foresight-drop-'));
    // Detected recipes (no FORESIGHT_IMAGE), offline judges, one run per state, no bisection; the run's env images removed at its end.
    const config = loadConfig({ FORESIGHT_OFFLINE: '1', FORESIGHT_RUNS: '1', FORESIGHT_ATTRIBUTION: 'off', FORESIGHT_IMAGE_CACHE: 'base' });
    await runPipeline({ dataRoot, repo: { name: 'gen/dropkit', clone: repo.dir }, config, log: silentLogger });
    const read = async (split: string): Promise<Row[]> =>
      (await readFile(join(dataRoot, 'gen__dropkit', 'emit', 'hf', 'jsonl', `${split}.jsonl`), 'utf8')).split('\n').filter(Boolean).map((l) => JSON.parse(l) as Row);
    test = await read('test');
    verified = await read('funnel');
    eras = Object.values((JSON.parse(await readFile(join(dataRoot, 'gen__dropkit', CHOICE_FILE), 'utf8')) as ChoiceFile).eras);
  }, 600_000);
  afterAll(async () => {
    await repo?.remove();
    if (dataRoot) await rm(dataRoot, { recursive: true, force: true });
  });

  it('#1 -> #2: every detected install fails on the requirement; without it the tests run and the chain is a test row', () => {
    const why = JSON.stringify(verified.map((r) => [r.instance_id, r.exclusion_reason, r.exclusion_detail]));
    const row = test.find((r) => r.instance_id === 'dropkit__1-2');
    expect(row, `test rows: ${test.map((r) => r.instance_id).join(', ')}; verified: ${why}`).toBeDefined();
    expect(JSON.parse(row!.FAIL_TO_PASS)).toEqual(['tests/test_words.py::test_count']);
    expect(JSON.parse(row!.PASS_TO_PASS)).toEqual(['tests/test_words.py::test_package']);
    // The row's install command is the one that left them out.
    expect(row!.install_cmd).toContain('pip install --no-deps -e .');
    expect(row!.install_cmd).toMatch(new RegExp(`'(${MISSING},${OTHER}|${OTHER},${MISSING})' iniconfig > /tmp/foresight-reqs\\.txt`));
  });

  it("env-recipes.json records the failed candidate with pip's error, at most one retry that names the rest, the final retry, what it dropped and its check", () => {
    const era = eras.find((e) => e.tried.some((t) => t.outcome === 'chosen' && t.from === 'py3.11 .'));
    expect(era, JSON.stringify(eras, null, 1)).toBeDefined();
    // The detected candidate and its retries (its no-isolation twin may follow them).
    const [failed, ...retries] = era!.tried.filter((t) => t.label === 'py3.11 .' || t.from === 'py3.11 .');
    expect(failed).toMatchObject({ label: 'py3.11 .', outcome: 'rejected', stage: 'install' });
    // pip's own error line, with the retry it led to.
    expect(failed!.reason).toMatch(new RegExp(`^ERROR: No matching distribution found for (${MISSING}==1\\.0|${OTHER}|iniconfig<0\\.0\\.1) \\(retried with`));
    expect(retries.length, JSON.stringify(era!.tried, null, 1)).toBeLessThanOrEqual(2);
    for (const r of retries.slice(0, -1)) {
      expect(r).toMatchObject({ outcome: 'rejected', stage: 'install', from: 'py3.11 .' });
      expect(r.reason).toMatch(/^ERROR: No matching distribution found for /);
    }
    const chosen = retries.at(-1)!;
    expect(chosen).toMatchObject({ outcome: 'chosen', from: 'py3.11 .', unpinned: ['iniconfig'] });
    expect(chosen.label).toMatch(new RegExp(`^py3\\.11 \\. without (${MISSING}, ${OTHER}|${OTHER}, ${MISSING}); iniconfig unpinned$`));
    expect([...chosen.dropped!].sort()).toEqual([MISSING, OTHER].sort());
    // The project's metadata outlives the runner's clean checkout: dropkit imports, both tests run.
    expect(chosen.check).toMatch(/^trustworthy: 2 tests ran \(2 passed/);
  });

  it('#3 -> #4: their tests import it, so it is never left out: env_failed_pr1 naming the requirement and the import', () => {
    const row = verified.find((r) => r.instance_id === 'dropkit__3-4');
    expect(row, verified.map((r) => r.instance_id).join(', ')).toBeDefined();
    expect(row!.exclusion_reason).toBe('env_failed_pr1');
    expect(row!.exclusion_detail).toContain(`not left out: ${MISSING} is needed: tests/test_sentences.py:1 imports nonexistent_devtool_xyz`);
    expect(test.map((r) => r.instance_id)).not.toContain('dropkit__3-4');
    // The era #1 chose leaves it out: for #3's tests it was passed over (an era of its own), and no candidate left kept it.
    const own = eras.find((e) => e.chosen === null && e.tried.some((t) => t.label === 'py3.11 no-isolation .'));
    expect(own, JSON.stringify(eras, null, 1)).toBeDefined();
    const first = eras.find((e) => e.chosen?.startsWith('py3.11 . without'))!.chosen!;
    expect(own!.tried.map((t) => t.label)).not.toContain(first);
  });
});
