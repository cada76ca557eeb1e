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
  });

  it('the real datasets library loads both configs of the emitted folder through the card', async () => {
    const code = 'import sys\nfrom datasets import load_dataset\nprint(len(load_dataset(sys.argv[1], split="test")), len(load_dataset(sys.argv[1], "verified", split="verified")))';
    expect((await runPython(code, [hf])).trim()).toBe('2 5');
  });

  it("the license is read at the mined head: the demo has none, then a committed LICENSE is the card's; an env image another run pruned is built again", async () => {
    expect((await hubMetadata(card)).license_name).toBe('no-license-file');
    // Another run's cache policy removed the env image validation ran in (only its tag: the eval images
    // built on it keep its layers): emit resolves PR1's era again and loses no row.
    const jsonlRows = async (f: string) => (await readFile(join(hf, 'jsonl', f), 'utf8')).trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    const testIds = (await jsonlRows('test.jsonl')).map((r) => r.instance_id);
    const verifiedRows = (await jsonlRows('verified.jsonl')).filter((r) => testIds.includes(r.instance_id));
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
