import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectDocker, inspectImage, isDockerReachable } from '../../../core/env/index.ts';
import { bars, hubMetadata } from '../../helpers/card.ts';
import { minedDemoCopy } from '../../helpers/demo.ts';
import { MIT } from '../../helpers/licenses.ts';
import { runPython } from '../../helpers/python.ts';
import { readRows } from '../../../pipeline/eval/index.ts';

const run = promisify(execFile);
const ROOT = join(import.meta.dirname, '..', '..', '..');

// ---- the emit stage on the demo, through the CLI -----------------------------------------------

async function foresight(args: string[]): Promise<{ stdout: string; stderr: string }> {
  return run(join(ROOT, 'node_modules/.bin/tsx'), [join(ROOT, 'pipeline/bin.ts'), ...args], { cwd: ROOT, env: { ...process.env, FORESIGHT_LLM_BASE_URL: '' }, maxBuffer: 64 * 1024 * 1024 });
}

const dockerUp = await isDockerReachable();
if (!dockerUp && process.env.CI) throw new Error('Docker is not reachable: CI must run the demo (run `make setup`)');

describe.skipIf(!dockerUp)('emit on the demo (foresight demo through the CLI)', () => {
  let data: string;
  let hf: string;
  let card: string;

  beforeAll(async () => {
    data = await minedDemoCopy();
    hf = join(data, 'demo__minilib', 'emit', 'hf');
    card = await readFile(join(hf, 'README.md'), 'utf8');
  }, 600_000);
  afterAll(() => rm(data, { recursive: true, force: true }));

  it('the card links plots/*.svg files that exist and are valid SVG with bars', async () => {
    const links = [...card.matchAll(/!\[[^\]]*\]\(([^)]+)\)/g)].map((m) => m[1]!);
    expect(links).toEqual(['plots/funnel.svg', 'plots/gap-days.svg', 'plots/test-set-sizes.svg']);
    for (const link of links) {
      expect(existsSync(join(hf, link))).toBe(true);
      expect(bars(await readFile(join(hf, link), 'utf8')).length).toBeGreaterThan(0);
    }
  });

  it("the funnel starts at discover's candidates and ends at the test rows", async () => {
    const discover = JSON.parse(await readFile(join(data, 'demo__minilib', 'discover', 'manifest.json'), 'utf8')) as { stats: { candidates: number } };
    expect(card).toContain(`| fix candidates (discover) | ${discover.stats.candidates} |`);
    expect(bars(await readFile(join(hf, 'plots', 'funnel.svg'), 'utf8'))).toEqual([
      `chains: ${discover.stats.candidates}; step: fix candidates (discover)`,
      'chains: 5; step: chains attributed (szz)',
      'chains: 3; step: gradeable (validate)',
      'chains: 2; step: passed the judges (judge)',
      'chains: 2; step: test rows (emit)',
    ]);
    // The same steps in emit's manifest, where a dataset merged from several repositories' emits reads them.
    const emit = JSON.parse(await readFile(join(data, 'demo__minilib', 'emit', 'manifest.json'), 'utf8')) as { stats: Record<string, number> };
    expect(emit.stats).toMatchObject({ funnel_candidates: discover.stats.candidates, funnel_chains: 5, funnel_gradeable: 3, funnel_judged: 2, funnel_test: 2, test_rows: 2, verified_rows: 2, funnel_rows: 5 });
  });

  it('the real datasets library loads the three configs through the card: funnel every chain with its exclusion, verified exactly the test rows', async () => {
    const code = [
      'import json, sys',
      'from datasets import get_dataset_config_names, load_dataset',
      'test = load_dataset(sys.argv[1], split="test")',
      'ver = load_dataset(sys.argv[1], "verified", split="verified")',
      'fun = load_dataset(sys.argv[1], "funnel", split="funnel")',
      'print(json.dumps({"configs": sorted(get_dataset_config_names(sys.argv[1])), "test": sorted(test["instance_id"]), "verified": sorted(ver["instance_id"]),',
      '  "verified_excluded": sum(ver["excluded"]), "funnel": {r["instance_id"]: [r["gradeable"], r["excluded"], r["exclusion_reason"]] for r in fun},',
      '  "schemas": [ver.features == fun.features, "exclusion_reason" in test.column_names]}))',
    ].join('\n');
    expect(JSON.parse(await runPython(code, [hf]))).toEqual({
      configs: ['default', 'funnel', 'verified'],
      test: ['minilib__1-9', 'minilib__3-8'],
      verified: ['minilib__1-9', 'minilib__3-8'],
      verified_excluded: 0,
      funnel: {
        'minilib__1-9': [true, false, null],
        'minilib__3-8': [true, false, null],
        'minilib__4-11': [true, true, 'ineligible'],
        'minilib__5-12': [false, true, 'ineligible'],
        'minilib__6-10': [false, true, 'unattributed'],
      },
      schemas: [true, false],
    });
    // The JSONL copies hold the same rows; emit's artifact (what publish's gold gate reads) is the funnel.
    const ids = async (f: string) => (await readFile(join(hf, 'jsonl', f), 'utf8')).trim().split('\n').map((l) => (JSON.parse(l) as { instance_id: string }).instance_id);
    expect(await ids('verified.jsonl')).toEqual(await ids('test.jsonl'));
    expect((await ids('funnel.jsonl')).sort()).toEqual(['minilib__1-9', 'minilib__3-8', 'minilib__4-11', 'minilib__5-12', 'minilib__6-10']);
    expect(await readFile(join(data, 'demo__minilib', 'emit', 'items.jsonl'), 'utf8')).toBe(await readFile(join(hf, 'jsonl', 'funnel.jsonl'), 'utf8'));
    // foresight eval --split funnel lists the chains it cannot grade, as --split verified did when it held every chain.
    const funnelRows = await readRows(hf, 'funnel');
    expect([funnelRows.rows.map((r) => r.instance_id).sort(), funnelRows.notGradeable.sort()]).toEqual([['minilib__1-9', 'minilib__3-8', 'minilib__4-11'], ['minilib__5-12', 'minilib__6-10']]);
    expect((await readRows(hf, 'verified')).rows.map((r) => r.instance_id).sort()).toEqual(['minilib__1-9', 'minilib__3-8']);
  });

  it('the card maps the configs: which holds what and how to load each', () => {
    expect(card).toContain('| `default` | `test` | 2 | the chains that passed every gate');
    expect(card).toContain('| `verified` | `verified` | 2 | the same chains in the verified schema');
    expect(card).toContain('| `funnel` | `funnel` | 5 | every mined chain, in the verified schema: the audit trail');
    expect(card).toContain('funnel = load_dataset("<hub-owner>/<dataset-name>", "funnel", split="funnel")');
    expect(card).toContain('| demo/minilib | 5 | 3 | 3 | 2 | 2 |');
  });

  it("the license is read at the mined head: the demo has none, then a committed LICENSE is the card's; an env image another run pruned is built again", async () => {
    expect((await hubMetadata(card)).license_name).toBe('no-license-file');
    // Another run's cache policy removed the env image validation ran in (only its tag: the eval images
    // built on it keep its layers): emit resolves PR1's era again and loses no row.
    const jsonlRows = async (f: string) => (await readFile(join(hf, 'jsonl', f), 'utf8')).trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    const testIds = (await jsonlRows('test.jsonl')).map((r) => r.instance_id);
    const verifiedRows = await jsonlRows('verified.jsonl');
    expect(verifiedRows.map((r) => r.instance_id)).toEqual(testIds);
    const envImages = [...new Set(verifiedRows.map((r) => r.env_image_pr1).filter((x): x is string => typeof x === 'string'))];
    expect(envImages.length).toBeGreaterThan(0);
    const docker = connectDocker();
    for (const image of envImages) await docker.getImage(image).remove({ force: true, noprune: true });
    for (const image of envImages) expect(await inspectImage(docker, image)).toBeNull();
    const clone = join(data, 'demo__minilib', 'clone');
    const git = (args: string[]) => run('git', ['-C', clone, '-c', 'user.name=T', '-c', 'user.email=t@example.com', '-c', 'commit.gpgsign=false', ...args]);
    await writeFile(join(clone, 'LICENSE'), MIT);
    await git(['add', 'LICENSE']);
    await git(['commit', '-q', '-m', 'Add MIT license']);
    await foresight(['run', '--repo', 'demo/minilib', '--clone', clone, '--offline', '--from', 'emit', '--data', data]);
    const meta = await hubMetadata(await readFile(join(hf, 'README.md'), 'utf8'));
    expect(meta.license).toBe('mit');
    expect(meta.license_name).toBeUndefined();
    for (const image of envImages) expect(await inspectImage(docker, image)).not.toBeNull();
    expect((await jsonlRows('test.jsonl')).map((r) => r.instance_id)).toEqual(testIds);
  }, 300_000);
});
