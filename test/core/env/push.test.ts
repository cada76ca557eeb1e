/**
 * Real Docker and a real registry: Debian's `docker-registry` serves on 127.0.0.1 (a
 * free port, a temp storage dir; Docker allows 127.0.0.0/8 registries over plain HTTP by default). A
 * tiny runnable image (the host's `cat` and its libraries, plus a file holding this run's nonce) is
 * pushed, its local tags removed, pulled back by the pushed reference and run. Everything made here is
 * removed at the end. Skipped only when the daemon or the registry binary is missing AND CI is unset.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { copyFile, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ForesightError } from '../../../core/foundation/errors.ts';
import { connectDocker, isDockerReachable, pushedRef, pushImage } from '../../../core/env/index.ts';
import { forceRemove, ownerLabels } from '../../../core/env/container/cleanup.ts';
import { freePort, hasRegistryBin, REGISTRY_BIN, startRegistry, type TestRegistry } from '../../helpers/registry.ts';

const run = promisify(execFile);
const docker = connectDocker();
const reachable = await isDockerReachable(docker);
const hasRegistry = await hasRegistryBin();
const skip = (!reachable || !hasRegistry) && !process.env['CI'];
if (skip) {
  console.warn(`[push.test] SKIPPED: ${!reachable ? 'Docker is not reachable' : `${REGISTRY_BIN} is missing`} and CI is unset (run scripts/setup.sh)`);
}

const NONCE = randomBytes(6).toString('hex');
const REPO = `foresight-push-test-${NONCE}`;

/** A root with the host's `cat`, the libraries it loads, and /nonce: an image that runs and says which it is. */
async function tinyRoot(dir: string, content: string): Promise<void> {
  const cat = '/usr/bin/cat';
  const { stdout } = await run('ldd', [cat]);
  const libs = [...stdout.matchAll(/(\/\S+) \(0x/g)].map((m) => m[1]!);
  for (const file of [cat, ...libs]) {
    await mkdir(path.join(dir, path.dirname(file)), { recursive: true });
    await copyFile(file, path.join(dir, file));
  }
  await writeFile(path.join(dir, 'nonce'), content);
}

function follow(stream: NodeJS.ReadableStream): Promise<Array<{ error?: string; status?: string }>> {
  return new Promise((resolve, reject) => docker.modem.followProgress(stream, (err: Error | null, out: Array<{ error?: string }>) => (err ? reject(err) : resolve(out))));
}

/** `docker import` of a tiny root holding `content` at /nonce, tagged `<REPO>:<tag>`; returns the image id. */
async function importTiny(work: string, tag: string, content: string): Promise<string> {
  const root = await mkdtemp(path.join(work, 'root-'));
  await tinyRoot(root, content);
  const tar = `${root}.tar`;
  await run('tar', ['-C', root, '-cf', tar, '.']);
  const out = await follow((await docker.importImage(tar, { repo: REPO, tag })) as NodeJS.ReadableStream);
  expect(out.find((e) => e.error)).toBeUndefined();
  return (await docker.getImage(`${REPO}:${tag}`).inspect()).Id;
}

/** Runs `cat /nonce` in a fresh, networkless container of `image`. */
async function catNonce(image: string): Promise<string> {
  const c = await docker.createContainer({ Image: image, Cmd: ['/usr/bin/cat', '/nonce'], Labels: ownerLabels(), HostConfig: { NetworkMode: 'none' } });
  try {
    await c.start();
    const { StatusCode } = (await c.wait()) as { StatusCode: number };
    const logs = (await c.logs({ stdout: true, stderr: true, follow: false })) as Buffer;
    expect(StatusCode).toBe(0);
    // Non-TTY logs are multiplexed: 8-byte frame headers before each chunk.
    let text = '';
    for (let i = 0; i + 8 <= logs.length; ) {
      const size = logs.readUInt32BE(i + 4);
      text += logs.subarray(i + 8, i + 8 + size).toString();
      i += 8 + size;
    }
    return text;
  } finally {
    await forceRemove(docker, c.id);
  }
}

async function gone(ref: string): Promise<boolean> {
  return docker.getImage(ref).inspect().then(() => false, (err: { statusCode?: number }) => err.statusCode === 404);
}

describe.skipIf(skip)('pushImage: eval images to a real registry on 127.0.0.1', () => {
  let work = '';
  let reg: TestRegistry | undefined;
  let registry = '';
  let registryUrl = '';
  const imageIds = new Set<string>();

  beforeAll(async () => {
    work = await mkdtemp(path.join(tmpdir(), 'foresight-push-'));
    reg = await startRegistry();
    ({ registry, url: registryUrl } = reg);
  }, 60_000);

  afterAll(async () => {
    for (const id of imageIds) await docker.getImage(id).remove({ force: true }).catch(() => undefined);
    await reg?.stop();
    if (work) await rm(work, { recursive: true, force: true });
  }, 60_000);

  it('pushes, and the image pulled back by the pushed reference is the same content', async () => {
    const id = await importTiny(work, 'a', `first ${NONCE}`);
    imageIds.add(id);
    const lines: string[] = [];
    const res = await pushImage({ docker, image: `${REPO}:a`, registry, log: { info: (m) => lines.push(m) } });
    expect(res).toEqual({ kind: 'pushed', ref: `${registry}/${REPO}:a`, digest: expect.stringMatching(/^sha256:[0-9a-f]{64}$/), skipped: false });
    if (res.kind !== 'pushed') return;
    expect(lines.join('\n')).toContain(`pushed ${res.ref}`);

    // The registry itself names that manifest under the tag (its HTTP API, not the daemon's word).
    const manifest = await fetch(`${registryUrl}/v2/foresight-test/${REPO}/manifests/a`, {
      method: 'HEAD',
      headers: { Accept: 'application/vnd.docker.distribution.manifest.v2+json' },
    });
    expect(manifest.status).toBe(200);
    expect(manifest.headers.get('docker-content-digest')).toBe(res.digest);

    // Nothing local is left: the pull has to fetch it.
    await docker.getImage(`${REPO}:a`).remove();
    await docker.getImage(res.ref).remove();
    expect(await gone(id)).toBe(true);

    const pulled = await follow((await docker.pull(res.ref)) as NodeJS.ReadableStream);
    expect(pulled.find((e) => e.error)).toBeUndefined();
    const info = await docker.getImage(res.ref).inspect();
    // Same image config, so the same id; and it runs and holds this run's file.
    expect(info.Id).toBe(id);
    expect(info.RepoDigests).toContain(`${registry}/${REPO}@${res.digest}`);
    expect(await catNonce(res.ref)).toBe(`first ${NONCE}`);
  }, 120_000);

  it('skips a push the registry already has, and pushes again when the tag now names other content', async () => {
    const id = await importTiny(work, 'b', `second ${NONCE}`);
    imageIds.add(id);
    const first = await pushImage({ docker, image: `${REPO}:b`, registry });
    expect(first).toMatchObject({ kind: 'pushed', skipped: false });
    const again = await pushImage({ docker, image: `${REPO}:b`, registry });
    expect(again).toEqual({ ...first, skipped: true });

    // Another image under the same local tag: the registry's manifest is not this one's, so it is sent.
    const other = await importTiny(work, 'b', `third ${NONCE}`);
    imageIds.add(other);
    expect(other).not.toBe(id);
    const changed = await pushImage({ docker, image: `${REPO}:b`, registry });
    expect(changed).toMatchObject({ kind: 'pushed', skipped: false, ref: `${registry}/${REPO}:b` });
    if (changed.kind !== 'pushed' || first.kind !== 'pushed') return;
    expect(changed.digest).not.toBe(first.digest);
    expect(await catNonce(changed.ref)).toBe(`third ${NONCE}`);
  }, 120_000);

  it('a registry that is down is a failed push with the reason, not a throw', async () => {
    const id = await importTiny(work, 'c', `down ${NONCE}`);
    imageIds.add(id);
    const down = `127.0.0.1:${await freePort()}/foresight-test`;
    const res = await pushImage({ docker, image: `${REPO}:c`, registry: down });
    expect(res).toMatchObject({ kind: 'failed', ref: `${down}/${REPO}:c` });
    if (res.kind !== 'failed') return;
    expect(res.detail).toMatch(/connection refused/i);
    expect(res.detail).not.toContain('\n');
    // No local tag is left naming a registry that does not hold the image; the image itself stays.
    expect(await gone(res.ref)).toBe(true);
    expect(await gone(`${REPO}:c`)).toBe(false);
  }, 120_000);

  it('a missing local image or a registry that is not HOST[:PORT]/NAMESPACE throws a ForesightError', async () => {
    await expect(pushImage({ docker, image: `${REPO}:absent`, registry })).rejects.toThrow(ForesightError);
    await expect(pushImage({ docker, image: `${REPO}:absent`, registry })).rejects.toThrow(/not present/);
    await expect(pushImage({ docker, image: `${REPO}:a`, registry: 'http://127.0.0.1:5000/ns' })).rejects.toThrow(/not HOST\[:PORT\]\/NAMESPACE/);
    await expect(pushImage({ docker, image: `${REPO}:a`, registry: 'myhost/ns' })).rejects.toThrow(/registry host/);
  });
});

describe('pushedRef', () => {
  it('puts the registry before the local repository and keeps the tag', () => {
    expect(pushedRef('foresight-eval:0123abcd', '127.0.0.1:5000/foresight')).toBe('127.0.0.1:5000/foresight/foresight-eval:0123abcd');
    expect(pushedRef('foresight-eval:k', 'registry.example.org/a/b/')).toBe('registry.example.org/a/b/foresight-eval:k');
  });
});
