/**
 * `pushImages` on the demo through real Docker and a real registry on 127.0.0.1: emit
 * reruns with the registry set, the rows name `<registry>/foresight-eval:<key>`, and the registry holds
 * exactly those images (its manifest's config digest is the local image id); a row's image deleted
 * locally and pulled back by the row's name passes the gold check. (Demo eval-image keys are the same in
 * every suite; emit rebuilds a deleted one whenever it needs it.)
 */
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultConfig, loadConfig, loadSecrets } from '../../core/foundation/config.ts';
import { ForesightError } from '../../core/foundation/errors.ts';
import { connectDocker, isDockerReachable } from '../../core/env/index.ts';
import { silentLogger } from '../../core/foundation/log.ts';
import { pushImages } from '../../pipeline/push-images.ts';
import { minedDemoCopy } from '../helpers/demo.ts';
import { freePort, hasRegistryBin, startRegistry, type TestRegistry } from '../helpers/registry.ts';
import { gradeLimits, runEval } from '../../pipeline/eval/index.ts';

const docker = connectDocker();
const dockerUp = await isDockerReachable(docker);
const registryBin = await hasRegistryBin();
const skip = (!dockerUp || !registryBin) && !process.env['CI'];
if (skip) console.warn('[push-images.test] SKIPPED: Docker or /usr/bin/docker-registry is missing and CI is unset (run scripts/setup.sh)');

type Row = Record<string, unknown>;
const jsonl = async (file: string): Promise<Row[]> =>
  (await readFile(file, 'utf8')).trim().split('\n').filter(Boolean).map((l) => JSON.parse(l) as Row);

describe('pushImages without a registry', () => {
  it('refuses, naming --registry', async () => {
    const run = pushImages({ dataRoot: '/nonexistent', repo: { name: 'demo/minilib', clone: '/nonexistent' }, config: defaultConfig(), log: silentLogger });
    await expect(run).rejects.toThrow(ForesightError);
    await expect(run).rejects.toMatchObject({ remedy: expect.stringContaining('--registry HOST[:PORT]/NAMESPACE') });
  });
});

describe.skipIf(skip)('pushImages: the demo eval images to a registry on 127.0.0.1', () => {
  let ws: { root: string; dataRoot: string; repo: { name: string; clone: string } };
  let reg: TestRegistry;
  let hf = '';
  let localTest: Row[] = [];

  beforeAll(async () => {
    // The run's mined demo (test/helpers/demo.ts), this file's own copy.
    const data = await minedDemoCopy();
    ws = { root: data, dataRoot: data, repo: { name: 'demo/minilib', clone: join(data, 'demo__minilib', 'clone') } };
    hf = join(ws.dataRoot, 'demo__minilib', 'emit', 'hf', 'jsonl');
    localTest = await jsonl(join(hf, 'test.jsonl'));
    reg = await startRegistry();
  }, 600_000);

  afterAll(async () => {
    if (ws) await rm(ws.root, { recursive: true, force: true });
    await reg?.stop();
    if (!reg) return;
    // Only the registry-named tags are ours; untagging leaves the shared local eval images alone.
    const tagged = await docker.listImages({ filters: { reference: [`${reg.registry}/*`] } });
    for (const ref of tagged.flatMap((i) => i.RepoTags ?? []).filter((t) => t.startsWith(`${reg.registry}/`))) {
      await docker.getImage(ref).remove({ noprune: true }).catch(() => undefined);
    }
  }, 60_000);

  const configWith = (registry: string) => loadConfig({ ...process.env, FORESIGHT_REGISTRY: registry });

  it('rewrites every eval image reference to the pushed one, which the registry holds', async () => {
    expect(localTest.length).toBeGreaterThan(0);
    for (const row of localTest) expect(row.docker_image).toMatch(/^foresight-eval:[0-9a-f]{24}$/);

    const res = await pushImages({ dataRoot: ws.dataRoot, repo: ws.repo, config: configWith(reg.registry), secrets: loadSecrets({}), log: silentLogger });
    expect(res.stage).toBe('emit');

    const test = await jsonl(join(hf, 'test.jsonl'));
    expect(test.map((r) => r.instance_id)).toEqual(localTest.map((r) => r.instance_id));
    // The pushed reference of the row's eval image. Its key is the one mined unless another file (emit-demo)
    // removed the shared demo's env image meanwhile: rebuilt, it has a new id, and so the eval image a new key.
    for (const row of test) expect(String(row.docker_image)).toMatch(new RegExp(`^${reg.registry.replace(/[.]/g, '\\.')}/foresight-eval:[0-9a-f]{24}$`));
    // Every chain with an eval image (the funnel's rows: excluded gradeable chains have one too).
    const funnel = await jsonl(join(hf, 'funnel.jsonl'));
    expect(funnel.filter((r) => r.image_tier === '3').length).toBeGreaterThan(0);
    for (const row of funnel.filter((r) => r.image_tier === '3')) expect(String(row.docker_image)).toMatch(new RegExp(`^${reg.registry}/foresight-eval:`));

    for (const row of test) {
      const [name, tag] = String(row.docker_image).slice(`127.0.0.1:${new URL(reg.url).port}/`.length).split(':');
      const manifest = await fetch(`${reg.url}/v2/${name}/manifests/${tag}`, { headers: { Accept: 'application/vnd.docker.distribution.manifest.v2+json' } });
      expect(manifest.status).toBe(200);
      const body = (await manifest.json()) as { config: { digest: string } };
      const local = await docker.getImage(String(row.docker_image).slice(reg.registry.length + 1)).inspect();
      expect(body.config.digest).toBe(local.Id);
    }
  }, 600_000);

  it('a row\'s image deleted here and pulled back by the row\'s name passes the gold check', async () => {
    const test = await jsonl(join(hf, 'test.jsonl'));
    expect(test.length).toBeGreaterThan(0);
    for (const row of test) {
      const pushed = String(row.docker_image);
      expect(pushed.startsWith(`${reg.registry}/`)).toBe(true);
      // Both names go, so the image is really gone (emit rebuilds the local one whenever it is needed again).
      const id = (await docker.getImage(pushed).inspect()).Id;
      for (const ref of [pushed, pushed.slice(reg.registry.length + 1)]) await docker.getImage(ref).remove({ force: true }).catch(() => undefined);
      await expect(docker.getImage(id).inspect()).rejects.toMatchObject({ statusCode: 404 });
      const stream = await docker.pull(pushed);
      await new Promise<void>((resolve, reject) => docker.modem.followProgress(stream, (err: Error | null) => (err ? reject(err) : resolve())));
    }
    const outcome = await runEval({
      dataset: join(hf, '..'), split: 'test', predictions: 'gold', jobs: 1, docker, limits: gradeLimits(loadConfig({}).validate),
      log: silentLogger, signal: new AbortController().signal, out: join(ws.root, 'gold-pulled.json'),
    });
    expect(outcome.report.instances.map((i) => [i.instance_id, i.X, i.Y, i.p2p_regressions])).toEqual(test.map((r) => [r.instance_id, 1, 0, []]));
  }, 300_000);

  it('a registry that is down fails emit, naming the registry, and leaves the rows as they were', async () => {
    const before = await readFile(join(hf, 'test.jsonl'), 'utf8');
    const down = `127.0.0.1:${await freePort()}/foresight-test`;
    const run = pushImages({ dataRoot: ws.dataRoot, repo: ws.repo, config: configWith(down), secrets: loadSecrets({}), log: silentLogger });
    await expect(run).rejects.toThrow(ForesightError);
    await expect(run).rejects.toThrow(new RegExp(`cannot push foresight-eval:[0-9a-f]+ to the registry ${down}: .*connection refused`));
    expect(await readFile(join(hf, 'test.jsonl'), 'utf8')).toBe(before);
  }, 600_000);
});
