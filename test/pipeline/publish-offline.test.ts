/**
 * `foresight publish` without the network: what a failed hub call prints (one line, the hub's words,
 * never `[object Object]`), and the local copies of a hub repository a dry run can plan against.
 * Real servers on 127.0.0.1 (test/helpers/fake-hub.ts), real git; no Docker.
 */
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRepo } from '@huggingface/hub';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorMessage, ForesightError } from '../../core/foundation/errors.ts';
import { createLogger } from '../../core/foundation/log.ts';
import { askUploadModes, hubFetch, readLocalCopy, readRemote, type HubTarget } from '../../pipeline/publish/index.ts';
import { closedPort, startFakeHub, type FakeHub } from '../helpers/fake-hub.ts';
import { gitRepo } from '../helpers/git-repo.ts';

const quiet = createLogger({ quiet: true });

/** What the CLI prints for `err` (bin.ts: `foresight: ` + errorMessage), checked to be one line of a ForesightError. */
async function failure(call: Promise<unknown>): Promise<string> {
  const err = await call.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ForesightError);
  const line = errorMessage(err);
  expect(line).not.toContain('\n');
  expect(line).not.toContain('[object Object]');
  expect(line).toMatch(/ — \S/); // cause — remedy
  return line;
}

describe('trial: a publish error printed [object Object] → every hub failure is one line naming cause and remedy', () => {
  let hub: FakeHub;
  const target = (endpoint: string, repoId = 'test/errors'): HubTarget => ({ endpoint, repoId, revision: 'main', token: hub.token, fetch: hubFetch({ log: quiet, attempts: 1 }) });

  beforeAll(async () => {
    hub = await startFakeHub();
    await createRepo({ repo: { type: 'dataset', name: 'test/errors' }, hubUrl: hub.baseUrl, accessToken: hub.token });
  });
  afterAll(async () => hub?.close());

  it('an unreachable hub (closed port on 127.0.0.1) names the endpoint, the reason and what to do', async () => {
    const endpoint = `http://127.0.0.1:${await closedPort()}`;
    const line = await failure(readRemote(target(endpoint)));
    expect(line).toBe(`cannot reach the hub at ${endpoint} (ECONNREFUSED) while reading the dataset test/errors — check HF_ENDPOINT and the network, then rerun; foresight publish --dry-run (without --remote hub) works without the hub`);
  });

  it('an HTTP error whose JSON body nests the error in an object gives the nested message', async () => {
    hub.failNext('GET', /^\/api\/datasets\/test\/errors\/revision\/main$/, 403, {}, { error: { code: 'forbidden', message: 'egress to huggingface.co is blocked by policy' } });
    const line = await failure(readRemote(target(hub.baseUrl)));
    expect(line).toMatch(/^the hub at http:\/\/127\.0\.0\.1:\d+ refused HF_TOKEN access to the dataset test\/errors \(403\) while reading the dataset test\/errors: egress to huggingface\.co is blocked by policy — use a token with write access/);
  });

  it('an HTTP error with a JSON body of error and error_description, on a request foresight makes itself (preupload)', async () => {
    hub.failNext('POST', /\/preupload\/main$/, 500, {}, { error: { message: 'preupload is down' }, error_description: 'try later' });
    const line = await failure(askUploadModes(target(hub.baseUrl), [{ path: 'README.md', local: import.meta.filename, size: 10 }]));
    expect(line).toMatch(/answered 500 while asking how test\/errors stores each file: preupload is down: try later — the hub \(or a proxy before it\) is failing: rerun later/);
  });

  it("an HTTP error with a text body (a proxy's HTML page) gives the page's title, and a JSON body that is not JSON names the answer", async () => {
    const page = '<html><head><title>502 Bad Gateway</title></head>\n<body><h1>502 Bad Gateway</h1>\n<p>nginx</p></body></html>';
    hub.failNext('GET', /^\/api\/datasets\/test\/errors\/revision\/main$/, 502, { 'content-type': 'text/html' }, page);
    expect(await failure(readRemote(target(hub.baseUrl)))).toMatch(/answered 502 while reading the dataset test\/errors: 502 Bad Gateway — /);

    hub.failNext('GET', /^\/api\/datasets\/test\/errors\/revision\/main$/, 500, { 'content-type': 'application/json' }, '<html>login required</html>');
    expect(await failure(readRemote(target(hub.baseUrl)))).toMatch(/^the answer at http:\/\/127\.0\.0\.1:\d+ is not a Hugging Face hub's while reading the dataset test\/errors \(.*not valid JSON\) — check HF_ENDPOINT/);
  });
});

describe('trial: publish --dry-run needs the network → a local copy of the hub repository is its remote state, read offline', () => {
  let dir: string;
  const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');
  const blobId = (s: string) => createHash('sha1').update(`blob ${Buffer.byteLength(s)}\0`).update(s).digest('hex');

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'foresight-publish-copy-'));
  });
  afterAll(async () => rm(dir, { recursive: true, force: true }));

  it("a git clone: its HEAD is the parent, LFS pointers name their content's sha256, .git is not a file of the repository", async () => {
    const repo = await gitRepo();
    try {
      const parquet = 'PAR1 rows';
      const pointer = `version https://git-lfs.github.com/spec/v1\noid sha256:${sha256(parquet)}\nsize ${parquet.length}\n`;
      const head = await repo.commit({ files: { 'README.md': '# card\n', 'data/test-00000-of-00001.parquet': pointer, '.gitattributes': '*.parquet filter=lfs\n' }, message: 'x', date: '2025-01-01T00:00:00Z' });
      expect(await readLocalCopy(repo.dir)).toEqual({
        kind: 'exists',
        head,
        private: null,
        files: [
          { path: '.gitattributes', oid: blobId('*.parquet filter=lfs\n'), lfsOid: sha256('*.parquet filter=lfs\n') },
          { path: 'README.md', oid: blobId('# card\n'), lfsOid: sha256('# card\n') },
          { path: 'data/test-00000-of-00001.parquet', oid: blobId(pointer), lfsOid: sha256(parquet) },
        ],
      });
    } finally {
      await repo.remove();
    }
  });

  it("huggingface-cli download --local-dir: the commit its metadata names; a hub cache snapshot: its folder's commit, through the blob links", async () => {
    const commit = 'a'.repeat(40);
    const local = join(dir, 'local');
    await mkdir(join(local, '.cache', 'huggingface', 'download'), { recursive: true });
    await writeFile(join(local, 'README.md'), '# card\n');
    await writeFile(join(local, '.cache', 'huggingface', 'download', 'README.md.metadata'), `${commit}\n"etag"\n1700000000.0\n`);
    const read = await readLocalCopy(local);
    expect(read).toMatchObject({ kind: 'exists', head: commit, files: [{ path: 'README.md' }] });

    const snapshot = join(dir, 'hub-cache', 'snapshots', 'b'.repeat(40));
    await mkdir(join(dir, 'hub-cache', 'blobs'), { recursive: true });
    await mkdir(snapshot, { recursive: true });
    await writeFile(join(dir, 'hub-cache', 'blobs', 'e1'), '# card\n');
    await symlink(join('..', '..', 'blobs', 'e1'), join(snapshot, 'README.md'));
    expect(await readLocalCopy(snapshot)).toEqual({ kind: 'exists', head: 'b'.repeat(40), private: null, files: [{ path: 'README.md', oid: blobId('# card\n'), lfsOid: sha256('# card\n') }] });

    await mkdir(join(dir, 'empty'));
    expect(await readLocalCopy(join(dir, 'empty'))).toEqual({ kind: 'missing' });
    expect(await failure(readLocalCopy(join(dir, 'nowhere')))).toMatch(/^--remote .*nowhere is not a folder — pass --remote hub/);
  });
});
