/**
 * Campaigns: the file (YAML, checked, errors naming the line and field), each repository's options over the
 * run's configuration, and a campaign of two generated repositories (the Python demo and the Go demo) mined by
 * the real CLI (`foresight campaign run`, then `campaign emit`) into one dataset: unique ids, both
 * repositories and both languages counted in the card, the rows read back by `datasets`.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectDocker, DEFAULT_BASE_ALIAS, ensureImage, isDockerReachable } from '../../core/env/index.ts';
import { defaultConfig } from '../../core/foundation/config.ts';
import { loadCampaign, idPrefixes, repoConfig } from '../../pipeline/campaign/index.ts';
import { makeDemoRepo } from '../../pipeline/demo/make-demo-repo.ts';
import { makeGoDemoRepo } from '../helpers/go-demo-repo.ts';
import { pythonWithDatasets, runPython } from '../helpers/python.ts';

const run = promisify(execFile);
const ROOT = join(import.meta.dirname, '..', '..');

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'foresight-campaign-'));
});
afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

async function campaignFile(name: string, text: string): Promise<string> {
  const file = join(dir, name);
  await writeFile(file, text);
  return file;
}

describe('the campaign file', () => {
  it('reads repositories with their options; a relative clone is relative to the file; dates are ISO', async () => {
    const file = await campaignFile(
      'ok.yaml',
      ['name: spring', 'repos:', '  - repo: django/django', '    clone: ../src/django', '    units: commits', '    windows:', '      - { since: 2023-05-01, until: "2023-08-01" }', '  - repo: go-chi/chi', '    language: go', '    clone: https://example.org/chi.git', ''].join('\n'),
    );
    const c = await loadCampaign(file);
    expect(c.repos.map((r) => r.repo)).toEqual(['django/django', 'go-chi/chi']);
    expect(c.repos[0]!.windows).toEqual([{ since: '2023-05-01T00:00:00.000Z', until: '2023-08-01T00:00:00.000Z' }]);
    const cfg = repoConfig(defaultConfig(), c.repos[0]!);
    expect(cfg.discover).toMatchObject({ units: 'commits', windows: [{ since: '2023-05-01T00:00:00.000Z', until: '2023-08-01T00:00:00.000Z' }] });
    expect(repoConfig(defaultConfig(), c.repos[1]!).validate.language).toBe('go');
    expect(repoConfig(defaultConfig(), c.repos[1]!).discover.windows).toEqual([]);
  });

  it.each([
    ['bad.yaml', 'name: x\nrepos:\n  - repo: a/b\n    windwos: []\n', /bad\.yaml:4: repos\[0\]: unknown field\(s\) windwos/],
    ['dup.yaml', 'name: x\nrepos:\n  - repo: a/b\n  - repo: A/B\n', /dup\.yaml:4: repos\[1\]\.repo: A\/B is listed twice/],
    ['date.yaml', 'name: x\nrepos:\n  - repo: a/b\n    windows: [{ since: 2023-13-01 }]\n', /date\.yaml:4: repos\[0\]\.windows\[0\]\.since/],
    ['order.yaml', 'name: x\nrepos:\n  - repo: a/b\n    windows: [{ since: 2024-01-01, until: 2023-01-01 }]\n', /since must be before until/],
    ['syntax.yaml', 'name: x\nrepos: [\n', /syntax\.yaml:\d+ is not valid YAML/],
    ['name.yaml', 'name: ../x\nrepos:\n  - repo: a/b\n', /name: letters, digits/],
  ])('%s is refused with the line and the field', async (name, text, why) => {
    const err = await loadCampaign(await campaignFile(name, text)).catch((e: unknown) => e as Error);
    expect(err).toBeInstanceOf(Error);
    expect((err as Error).message).toMatch(why);
  });

  it('ids get the owner only where two repositories share a name', () => {
    const p = idPrefixes(['a/lib', 'b/lib', 'c/other']);
    expect([...p.values()].map((x) => x.to)).toEqual(['a__lib__', 'b__lib__', 'other__']);
  });
});

const docker = connectDocker();
const dockerUp = await isDockerReachable(docker);
const skip = !dockerUp && !process.env['CI'];

describe.skipIf(skip)('a campaign of two generated repositories (Python and Go), mined by the CLI into one dataset', () => {
  let file: string;
  let data: string;
  let runOut: string;
  const cli = (args: string[]) =>
    run(join(ROOT, 'node_modules/.bin/tsx'), [join(ROOT, 'pipeline/bin.ts'), ...args], {
      cwd: ROOT,
      maxBuffer: 64 * 1024 * 1024,
      env: { ...process.env, FORESIGHT_OFFLINE: '1', FORESIGHT_RUNS: '1', FORESIGHT_ATTRIBUTION: 'off', FORESIGHT_LLM_BASE_URL: '', FORESIGHT_LOG_LEVEL: 'warn' },
    });

  beforeAll(async () => {
    await ensureImage(DEFAULT_BASE_ALIAS, { docker });
    await makeDemoRepo(join(dir, 'minilib'));
    await makeGoDemoRepo(join(dir, 'gotext'), { newerStd: true });
    data = join(dir, 'data');
    file = await campaignFile('two.yaml', ['name: two', 'title: Two generated repositories', 'repos:', '  - repo: demo/minilib', '    clone: minilib', '  - repo: demo/gotext', '    clone: gotext', '    language: go', ''].join('\n'));
    runOut = (await cli(['campaign', 'run', file, '--data', data, '--jobs', '2'])).stdout;
  }, 1_500_000);

  it('run mines each repository in its own data folder and prints the per-repository table', async () => {
    expect(runOut).toMatch(/demo\/minilib\s+mined/);
    expect(runOut).toMatch(/demo\/gotext\s+mined/);
    const state = JSON.parse(await readFile(join(data, 'campaigns', 'two', 'state.json'), 'utf8')) as { repos: Array<{ repo: string; head: string; counts: Record<string, number> }> };
    expect(state.repos.map((r) => r.repo)).toEqual(['demo/minilib', 'demo/gotext']);
    for (const r of state.repos) {
      expect(r.head).toMatch(/^[0-9a-f]{40}$/);
      expect(r.counts.test_rows).toBeGreaterThan(0);
    }
    // A rerun with nothing changed does no work.
    const again = await cli(['campaign', 'run', file, '--data', data, '--log-level', 'info']);
    expect(again.stderr.match(/nothing to do|up to date/g)?.length ?? 0).toBeGreaterThan(0);
  }, 600_000);

  it('emit writes one dataset: unique ids, both repositories and languages in the card, read back by datasets', async () => {
    const out = (await cli(['campaign', 'emit', file, '--data', data])).stdout;
    const hf = join(data, 'campaigns', 'two', 'hf');
    expect(out).toContain(hf);
    const rows = (config: string) => readFile(join(hf, 'jsonl', `${config}.jsonl`), 'utf8').then((t) => t.split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>));
    const test = await rows('test');
    const funnel = await rows('funnel');
    expect(new Set(test.map((r) => r.repo))).toEqual(new Set(['demo/minilib', 'demo/gotext']));
    expect(new Set(test.map((r) => r.instance_id)).size).toBe(test.length);
    expect(new Set(funnel.map((r) => r.instance_id)).size).toBe(funnel.length);
    expect(new Set(funnel.map((r) => r.language))).toEqual(new Set(['python', 'go']));
    for (const repo of ['demo__minilib', 'demo__gotext']) {
      const own = (await readFile(join(data, repo, 'emit', 'hf', 'jsonl', 'test.jsonl'), 'utf8')).split('\n').filter(Boolean).length;
      expect(test.filter((r) => r.repo === repo.replace('__', '/')).length).toBe(own);
    }
    const card = await readFile(join(hf, 'README.md'), 'utf8');
    expect(card).toContain('Two generated repositories');
    expect(card).toMatch(/\| demo\/minilib \|/);
    expect(card).toMatch(/\| demo\/gotext \|/);
    expect(card).toMatch(/\| go \|/);
    expect(card).toMatch(/\| python \|/);
    await pythonWithDatasets();
    const counts = JSON.parse(
      await runPython(
        ['import datasets, json, sys', 't = datasets.load_dataset(sys.argv[1], split="test")', 'f = datasets.load_dataset(sys.argv[1], "funnel", split="funnel")', 'print(json.dumps({"test": sorted(set(t["repo"])), "n": len(t), "funnel": len(f)}))'].join('\n'),
        [hf],
      ),
    ) as { test: string[]; n: number; funnel: number };
    expect(counts).toEqual({ test: ['demo/gotext', 'demo/minilib'], n: test.length, funnel: funnel.length });
  }, 600_000);

  it('publish --dry-run takes the campaign dataset: its gate finds every test row in the merged gold self-check record', async () => {
    const hf = join(data, 'campaigns', 'two', 'hf');
    const out = (await cli(['publish', '--repo-id', 'my-org/two', '--dataset', hf, '--dry-run'])).stdout;
    for (const f of ['data/test-00000-of-00001.parquet', 'verified/verified-00000-of-00001.parquet', 'funnel/funnel-00000-of-00001.parquet', 'README.md']) expect(out).toMatch(new RegExp(`upload ${f}`));
    expect(out).toContain('dry run: the hub was not asked');
  }, 300_000);
});
