/**
 * File names that are not UTF-8 (a Latin-1 "caf\xe9"), from discover through emit on a generated history,
 * with real Docker (validate's states, emit's eval image and gold self-check) and the offline judges:
 *  - #1 adds a source data file data/caf\xe9.txt its code reads and a test fixture tests/fixtures/caf\xe9.txt
 *    its tests read; #2 fixes #1's code. Both names reach PR1's patch and test patch (C-quoted, as git
 *    writes them), which apply at pr1_base to the same bytes; validate overlays the fixture at pr1_base (a
 *    test reading it is PASS_TO_PASS); the grading bundle carries it and lays it into a container under its bytes.
 *  - #3 adds tests/test_na\xefve.py, a test module whose test ids would name it: the chain #3 -> #4 is
 *    excluded (test_path_not_utf8), the detail naming the file C-quoted.
 * Then, without Docker, grading's harness restore (runners/harness.py) on such names: a protected fixture the
 * agent changed is put back and reported under its stored name.
 */
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectDocker, DEFAULT_BASE_ALIAS, ensureImage, GradingBundleSchema, isDockerReachable } from '../../core/env/index.ts';
import { HARNESS_PY, testDirsOf } from '../../core/env/container/grade-steps.ts';
import { makeTar } from '../../core/env/container/tar.ts';
import { readJsonl, stageDir } from '../../core/foundation/artifacts.ts';
import { loadConfig } from '../../core/foundation/config.ts';
import { pathBytes, pathText, readBlob } from '../../core/foundation/git.ts';
import { silentLogger } from '../../core/foundation/log.ts';
import { ExtractedChainSchema } from '../../core/foundation/model/extracted.ts';
import { splitPatch } from '../../core/extract/split-patch.ts';
import { mainlineFiles } from '../../core/history/mainline.ts';
import { readRows } from '../../pipeline/eval/index.ts';
import { runPipeline } from '../../pipeline/pipeline.ts';
import { gitRepo, type GitRepo } from '../helpers/git-repo.ts';

const run = promisify(execFile);
const docker = connectDocker();
const dockerUp = await isDockerReachable(docker);
const skip = !dockerUp && !process.env['CI'];
if (skip) console.warn('[non-utf8-paths.test] SKIPPED: Docker is not reachable and CI is unset');

const day = (n: number): string => `2024-06-${String(n).padStart(2, '0')}T12:00:00Z`;
/** A name's bytes: Latin-1, one byte per character ("caf\xe9" is c a f 0xE9). */
const raw = (name: string): Buffer => Buffer.from(name, 'latin1');
const SOURCE = raw('data/caf\xe9.txt');
const FIXTURE = raw('tests/fixtures/caf\xe9.txt');
const MODULE = raw('tests/test_na\xefve.py');
// As git writes them in a diff, and as the pipeline stores them.
const SOURCE_Q = '"data/caf\\351.txt"';
const FIXTURE_Q = '"tests/fixtures/caf\\351.txt"';
const MODULE_Q = '"tests/test_na\\357ve.py"';

const GREET = (strip: boolean) => `import os

HERE = os.path.dirname(os.path.abspath(__file__)).encode()


def greeting(name):
    with open(os.path.join(HERE, b"data", b"caf\\xe9.txt"), "rb") as f:
        word = f.read().decode("utf-8").strip()
    return word + ", " + ${strip ? 'name.strip()' : 'name'} + "!"
`;
const GREET_TESTS = `import os

FIXTURE = os.path.join(os.path.dirname(os.path.abspath(__file__)).encode(), b"fixtures", b"caf\\xe9.txt")


def expected_word():
    with open(FIXTURE, "rb") as f:
        return f.read().decode("utf-8").strip()


def test_fixture_is_there():
    assert expected_word() == "bonjour"


def test_greeting():
    from greet import greeting
    assert greeting("Ann") == expected_word() + ", Ann!"
`;
const GREET_TESTS_2 = `${GREET_TESTS}

def test_greeting_strips_name():
    from greet import greeting
    assert greeting(" Ann ") == expected_word() + ", Ann!"
`;
const SHOUT = (none: boolean) => `def shout(s):\n    return ${none ? '(s or "")' : 's'}.upper()\n`;
const SHOUT_TESTS = (none: boolean) => `from shout import shout\n\n\ndef test_shout():\n    assert shout("a") == "A"\n${none ? '\n\ndef test_none():\n    assert shout(None) == ""\n' : ''}`;

/** Write files whose names are bytes (what the helper's string paths cannot name), then commit everything. */
async function commitRaw(repo: GitRepo, files: Array<[Buffer, string]>, spec: Parameters<GitRepo['commit']>[0]): Promise<string> {
  for (const [name, content] of files) {
    const abs = Buffer.concat([Buffer.from(`${repo.dir}/`), name]);
    await mkdir(abs.subarray(0, abs.lastIndexOf(0x2f)), { recursive: true });
    await writeFile(abs, content);
  }
  return repo.commit(spec);
}

async function history(): Promise<{ repo: GitRepo; pr1Base: string; pr1Head: string }> {
  const repo = await gitRepo();
  // The root conftest.py puts the work tree on sys.path (pytest's rootdir insertion).
  const pr1Base = await repo.commit({ files: { 'README.md': 'greetings\n', 'conftest.py': '' }, message: 'Initial commit', date: day(1) });
  const pr1Head = await commitRaw(repo, [[SOURCE, 'bonjour\n'], [FIXTURE, 'bonjour\n']], {
    files: { 'greet.py': GREET(false), 'tests/test_greet.py': GREET_TESTS },
    message: 'Add a greeting (#1)',
    date: day(2),
  });
  await repo.commit({ files: { 'greet.py': GREET(true), 'tests/test_greet.py': GREET_TESTS_2 }, message: 'Fix greeting keeping spaces around names (#2)', date: day(3) });
  await commitRaw(repo, [[MODULE, SHOUT_TESTS(false)]], { files: { 'shout.py': SHOUT(false) }, message: 'Add shout (#3)', date: day(4) });
  await commitRaw(repo, [[MODULE, SHOUT_TESTS(true)]], { files: { 'shout.py': SHOUT(true) }, message: 'Fix shout crashing on None (#4)', date: day(5) });
  return { repo, pr1Base, pr1Head };
}

interface Row {
  instance_id: string;
  patch: string;
  test_patch: string;
  pr1_test_files: string;
  PASS_TO_PASS: string;
  FAIL_TO_PASS: string;
  grading_bundle: string | null;
  exclusion_reason?: string | null;
  exclusion_detail?: string | null;
}

describe.skipIf(skip)('trial: a file whose name is not UTF-8 (caf\\xe9) added by PR1 no longer vanishes from its patch: patch, test lists and grading bundle keep it', () => {
  let repo: GitRepo;
  let pr1Base: string;
  let pr1Head: string;
  let dataRoot: string;
  let scratch: string;
  let test: Row[];
  let funnel: Row[];
  const hf = (): string => join(dataRoot, 'gen__cafe', 'emit', 'hf');

  beforeAll(async () => {
    await ensureImage(DEFAULT_BASE_ALIAS, { docker });
    ({ repo, pr1Base, pr1Head } = await history());
    dataRoot = await mkdtemp(join(tmpdir(), 'foresight-non-utf8-'));
    scratch = await mkdtemp(join(tmpdir(), 'foresight-non-utf8-scratch-'));
    // The whole pipeline, offline judges; one run per state and no bisection: not what this is about.
    const config = loadConfig({ FORESIGHT_OFFLINE: '1', FORESIGHT_IMAGE: DEFAULT_BASE_ALIAS, FORESIGHT_RUNS: '1', FORESIGHT_ATTRIBUTION: 'off' });
    await runPipeline({ dataRoot, repo: { name: 'gen/cafe', clone: repo.dir }, config, log: silentLogger });
    const read = async (split: string): Promise<Row[]> =>
      (await readFile(join(hf(), 'jsonl', `${split}.jsonl`), 'utf8')).split('\n').filter(Boolean).map((l) => JSON.parse(l) as Row);
    test = await read('test');
    funnel = await read('funnel');
  }, 600_000);
  afterAll(async () => {
    await repo?.remove();
    for (const d of [dataRoot, scratch]) if (d) await rm(d, { recursive: true, force: true });
  });

  it('git lists the names as bytes; the pipeline stores them C-quoted and reads them back', async () => {
    const files = await mainlineFiles(repo.dir, 'HEAD');
    expect(files.get(pr1Head)?.sort()).toEqual([SOURCE_Q, 'greet.py', FIXTURE_Q, 'tests/test_greet.py'].sort());
    expect(pathText(SOURCE)).toBe(SOURCE_Q);
    expect(pathBytes(FIXTURE_Q).equals(FIXTURE)).toBe(true);
    expect(await readBlob(repo.dir, pr1Head, FIXTURE_Q)).toEqual(Buffer.from('bonjour\n'));
    const split = await splitPatch(repo.dir, pr1Base, pr1Head);
    expect(split.source).toContain(`diff --git "a/data/caf\\351.txt" "b/data/caf\\351.txt"`);
    expect(split.tests).toContain(`diff --git "a/tests/fixtures/caf\\351.txt" "b/tests/fixtures/caf\\351.txt"`);
    expect(split.overlayFiles.sort()).toEqual([FIXTURE_Q, 'tests/test_greet.py']);
    expect(split.testFiles).toEqual(['tests/test_greet.py']);
  });

  it("PR1's emitted patch and test patch name both files and apply at pr1_base to their bytes", async () => {
    const row = test.find((r) => r.instance_id === 'cafe__1-2');
    expect(row, `test rows: ${test.map((r) => r.instance_id).join(', ')}; funnel: ${JSON.stringify(funnel.map((r) => [r.instance_id, r.exclusion_reason, r.exclusion_detail]))}`).toBeDefined();
    expect(row!.patch).toContain(`+++ "b/data/caf\\351.txt"`);
    expect(row!.test_patch).toContain(`+++ "b/tests/fixtures/caf\\351.txt"`);
    // What `git diff --stat` lists between the same commits, the patches hold: none is dropped.
    const stat = (await repo.git(['diff', '--name-only', pr1Base, pr1Head])).split('\n').filter(Boolean).sort();
    const inPatches = [...`${row!.patch}${row!.test_patch}`.matchAll(/^diff --git (?:"a\/(.*?)"|a\/(\S+)) /gm)].map((m) => (m[1] !== undefined ? `"${m[1]}"` : m[2]!)).sort();
    expect(inPatches).toEqual(stat);
    // A fresh work tree at pr1_base: both patches apply and write the files' bytes under their bytes.
    const tree = join(scratch, 'pr1-base');
    await repo.git(['worktree', 'add', '--quiet', '--detach', tree, pr1Base]);
    await writeFile(join(scratch, 'patch.diff'), row!.patch);
    await writeFile(join(scratch, 'test.diff'), row!.test_patch);
    await run('git', ['apply', join(scratch, 'patch.diff'), join(scratch, 'test.diff')], { cwd: tree });
    for (const name of [SOURCE, FIXTURE]) {
      expect((await readFile(Buffer.concat([Buffer.from(`${tree}/`), name]))).equals((await readBlob(repo.dir, pr1Head, pathText(name)))!)).toBe(true);
    }
  });

  it('the test lists carry the fixture: extract overlays it, validate laid it at pr1_base (its test is PASS_TO_PASS)', async () => {
    const extracted = await readJsonl(join(stageDir(dataRoot, 'gen/cafe', 'extract'), 'items.jsonl'), ExtractedChainSchema);
    const chain = extracted.find((c) => c.instance_id === 'cafe__1-2')!;
    expect(chain.pr1_overlay_files.sort()).toEqual([FIXTURE_Q, 'tests/test_greet.py']);
    const row = test.find((r) => r.instance_id === 'cafe__1-2')!;
    expect(JSON.parse(row.pr1_test_files)).toEqual(['tests/test_greet.py']);
    expect(JSON.parse(row.FAIL_TO_PASS)).toEqual(['tests/test_greet.py::test_greeting']);
    // Read at S1 from the overlaid fixture: without it the test would fail there and be FAIL_TO_PASS.
    expect(JSON.parse(row.PASS_TO_PASS)).toEqual(['tests/test_greet.py::test_fixture_is_there']);
  });

  it("the eval rows' grading bundle holds the fixture and lays it into a tar under its bytes, byte-exact", async () => {
    // As `foresight eval` reads the split (the bundle parsed by GradingBundleSchema); emit's gold self-check
    // already graded the row in Docker from this bundle (the row is in `test`: X = 100 %).
    const { rows } = await readRows(hf(), 'test');
    const bundle = GradingBundleSchema.parse(rows.find((r) => r.instance_id === 'cafe__1-2')!.grading_bundle);
    const fixture = bundle.x.files.find((f) => f.path === FIXTURE_Q);
    expect(fixture).toMatchObject({ encoding: 'utf8', content: 'bonjour\n' });
    const tar = join(scratch, 'bundle.tar');
    await writeFile(tar, await makeTar(bundle.x.files.map((f) => ({ path: f.path, content: Buffer.from(f.content, 'utf8') })), { uid: 0, gid: 0 }));
    const out = join(scratch, 'laid');
    await mkdir(out);
    await run('tar', ['-x', '--no-same-owner', '-C', out, '-f', tar]);
    expect(await readFile(Buffer.concat([Buffer.from(`${out}/`), FIXTURE]), 'utf8')).toBe('bonjour\n');
  });

  it('a test module whose name is not UTF-8 excludes its chain (test_path_not_utf8), naming the file C-quoted', () => {
    const row = funnel.find((r) => r.instance_id === 'cafe__3-4');
    expect(row, funnel.map((r) => r.instance_id).join(', ')).toBeDefined();
    expect(row!.exclusion_reason).toBe('test_path_not_utf8');
    expect(row!.exclusion_detail).toBe(`extract: PR #3's test file ${MODULE_Q} has a name that is not UTF-8`);
    expect(JSON.parse(row!.pr1_test_files)).toEqual([MODULE_Q]);
    expect(test.map((r) => r.instance_id)).not.toContain('cafe__3-4');
  });
});

describe('trial: a file named caf\\xe9 (not UTF-8) in the grading bundle, tampered with by the patch graded (harness restore, no Docker)', () => {
  it('the protected fixture is reset, a new file beside it removed, both reported C-quoted', async () => {
    const repo = await gitRepo();
    try {
      await commitRaw(repo, [[FIXTURE, 'bonjour\n']], { files: { 'README.md': 'x\n' }, message: 'base', date: day(1) });
      // The agent's work tree: the fixture rewritten, a new file in the test folder.
      const abs = (name: Buffer): Buffer => Buffer.concat([Buffer.from(`${repo.dir}/`), name]);
      await writeFile(abs(FIXTURE), 'hello\n');
      await writeFile(abs(raw('tests/fixtures/na\xefve.txt')), 'new\n');
      const spec = { gold: 'HEAD', whole: [], sections: [], newFiles: [], plugins: false, testDirs: testDirsOf([FIXTURE_Q]), protect: [FIXTURE_Q] };
      expect(spec.testDirs).toEqual(['tests']);
      const { stdout } = await run('python3', ['-I', '-c', HARNESS_PY, JSON.stringify(spec)], { cwd: repo.dir });
      expect(JSON.parse(stdout)).toEqual({
        changes: [
          { path: FIXTURE_Q, action: 'reset' },
          { path: '"tests/fixtures/na\\357ve.txt"', action: 'removed' },
        ],
      });
      expect(await readFile(abs(FIXTURE), 'utf8')).toBe('bonjour\n');
    } finally {
      await repo.remove();
    }
  });
});

describe('trial: a file whose name is not UTF-8 is stored as git quotes it, and every byte comes back', () => {
  it("pathText writes git's own C-quoted form for a name holding every byte; pathBytes reads it back; UTF-8 names stay themselves", async () => {
    const repo = await gitRepo();
    try {
      const every = Buffer.from(Array.from({ length: 255 }, (_, i) => i + 1).filter((b) => b !== 0x2f));
      await commitRaw(repo, [[every, 'x\n']], { message: 'every byte', date: day(1) });
      const listed = (await repo.git(['-c', 'core.quotePath=true', 'ls-files'])).replace(/\n$/, '');
      expect(pathText(every)).toBe(listed);
      expect(pathBytes(listed).equals(every)).toBe(true);
      // Valid UTF-8 is itself; one starting with a quote is quoted, so that no stored name is ambiguous.
      expect(pathText(Buffer.from('tests/grüße.py'))).toBe('tests/grüße.py');
      expect(pathText(Buffer.from('"q".py'))).toBe('"\\"q\\".py"');
      expect(pathBytes('"\\"q\\".py"').toString()).toBe('"q".py');
      expect(() => pathBytes('"unterminated')).toThrow(/malformed quoted file name/);
    } finally {
      await repo.remove();
    }
  });
});
