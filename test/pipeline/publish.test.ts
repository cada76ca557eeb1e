/**
 * `foresight publish` through the real CLI against a local hub on 127.0.0.1
 * (test/helpers/fake-hub.ts): the demo is mined once, then published, raced, rate-limited, downloaded
 * back and loaded with the real `datasets` library; the gate is pinned by a test per refusal.
 */
import { REPO_ID_PLACEHOLDER, setCardRepoId, TEST_COLUMNS, VERIFIED_COLUMNS } from '../../stages/emit/index.ts';
import { writeParquet } from '../../stages/emit/write-parquet.ts';
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { copyFile, cp, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { downloadFile } from '@huggingface/hub';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contentFingerprint } from '../../core/foundation/artifacts.ts';
import { isDockerReachable } from '../../core/env/index.ts';
import { minedDemoCopy } from '../helpers/demo.ts';
import { closedPort, startConnectionRecorder, startFakeHub, type FakeHub } from '../helpers/fake-hub.ts';
import { gitRepo } from '../helpers/git-repo.ts';
import { pythonWithDatasets, runPython } from '../helpers/python.ts';

const ROOT = join(import.meta.dirname, '..', '..');

interface Cli {
  code: number;
  stdout: string;
  stderr: string;
}

/** Every output of the CLI in this file: HF_TOKEN must appear in none. */
const outputs: string[] = [];

function cli(args: string[], env: Record<string, string | undefined>, file = join(ROOT, 'node_modules/.bin/tsx'), pre = [join(ROOT, 'pipeline/bin.ts')]): Promise<Cli> {
  return new Promise((done) => {
    const full: NodeJS.ProcessEnv = { ...process.env, ...env };
    for (const [k, v] of Object.entries(env)) if (v === undefined) delete full[k];
    execFile(file, [...pre, ...args], { cwd: ROOT, env: full, maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) => {
      outputs.push(stdout, stderr);
      done({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stdout, stderr });
    });
  });
}

const dockerUp = await isDockerReachable();
if (!dockerUp && process.env.CI) throw new Error('Docker is not reachable: CI must run the publish test (run `make setup`)');

describe.skipIf(!dockerUp)('foresight publish: the demo dataset to a local hub, through the real CLI', () => {
  let data: string;
  let emitDir: string;
  let hf: string;
  let hub: FakeHub;
  let scratch: string;
  /** The files that must reach the hub, by repository path. */
  let expected: string[];
  let testIds: string[];
  let funnelRows: number;

  const env = (extra: Record<string, string | undefined> = {}) => ({ HF_ENDPOINT: hub.baseUrl, HF_TOKEN: hub.token, GITHUB_TOKEN: undefined, FORESIGHT_LLM_API_KEY: undefined, ...extra });
  const publish = (args: string[], extra: Record<string, string | undefined> = {}) => cli(['publish', ...args], env(extra));
  const writes = (from: number) => hub.requests.slice(from).filter((r) => r.method !== 'GET' && !r.path.endsWith('/preupload/main'));

  /** A copy of emit's folder (items.jsonl, manifest.json, hf/) to tamper with. */
  async function copyOfEmit(name: string): Promise<string> {
    const dir = join(scratch, name, 'emit');
    await cp(emitDir, dir, { recursive: true });
    return dir;
  }

  beforeAll(async () => {
    data = await minedDemoCopy();
    scratch = await mkdtemp(join(tmpdir(), 'foresight-publish-scratch-'));
    emitDir = join(data, 'demo__minilib', 'emit');
    hf = join(emitDir, 'hf');
    await pythonWithDatasets(); // the venv the product finds (FORESIGHT_PY_VENV, default .venv-test)
    hub = await startFakeHub();
    const list = async (sub: string, re: RegExp) => (await readdir(join(hf, sub)).catch(() => [])).filter((f) => re.test(f)).map((f) => `${sub}/${f}`);
    expected = ['README.md', ...(await list('data', /\.parquet$/)), ...(await list('verified', /\.parquet$/)), ...(await list('funnel', /\.parquet$/)), ...(await list('plots', /\.svg$/))].sort();
    expect(expected.filter((p) => p.endsWith('.parquet'))).toHaveLength(3);
    const jsonl = async (f: string) => (await readFile(join(hf, 'jsonl', f), 'utf8')).trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    testIds = (await jsonl('test.jsonl')).map((r) => String(r.instance_id));
    funnelRows = (await jsonl('funnel.jsonl')).length;
  }, 900_000);

  afterAll(async () => {
    await hub?.close();
    await rm(data, { recursive: true, force: true });
    await rm(scratch, { recursive: true, force: true });
  });

  it('creates the repository and exactly one commit holding exactly the expected files (parquet via LFS)', async () => {
    expect(testIds).toEqual(['minilib__1-9', 'minilib__3-8']);
    const res = await publish(['--repo-id', 'test/demo', '--dataset', hf]);
    expect(res.stderr).not.toContain('foresight:');
    expect(res.code).toBe(0);
    expect(res.stdout).toContain('create the dataset repository test/demo (public)');
    const repo = hub.repo('test/demo')!;
    expect(repo.commits.map((c) => c.title)).toEqual(['initial commit', expect.stringMatching(/^foresight .*: publish the dataset/)]);
    expect(repo.commits[1]!.parent).toBe(repo.commits[0]!.oid);
    const files = hub.headFiles('test/demo');
    expect([...files.keys()].sort()).toEqual(['.gitattributes', ...expected].sort());
    for (const path of expected) {
      // The card goes up naming the repository it is published under; every other file byte for byte.
      const local = path === 'README.md' ? Buffer.from(setCardRepoId(await readFile(join(hf, path), 'utf8'), 'test/demo')) : await readFile(join(hf, path));
      expect(files.get(path)!.content.equals(local), path).toBe(true);
      expect(files.get(path)!.lfs, path).toBe(path.endsWith('.parquet'));
    }
    const card = files.get('README.md')!.content.toString('utf8');
    expect(card).toContain('load_dataset("test/demo", split="test")');
    expect(card).not.toContain(REPO_ID_PLACEHOLDER);
    expect(hub.requests.filter((r) => r.method === 'POST' && r.path.includes('/commit/'))).toHaveLength(1);
    expect(res.stdout).toMatch(/left out: .*jsonl\//);
  }, 180_000);

  it('files downloaded back from the hub load with the real datasets library, through the card', async () => {
    const back = join(scratch, 'downloaded');
    for (const path of hub.headFiles('test/demo').keys()) {
      const blob = await downloadFile({ repo: { type: 'dataset', name: 'test/demo' }, path, hubUrl: hub.baseUrl, accessToken: hub.token });
      await mkdir(dirname(join(back, path)), { recursive: true });
      await writeFile(join(back, path), Buffer.from(await blob!.arrayBuffer()));
    }
    const out = await runPython(
      [
        'import json, sys, datasets',
        'test = datasets.load_dataset(sys.argv[1], split="test")',
        'ver = datasets.load_dataset(sys.argv[1], "verified", split="verified")',
        'fun = datasets.load_dataset(sys.argv[1], "funnel", split="funnel")',
        'print(json.dumps({"test": list(test["instance_id"]), "verified": list(ver["instance_id"]), "funnel": fun.num_rows}))',
      ].join('\n'),
      [back],
    );
    expect(JSON.parse(out.trim().split('\n').at(-1)!)).toEqual({ test: testIds, verified: testIds, funnel: funnelRows });
    expect(funnelRows).toBeGreaterThan(testIds.length);
  }, 180_000);

  it('a second publish of the same dataset commits nothing', async () => {
    const commits = hub.repo('test/demo')!.commits.length;
    const res = await publish(['--repo-id', 'test/demo', '--dataset', hf]);
    expect(res.code).toBe(0);
    expect(res.stdout).toContain('nothing to publish');
    expect(hub.repo('test/demo')!.commits).toHaveLength(commits);
  }, 180_000);

  it('a published config is never rewritten unless --replace names it; --tag tags the published revision', async () => {
    await publish(['--repo-id', 'test/demo-frozen', '--dataset', hf]);
    const before = hub.headFiles('test/demo-frozen').get('data/test-00000-of-00001.parquet')!.content;
    // The same dataset with one test row fewer: its test parquet differs from the published one.
    const dir = await copyOfEmit('rewrite');
    const rows = (await readFile(join(dir, 'hf', 'jsonl', 'test.jsonl'), 'utf8')).trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    await writeParquet(join(dir, 'hf', 'data', 'test-00000-of-00001.parquet'), TEST_COLUMNS, rows.slice(1));
    const commits = hub.repo('test/demo-frozen')!.commits.length;
    const refused = await publish(['--repo-id', 'test/demo-frozen', '--dataset', join(dir, 'hf'), '--tag', 'r2']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/publish refused: it would rewrite published config\(s\) test \(data\/test-00000-of-00001\.parquet\) on test\/demo-frozen/);
    expect(refused.stderr).toMatch(/--replace test/);
    expect(hub.repo('test/demo-frozen')!.commits).toHaveLength(commits);
    expect(hub.headFiles('test/demo-frozen').get('data/test-00000-of-00001.parquet')!.content.equals(before)).toBe(true);
    expect(hub.repo('test/demo-frozen')!.tags.size).toBe(0);

    const replaced = await publish(['--repo-id', 'test/demo-frozen', '--dataset', join(dir, 'hf'), '--replace', 'test', '--tag', 'r2']);
    expect(replaced.code, replaced.stderr).toBe(0);
    const repo = hub.repo('test/demo-frozen')!;
    expect(repo.commits).toHaveLength(commits + 1);
    expect(repo.tags.get('r2')).toEqual({ oid: repo.commits.at(-1)!.oid, message: 'foresight release r2' });
    expect(replaced.stdout).toContain(`tagged ${repo.commits.at(-1)!.oid} as r2`);
    // A tag is given once.
    const again = await publish(['--repo-id', 'test/demo-frozen', '--dataset', join(dir, 'hf'), '--tag', 'r2']);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/already has a tag r2/);
  }, 300_000);

  it('--dry-run --remote hub prints each operation with its size and storage, and changes nothing on the hub', async () => {
    const from = hub.requests.length;
    const fresh = await publish(['--repo-id', 'test/not-yet', '--dataset', hf, '--dry-run', '--remote', 'hub', '--private'], { HF_TOKEN: undefined });
    expect(fresh.code).toBe(0);
    expect(fresh.stdout).toContain('create the dataset repository test/not-yet (private)');
    for (const path of expected) {
      const size = path === 'README.md' ? Buffer.byteLength(setCardRepoId(await readFile(join(hf, path), 'utf8'), 'test/not-yet')) : (await readFile(join(hf, path))).length;
      expect(fresh.stdout).toMatch(new RegExp(`upload ${path.replace(/[.]/g, '\\.')}\\s+${size} bytes\\s+${path.endsWith('.parquet') ? 'LFS' : 'regular'}`));
    }
    expect(fresh.stdout).toContain('dry run: nothing was changed on the hub');
    // Someone else changed the repository: the dry run shows the delete and the parent it would commit on.
    const theirs = hub.commitDirect('test/demo', 'someone else adds a plot', { 'plots/extra.svg': '<svg xmlns="http://www.w3.org/2000/svg"/>' });
    const existing = await publish(['--repo-id', 'test/demo', '--dataset', hf, '--dry-run', '--remote', 'hub']);
    expect(existing.code).toBe(0);
    expect(existing.stdout).toContain(`one commit on main, parent ${theirs.oid}`);
    expect(existing.stdout).toMatch(/delete plots\/extra\.svg/);
    expect(hub.repo('test/not-yet')).toBeUndefined();
    expect(hub.repo('test/demo')!.commits.at(-1)!.oid).toBe(theirs.oid);
    expect(writes(from)).toEqual([]);
  }, 180_000);

  it('a publish that raced another publisher fails cleanly on its stale parent, and a rerun succeeds', async () => {
    // Another publisher commits after this publish read the head and before its commit lands.
    hub.onNextCommit(() => hub.commitDirect('test/demo', 'another publisher', { 'NOTES.md': 'mine' }));
    const res = await publish(['--repo-id', 'test/demo', '--dataset', hf, '-q']);
    expect(res.code).toBe(1);
    const lines = res.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^foresight: someone else published to test\/demo@main meanwhile .* — rerun foresight publish/);
    expect(res.stderr).not.toMatch(/^\s+at /m);
    expect(hub.repo('test/demo')!.commits.at(-1)!.title).toBe('another publisher');
    expect(hub.headFiles('test/demo').has('plots/extra.svg')).toBe(true);

    const again = await publish(['--repo-id', 'test/demo', '--dataset', hf]);
    expect(again.code).toBe(0);
    const files = hub.headFiles('test/demo');
    expect(files.has('plots/extra.svg')).toBe(false); // the dataset's folders hold only the dataset
    expect(files.get('NOTES.md')?.content.toString()).toBe('mine'); // what others keep elsewhere stays
  }, 240_000);

  it('a 429 is retried after its Retry-After, on the commit and on repository creation', async () => {
    hub.failNext('POST', /^\/api\/repos\/create$/, 429);
    hub.failNext('POST', /^\/api\/datasets\/test\/rate\/commit\/main$/, 429, { 'Retry-After': '1' });
    const from = hub.requests.length;
    const res = await publish(['--repo-id', 'test/rate', '--dataset', hf]);
    expect(res.code).toBe(0);
    const commits = hub.requests.slice(from).filter((r) => r.path === '/api/datasets/test/rate/commit/main');
    expect(commits.map((r) => r.status)).toEqual([429, 200]);
    expect(commits[1]!.at - commits[0]!.at).toBeGreaterThanOrEqual(950);
    expect(hub.requests.slice(from).filter((r) => r.path === '/api/repos/create').map((r) => r.status)).toEqual([429, 200]);
    expect(res.stderr).toMatch(/429 \(rate limit\) to POST \/api\/datasets\/test\/rate\/commit\/main: retrying in 1\.0 s/);
    expect([...hub.headFiles('test/rate').keys()].sort()).toEqual(['.gitattributes', ...expected].sort());
  }, 180_000);

  it('a hub that keeps answering 429 fails in one line naming the wait', async () => {
    for (let i = 0; i < 5; i++) hub.failNext('GET', /^\/api\/datasets\/test\/demo\/revision\/main$/, 429, { 'Retry-After': '0' });
    const res = await publish(['--repo-id', 'test/demo', '--dataset', hf, '--dry-run', '--remote', 'hub', '-q']);
    expect(res.code).toBe(1);
    expect(res.stderr.trim()).toBe('foresight: the hub kept rate-limiting foresight (429) while reading the dataset test/demo — wait a few minutes and rerun the same command');
  }, 180_000);

  it('trial: after make demo, publish --dry-run needed the network and sent HF_TOKEN to HF_ENDPOINT → it plans offline against an empty repository and says the hub was not asked', async () => {
    const endpoint = `http://127.0.0.1:${await closedPort()}`;
    const res = await publish(['--repo-id', 'test/offline', '--dataset', hf, '--dry-run'], { HF_ENDPOINT: endpoint });
    expect(res.stderr).not.toContain('foresight:');
    expect(res.code).toBe(0);
    expect(res.stdout).toContain(`publish to ${endpoint}/datasets/test/offline (revision main)`);
    expect(res.stdout).toContain('the hub was not asked (a dry run reads no network): planned against an empty repository');
    expect(res.stdout).toContain('create the dataset repository test/offline (public): assumed missing');
    for (const path of expected) expect(res.stdout).toMatch(new RegExp(`upload ${path.replace(/[.]/g, '\\.')}\\s+\\d+ bytes\\s+${path.endsWith('.parquet') ? 'LFS' : 'regular'}`));
    expect(res.stdout.trim().split('\n').at(-1)).toBe('dry run: the hub was not asked; nothing was sent to it');
  }, 180_000);

  it('trial: publish --dry-run needed the network → with --remote <dir> it plans against a local clone of the hub repository, and opens no connection with HF_TOKEN set', async () => {
    const recorder = await startConnectionRecorder();
    const copy = await gitRepo();
    try {
      // A clone without its LFS files: the test split is a pointer, the verified split real bytes, and a plot the dataset no longer has.
      const testShard = expected.find((p) => p.startsWith('data/'))!;
      const verifiedShard = expected.find((p) => p.startsWith('verified/'))!;
      const shard = await readFile(join(hf, testShard));
      await mkdir(join(copy.dir, 'verified'), { recursive: true });
      await copyFile(join(hf, verifiedShard), join(copy.dir, verifiedShard));
      const head = await copy.commit({
        files: {
          'README.md': setCardRepoId(await readFile(join(hf, 'README.md'), 'utf8'), 'test/copy'),
          [testShard]: `version https://git-lfs.github.com/spec/v1\noid sha256:${createHash('sha256').update(shard).digest('hex')}\nsize ${shard.length}\n`,
          'plots/extra.svg': '<svg xmlns="http://www.w3.org/2000/svg"/>',
        },
        message: 'the hub repository as cloned',
        date: '2025-01-01T00:00:00Z',
      });
      const env = { HF_ENDPOINT: recorder.url };
      const res = await publish(['--repo-id', 'test/copy', '--dataset', hf, '--dry-run', '--remote', copy.dir, '--private'], env);
      expect(res.stderr).not.toContain('foresight:');
      expect(res.code).toBe(0);
      expect(res.stdout).toContain(`the hub was not asked: planned against the local copy ${copy.dir} at commit ${head}`);
      expect(res.stdout).toContain('the dataset repository test/copy exists: --private applies only when creating it');
      expect(res.stdout).toContain(`one commit on main, parent ${head}`);
      for (const path of ['README.md', testShard, verifiedShard]) expect(res.stdout).toMatch(new RegExp(`keep   ${path.replace(/[.]/g, '\\.')}\\s+\\d+ bytes.*\\(unchanged\\)`));
      for (const path of expected.filter((p) => p.startsWith('plots/'))) expect(res.stdout).toMatch(new RegExp(`upload ${path.replace(/[.]/g, '\\.')}\\s`));
      expect(res.stdout).toMatch(/delete plots\/extra\.svg\s+\(no longer in the dataset\)/);
      expect(res.stdout.trim().split('\n').at(-1)).toBe('dry run: the hub was not asked; nothing was sent to it');

      // --remote is for dry runs only: a publish reads the hub.
      const real = await publish(['--repo-id', 'test/copy', '--dataset', hf, '--remote', copy.dir, '-q'], env);
      expect(real.code).toBe(1);
      expect(real.stderr).toBe('foresight: --remote goes with --dry-run: a publish always reads the repository from the hub — add --dry-run, or drop --remote\n');
      expect(recorder.received).toEqual([]);
    } finally {
      await copy.remove();
      await recorder.close();
    }
  }, 180_000);

  it('trial: a publish error printed [object Object] → through the CLI, a 403 with a JSON error object and an unreachable hub are each one line with a remedy', async () => {
    hub.failNext('GET', /^\/api\/datasets\/test\/demo\/revision\/main$/, 403, {}, { error: { code: 'forbidden', message: 'egress blocked by policy' } });
    const json = await publish(['--repo-id', 'test/demo', '--dataset', hf, '--dry-run', '--remote', 'hub', '-q']);
    expect(json.code).toBe(1);
    expect(json.stderr).toMatch(/^foresight: the hub at http:\/\/127\.0\.0\.1:\d+ refused HF_TOKEN access to the dataset test\/demo \(403\) while reading the dataset test\/demo: egress blocked by policy — use a token with write access [^\n]*\n$/);

    const endpoint = `http://127.0.0.1:${await closedPort()}`;
    const down = await publish(['--repo-id', 'test/demo', '--dataset', hf, '-q'], { HF_ENDPOINT: endpoint });
    expect(down.code).toBe(1);
    expect(down.stderr).toBe(`foresight: cannot reach the hub at ${endpoint} (ECONNREFUSED) while reading the dataset test/demo — check HF_ENDPOINT and the network, then rerun; foresight publish --dry-run (without --remote hub) works without the hub\n`);
  }, 180_000);

  it('trial: after make demo, publish stopped as no Python imported datasets until scripts/setup-python.sh was run by hand → make publish installs it, then publishes', async () => {
    // A venv that does not exist yet; `setup` (the machine: Docker, npm ci, base image) is taken as done.
    const venv = join(scratch, 'make-venv');
    const endpoint = `http://127.0.0.1:${await closedPort()}`;
    const res = await cli(['--no-print-directory', '-o', 'setup', 'publish', 'REPO_ID=test/make', `DATASET=${hf}`, 'DRY_RUN=1'], env({ FORESIGHT_PY_VENV: venv, HF_ENDPOINT: endpoint }), 'make', []);
    expect(res.code).toBe(0);
    expect(res.stderr).toContain(`setup-python: creating venv at ${venv}`);
    expect(existsSync(join(venv, 'bin', 'python'))).toBe(true);
    expect(res.stdout).toContain('create the dataset repository test/make (public): assumed missing');
    expect(res.stdout.trim().split('\n').at(-1)).toBe('dry run: the hub was not asked; nothing was sent to it');
  }, 600_000);

  describe('the gate refuses before any request to the hub', () => {
    let from = 0;
    beforeAll(() => {
      from = hub.requests.length;
    });

    it('when HF_TOKEN sits in the card', async () => {
      const dir = await copyOfEmit('secret-card');
      await writeFile(join(dir, 'hf', 'README.md'), `${await readFile(join(dir, 'hf', 'README.md'), 'utf8')}\nupload token: ${hub.token}\n`);
      const res = await publish(['--repo-id', 'test/secret', '--dataset', join(dir, 'hf'), '-q']);
      expect(res.code).toBe(1);
      expect(res.stderr.trim()).toMatch(/^foresight: publish refused: README\.md line \d+ holds the value of <HF_TOKEN>: publishing would leak it — /);
    }, 180_000);

    it('when a registered secret is in a parquet cell, where compression hides it from a byte scan', async () => {
      // A cell's text that no uploaded file holds as bytes (zstd pages): only a scan of decoded cells finds it.
      const raw = await Promise.all(expected.map((p) => readFile(join(hf, p))));
      const rows = (await readFile(join(hf, 'jsonl', 'test.jsonl'), 'utf8')).trim().split('\n').map((l) => JSON.parse(l) as Record<string, string>);
      const pick = rows
        .flatMap((row) => (['problem_statement', 'patch'] as const).flatMap((column) => [0, 40, 80].map((at) => ({ row, column, value: row[column]!.slice(at, at + 40).trim() }))))
        .find((c) => c.value.length >= 20 && !/[\n<>]/.test(c.value) && raw.every((b) => !b.includes(c.value)));
      expect(pick).toBeDefined();
      const res = await publish(['--repo-id', 'test/secret', '--dataset', hf, '-q'], { GITHUB_TOKEN: pick!.value });
      expect(res.code).toBe(1);
      expect(res.stderr.trim()).toMatch(new RegExp(`^foresight: publish refused: config default, split test, row ${pick!.row.instance_id}, column ${pick!.column} holds the value of <GITHUB_TOKEN>`));
      expect(res.stderr).not.toContain(pick!.value);
    }, 180_000);

    it('when the card lacks the funnel config, or a test row is not in verified', async () => {
      const noFunnel = await copyOfEmit('no-funnel-config');
      const card = await readFile(join(noFunnel, 'hf', 'README.md'), 'utf8');
      const stripped = card.replace(/- config_name: funnel\n(  .*\n)+/, '');
      expect(stripped).not.toBe(card);
      await writeFile(join(noFunnel, 'hf', 'README.md'), stripped);
      const a = await publish(['--repo-id', 'test/configs', '--dataset', join(noFunnel, 'hf'), '-q']);
      expect(a.code).toBe(1);
      expect(a.stderr.trim()).toMatch(/^foresight: publish refused: the card declares no `funnel` config \(split `funnel`\) \(datasets found: default, verified\) — rerun foresight emit/);

      const lacking = await copyOfEmit('verified-lacking');
      const rows = (await readFile(join(lacking, 'hf', 'jsonl', 'verified.jsonl'), 'utf8')).trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
      await writeParquet(join(lacking, 'hf', 'verified', 'verified-00000-of-00001.parquet'), VERIFIED_COLUMNS, rows.filter((r) => r.instance_id !== 'minilib__3-8'));
      const b = await publish(['--repo-id', 'test/configs', '--dataset', join(lacking, 'hf'), '-q']);
      expect(b.code).toBe(1);
      expect(b.stderr.trim()).toMatch(/^foresight: publish refused: 1 test row\(s\) are not in the `verified` config: minilib__3-8 — rerun foresight emit/);
    }, 180_000);

    it('when emit recorded a failed gold self-check for a test row', async () => {
      const dir = await copyOfEmit('gold-failed');
      const lines = (await readFile(join(dir, 'items.jsonl'), 'utf8')).trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
      const row = lines.find((r) => r.instance_id === 'minilib__1-9')!;
      Object.assign(row, { excluded: true, exclusion_reason: 'gold_check_failed', exclusion_detail: 'emit: FAIL_TO_PASS not passing: tests/test_text.py::test_slugify_basic' });
      const text = lines.map((l) => JSON.stringify(l)).join('\n') + '\n';
      await writeFile(join(dir, 'items.jsonl'), text);
      // emit's own record (the manifest hashes it), saying the row failed while the stale test split still holds it
      const manifest = JSON.parse(await readFile(join(dir, 'manifest.json'), 'utf8')) as Record<string, unknown>;
      await writeFile(join(dir, 'manifest.json'), JSON.stringify({ ...manifest, output: contentFingerprint(text) }));
      const res = await publish(['--repo-id', 'test/gold', '--dataset', join(dir, 'hf'), '-q']);
      expect(res.code).toBe(1);
      expect(res.stderr.trim()).toMatch(/^foresight: publish refused: 1 test row\(s\) without a recorded gold self-check pass: minilib__1-9 \(excluded: gold_check_failed, emit: FAIL_TO_PASS not passing/);
    }, 180_000);

    it('when emit has no record of a test row', async () => {
      const dir = await copyOfEmit('gold-missing');
      const text = (await readFile(join(dir, 'items.jsonl'), 'utf8')).split('\n').filter((l) => l && !l.includes('"instance_id":"minilib__3-8"')).join('\n') + '\n';
      await writeFile(join(dir, 'items.jsonl'), text);
      const manifest = JSON.parse(await readFile(join(dir, 'manifest.json'), 'utf8')) as Record<string, unknown>;
      await writeFile(join(dir, 'manifest.json'), JSON.stringify({ ...manifest, output: contentFingerprint(text) }));
      const res = await publish(['--repo-id', 'test/gold', '--dataset', join(dir, 'hf'), '-q']);
      expect(res.code).toBe(1);
      expect(res.stderr).toContain('minilib__3-8 (emit recorded no such chain)');
    }, 180_000);

    it("when emit's record was edited after emit wrote it, or is not beside the dataset", async () => {
      const edited = await copyOfEmit('gold-edited');
      await writeFile(join(edited, 'items.jsonl'), (await readFile(join(edited, 'items.jsonl'), 'utf8')).replace('"excluded":true', '"excluded":false'));
      const a = await publish(['--repo-id', 'test/gold', '--dataset', join(edited, 'hf'), '-q']);
      expect(a.code).toBe(1);
      expect(a.stderr).toMatch(/items\.jsonl changed after emit wrote it/);

      const alone = join(scratch, 'alone', 'hf');
      await cp(hf, alone, { recursive: true });
      const b = await publish(['--repo-id', 'test/gold', '--dataset', alone, '-q']);
      expect(b.code).toBe(1);
      expect(b.stderr).toMatch(/no record of emit's gold self-check at/);
    }, 180_000);

    it('when no Python here has the datasets library, saying how to get one', async () => {
      const res = await publish(['--repo-id', 'test/py', '--dataset', hf, '-q'], { FORESIGHT_PY_VENV: join(scratch, 'no-venv'), PATH: dirname(process.execPath) });
      expect(res.code).toBe(1);
      expect(res.stderr.trim()).toMatch(/^foresight: no Python here imports the Hugging Face datasets library .* — run `bash .*scripts\/setup-python\.sh`/);
    }, 60_000);

    it('when HF_TOKEN is unset (a dry run needs none)', async () => {
      const res = await publish(['--repo-id', 'test/demo', '--dataset', hf], { HF_TOKEN: undefined });
      expect(res.code).toBe(1);
      expect(res.stderr.trim()).toMatch(/^foresight: HF_TOKEN is not set/);
    }, 60_000);

    it('and none of them sent the hub a single request', () => {
      expect(from).toBeGreaterThan(0);
      expect(hub.requests.slice(from)).toEqual([]);
    });
  });

  it('HF_TOKEN appears in no output of any run', () => {
    expect(outputs.length).toBeGreaterThan(20);
    for (const out of outputs) expect(out).not.toContain(hub.token);
  });
});
