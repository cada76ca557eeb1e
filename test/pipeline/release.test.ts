/**
 * A second release of a campaign (the Python demo and the Go demo), through the real CLI and a local hub:
 * the first release is mined, emitted and published (one of its `verified` rows published with a
 * FAIL_TO_PASS test that does not exist, a row that cannot hold when validated again); a fix is committed to
 * the Python repository; `foresight release --previous <hub id>` mines only the history after the first
 * release's heads, validates the published rows again (the bad one kept, excluded `sets_changed`; the
 * others `reused` with their published statements), and `publish --tag` adds the release's split beside the
 * first release's files, which stay byte-identical on the hub, and tags the revision.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectDocker, DEFAULT_BASE_ALIAS, ensureImage, isDockerReachable } from '../../core/env/index.ts';
import { makeDemoRepo } from '../../pipeline/demo/make-demo-repo.ts';
import { VERIFIED_COLUMNS } from '../../stages/emit/index.ts';
import { writeParquet } from '../../stages/emit/write-parquet.ts';
import { startFakeHub, type FakeHub } from '../helpers/fake-hub.ts';
import { makeGoDemoRepo } from '../helpers/go-demo-repo.ts';
import { pythonWithDatasets } from '../helpers/python.ts';

const run = promisify(execFile);
const ROOT = join(import.meta.dirname, '..', '..');
const docker = connectDocker();
const skip = !(await isDockerReachable(docker)) && !process.env['CI'];
type Row = Record<string, unknown>;

const readJsonl = async (f: string): Promise<Row[]> => (await readFile(f, 'utf8')).split('\n').filter(Boolean).map((l) => JSON.parse(l) as Row);

describe.skipIf(skip)('a second release: only the new history, the published rows validated again, the first release kept byte for byte', () => {
  let dir: string;
  let data: string;
  let hub: FakeHub;
  let file: string;
  let firstHub: Map<string, Buffer>;
  let published: Row[];
  let bad: Row;
  let fix: string;
  let releaseOut: string;
  const cli = (args: string[]) =>
    run(join(ROOT, 'node_modules/.bin/tsx'), [join(ROOT, 'pipeline/bin.ts'), ...args], {
      cwd: ROOT,
      maxBuffer: 64 * 1024 * 1024,
      env: { ...process.env, FORESIGHT_OFFLINE: '1', FORESIGHT_RUNS: '1', FORESIGHT_ATTRIBUTION: 'off', FORESIGHT_LLM_BASE_URL: '', FORESIGHT_LOG_LEVEL: 'warn', HF_ENDPOINT: hub.baseUrl, HF_TOKEN: hub.token, GITHUB_TOKEN: '' },
    });

  beforeAll(async () => {
    await ensureImage(DEFAULT_BASE_ALIAS, { docker });
    await pythonWithDatasets();
    hub = await startFakeHub();
    dir = await mkdtemp(join(tmpdir(), 'foresight-release-'));
    data = join(dir, 'data');
    await makeDemoRepo(join(dir, 'minilib'));
    await makeGoDemoRepo(join(dir, 'gotext'), { newerStd: true });
    file = join(dir, 'two.yaml');
    await writeFile(file, ['name: two', 'repos:', '  - repo: demo/minilib', '    clone: minilib', '  - repo: demo/gotext', '    clone: gotext', ''].join('\n'));

    // The first release: mined, emitted, one row's published FAIL_TO_PASS names a test that does not exist.
    await cli(['campaign', 'run', file, '--data', data, '--jobs', '2']);
    await cli(['campaign', 'emit', file, '--data', data]);
    const hf = join(data, 'campaigns', 'two', 'hf');
    published = await readJsonl(join(hf, 'jsonl', 'verified.jsonl'));
    bad = published.find((r) => r.repo === 'demo/minilib')!;
    const tampered = published.map((r) => (r === bad ? { ...r, FAIL_TO_PASS: JSON.stringify([...(JSON.parse(String(r.FAIL_TO_PASS)) as string[]), 'tests/test_text.py::test_never_written']) } : r));
    await writeParquet(join(hf, 'verified', 'verified-00000-of-00001.parquet'), VERIFIED_COLUMNS, tampered);
    await cli(['publish', '--repo-id', 'test/two', '--dataset', hf]);
    firstHub = new Map([...hub.headFiles('test/two')].map(([p, f]) => [p, f.content]));

    // New history in one repository: a fix of format_bytes' rounding, with its test.
    const clone = join(dir, 'minilib');
    const numbers = (await readFile(join(clone, 'minilib', 'numbers.py'), 'utf8')).replace('        if n < base:', '        if round(n) < base:');
    await writeFile(join(clone, 'minilib', 'numbers.py'), numbers);
    await writeFile(join(clone, 'tests', 'test_numbers.py'), `${await readFile(join(clone, 'tests', 'test_numbers.py'), 'utf8')}\n\ndef test_format_bytes_rounds_to_the_next_unit():\n    assert numbers.format_bytes(999_999) == "1 MB"\n`);
    const env = { ...process.env, GIT_AUTHOR_NAME: 'Hana Sato', GIT_AUTHOR_EMAIL: 'hana@example.com', GIT_COMMITTER_NAME: 'Hana Sato', GIT_COMMITTER_EMAIL: 'hana@example.com', GIT_AUTHOR_DATE: '2024-03-01T10:00:00Z', GIT_COMMITTER_DATE: '2024-03-01T10:00:00Z' };
    await run('git', ['-C', clone, 'commit', '-q', '-a', '-m', 'Fix format_bytes rounding up to the next unit (#14)'], { env });
    fix = (await run('git', ['-C', clone, 'rev-parse', 'HEAD'])).stdout.trim();

    releaseOut = (await cli(['release', '--campaign', file, '--name', 'r2', '--previous', 'test/two', '--data', data])).stdout;
  }, 1_800_000);
  afterAll(async () => {
    await hub?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const releaseHf = () => join(data, 'campaigns', 'two', 'releases', 'r2', 'hf');

  it('mines only the history after the first release: discover and szz saw the new fix alone', async () => {
    const candidates = await readJsonl(join(data, 'demo__minilib', 'discover', 'items.jsonl'));
    expect(candidates.map((c) => (c.pr2 as { mergeSha: string }).mergeSha)).toEqual([fix]);
    for (const c of await readJsonl(join(data, 'demo__minilib', 'szz', 'items.jsonl'))) expect((c.pr2 as { mergeSha: string }).mergeSha).toBe(fix);
    expect(await readJsonl(join(data, 'demo__gotext', 'discover', 'items.jsonl'))).toEqual([]);
    const manifest = JSON.parse(await readFile(join(releaseHf(), 'release.json'), 'utf8')) as { splits: string[]; repos: Array<{ repo: string; head: string; after: string }> };
    expect(manifest.splits).toEqual(['r2']);
    expect(manifest.repos.find((r) => r.repo === 'demo/minilib')).toMatchObject({ head: fix });
  });

  it('the published rows are validated again: the one that cannot hold is kept, excluded with its reason; the others are reused unchanged', async () => {
    const rows = await readJsonl(join(releaseHf(), 'jsonl', 'verified.jsonl'));
    const again = rows.find((r) => r.instance_id === bad.instance_id)!;
    expect(again).toMatchObject({ excluded: true, exclusion_reason: 'sets_changed', provenance: 'reused' });
    expect(String(again.exclusion_detail)).toMatch(/^release r2: FAIL_TO_PASS: -tests\/test_text\.py::test_never_written/);
    const others = published.filter((r) => r !== bad);
    expect(others.length).toBeGreaterThan(0);
    for (const p of others) {
      const r = rows.find((x) => x.instance_id === p.instance_id)!;
      expect(r, String(p.instance_id)).toEqual({ ...p, provenance: 'reused' });
    }
    expect(rows.filter((r) => r.provenance === 'mined').every((r) => r.repo === 'demo/minilib')).toBe(true);
    expect(releaseOut).toMatch(/\| demo\/minilib \| \d+ \| \d+ \| 1 \(sets_changed 1\) \| 0 \|/);
  });

  it('publish --tag adds the release split beside the first release, byte-identical on the hub, and tags the revision', async () => {
    const out = await cli(['publish', '--repo-id', 'test/two', '--dataset', releaseHf(), '--tag', 'r2']);
    expect(out.stdout).toContain('tagged');
    const files = hub.headFiles('test/two');
    for (const [path, content] of firstHub) {
      if (!path.endsWith('.parquet')) continue;
      expect(files.get(path)?.content.equals(content), path).toBe(true);
    }
    expect([...files.keys()]).toEqual(expect.arrayContaining(['verified/r2-00000-of-00001.parquet', 'funnel/r2-00000-of-00001.parquet', 'release.json']));
    const repo = hub.repo('test/two')!;
    expect(repo.tags.get('r2')?.oid).toBe(repo.commits.at(-1)!.oid);
    const card = files.get('README.md')!.content.toString('utf8');
    expect(card).toContain('## Changelog');
    expect(card).toContain('### r2 (');
    expect(card).toMatch(/split: r2\n\s+path: verified\/r2-\*/);
  });
});
