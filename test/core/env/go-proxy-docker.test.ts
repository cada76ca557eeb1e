/**
 * A Go image whose modules come from the configured module proxy (FORESIGHT_GOPROXY): a real GOPROXY server
 * (plain HTTP, node:http on the Docker bridge's gateway, the only address a build container reaches on this
 * host) serves a module `example.com/greet v1.0.0` built here; a generated repository requires it, with the
 * go.sum lines Go computes (dirhash h1). With the proxy the go deps step fills the image's module cache and the
 * repository's tests run offline in the image; without it the offline install fails with go's own reason. The
 * proxy's URL reaches no log, image or key. The keys without Docker first.
 * Skipped only when the daemon is unreachable AND CI is unset; in CI a missing daemon fails loudly.
 */
import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { absoluteGitDir } from '../../../core/foundation/git.ts';
import { clearSecrets, redact } from '../../../core/foundation/secrets.ts';
import { connectDocker, EnvImages, ensureBaseImage, envImageKey, isDockerReachable } from '../../../core/env/index.ts';
import { goDepsScript, goDepsSetup } from '../../../core/env/image/go-deps.ts';
import type { EnvImageResult, PackageSources } from '../../../core/env/image/types.ts';
import { runLockedDown } from '../../helpers/locked-down.ts';
import { detectGoCandidates } from '../../../core/env/recipes/detect-go.ts';
import { RecipeSchema, type Recipe } from '../../../core/env/recipes/schema.ts';
import { freshRepos } from '../../helpers/git-repo.ts';

const newRepo = freshRepos();
const DATE = '2024-01-01T00:00:00Z';
const NONCE = randomBytes(6).toString('hex');

const docker = connectDocker();
const reachable = await isDockerReachable(docker);
const skip = !reachable && !process.env['CI'];
if (skip) console.warn('[go-proxy-docker.test] SKIPPED: Docker is not reachable and CI is unset');

const MOD = 'example.com/greet';
const VERSION = 'v1.0.0';
const GREET_FILES: Record<string, string> = {
  'go.mod': `module ${MOD}\n\ngo 1.19\n`,
  'greet.go': 'package greet\n\n// Hello greets name.\nfunc Hello(name string) string { return "hello, " + name }\n',
};

const sha256 = (b: Buffer | string): Buffer => createHash('sha256').update(b).digest();
/** Go's dirhash Hash1: sha256 over the sorted lines `<sha256 hex>  <name>\n`, base64, `h1:`. */
function hash1(files: Record<string, string>): string {
  const lines = Object.keys(files)
    .sort()
    .map((name) => `${sha256(files[name]!).toString('hex')}  ${name}\n`)
    .join('');
  return `h1:${sha256(lines).toString('base64')}`;
}

/** The module's zip as a proxy serves it (every path under `<module>@<version>/`), made with python3's zipfile. */
async function moduleZip(dir: string): Promise<Buffer> {
  const out = path.join(dir, 'greet.zip');
  const prefixed = Object.fromEntries(Object.entries(GREET_FILES).map(([n, t]) => [`${MOD}@${VERSION}/${n}`, t]));
  const py = 'import json, sys, zipfile\nfiles = json.load(sys.stdin)\nwith zipfile.ZipFile(sys.argv[1], "w") as z:\n    for n in sorted(files): z.writestr(n, files[n])\n';
  await new Promise<void>((resolve, reject) => {
    const p = execFile('python3', ['-c', py, out], (err, _o, stderr) => (err ? reject(new Error(`python3 zipfile: ${stderr}`)) : resolve()));
    p.stdin!.end(JSON.stringify(prefixed));
  });
  return readFile(out);
}

/** The go.sum lines of example.com/greet v1.0.0: the zip's tree, and its go.mod alone. */
function goSum(): string {
  const tree = hash1(Object.fromEntries(Object.entries(GREET_FILES).map(([n, t]) => [`${MOD}@${VERSION}/${n}`, t])));
  const goMod = hash1({ 'go.mod': GREET_FILES['go.mod']! });
  return `${MOD} ${VERSION} ${tree}\n${MOD} ${VERSION}/go.mod ${goMod}\n`;
}

const APP_GO_MOD = `module example.com/app\n\n// foresight test ${NONCE}\ngo 1.19\n\nrequire ${MOD} ${VERSION}\n`;
const APP = {
  'go.mod': APP_GO_MOD,
  'go.sum': goSum(),
  'app/app.go': `package app\n\nimport "${MOD}"\n\n// Welcome greets a user.\nfunc Welcome(user string) string { return greet.Hello(user) + "!" }\n`,
  'app/app_test.go': 'package app\n\nimport "testing"\n\nfunc TestWelcome(t *testing.T) {\n\tif got := Welcome("ada"); got != "hello, ada!" {\n\t\tt.Fatalf("Welcome = %q", got)\n\t}\n}\n',
};

/** The recipe detection gives this repository: Go 1.19, `go mod download` then the warm-up. */
function goRecipe(): Recipe {
  const detected = detectGoCandidates(APP_GO_MOD, new Set(['go.mod', 'go.sum']), APP['go.sum']);
  const recipe = detected.candidates[0].recipe;
  expect(recipe).toMatchObject({ runner: 'go', go: '1.19' });
  expect(recipe.install[0]).toBe('go mod download');
  return recipe;
}

const sources = (s: Partial<PackageSources>): PackageSources => ({ npmRegistry: null, npmToken: null, goProxy: null, goFlags: null, ...s });

describe('the go deps step and the image key (no Docker)', () => {
  afterAll(() => clearSecrets());

  it('keys a Go image with its go deps step and GOFLAGS, never the proxy; other images keep their keys', async () => {
    const repo = await newRepo();
    const commit = await repo.commit({ files: APP, message: 'app', date: DATE });
    const recipe = goRecipe();
    const key = async (r: Recipe, s?: PackageSources) => (await envImageKey({ clone: repo.dir, commit, recipe: r, baseId: 'sha256:base', sources: s })).key;
    const plain = await key(recipe);
    // Without a proxy nothing changes, GOFLAGS or not: no step downloads.
    expect(await key(recipe, sources({}))).toBe(plain);
    expect(await key(recipe, sources({ goFlags: '-x' }))).toBe(plain);
    // With one the image is another (a candidate rejected offline is tried again); which proxy is not in it.
    const proxied = await key(recipe, sources({ goProxy: 'https://proxy-a.example/' }));
    expect(proxied).not.toBe(plain);
    expect(await key(recipe, sources({ goProxy: 'https://user:secret-pass-1@proxy-b.example/' }))).toBe(proxied);
    expect(await key(recipe, sources({ goProxy: 'https://proxy-a.example/', goFlags: '-x' }))).not.toBe(proxied);
    // A vendored module, a Python recipe: nothing of the Go sources.
    const vendored = RecipeSchema.parse({ ...recipe, install: recipe.install.slice(1) });
    expect(await key(vendored, sources({ goProxy: 'https://proxy-a.example/', goFlags: '-x' }))).toBe(await key(vendored));
    const python = RecipeSchema.parse({ runner: 'pytest', install: ['pip install -e .'] });
    expect(await key(python, sources({ goProxy: 'https://proxy-a.example/', goFlags: '-x' }))).toBe(await key(python));
  });

  it('the proxy reaches the step only as a secret variable, registered for redaction with its entries and credentials', () => {
    const recipe = goRecipe();
    expect(goDepsSetup(recipe, sources({ goFlags: '-x' }))).toBeNull();
    const proxy = 'https://bob:hunter2-pass@goproxy.corp.example/mod,https://proxy.golang.org|direct';
    const s = goDepsSetup(recipe, sources({ goProxy: proxy, goFlags: '-x' }))!;
    expect(s.secretEnv).toEqual([`FORESIGHT_GOPROXY=${proxy}`]);
    expect(s.env).toEqual(['FORESIGHT_GOFLAGS=-x']);
    expect(JSON.stringify([s.env, s.notes, goDepsScript()])).not.toMatch(/hunter2|goproxy\.corp|proxy\.golang/);
    expect(redact(`reading https://bob:hunter2-pass@goproxy.corp.example/mod/x/@v/list: 404`)).toBe('reading <Go proxy>/x/@v/list: 404');
    expect(redact('password hunter2-pass')).toBe('password <Go proxy credentials>');
  });
});

describe.skipIf(skip)('a Go image whose modules come from a module proxy (real Docker, a GOPROXY served here)', () => {
  let server: Server;
  let proxyUrl = '';
  const requests: string[] = [];
  let work = '';
  const built: string[] = [];

  beforeAll(async () => {
    work = await mkdtemp(path.join(tmpdir(), 'foresight-goproxy-'));
    const zip = await moduleZip(work);
    const base = `/${MOD}/@v/`;
    const routes = new Map<string, { type: string; body: Buffer | string }>([
      [`${base}list`, { type: 'text/plain', body: `${VERSION}\n` }],
      [`${base}${VERSION}.info`, { type: 'application/json', body: JSON.stringify({ Version: VERSION, Time: DATE }) }],
      [`${base}${VERSION}.mod`, { type: 'text/plain', body: GREET_FILES['go.mod']! }],
      [`${base}${VERSION}.zip`, { type: 'application/zip', body: zip }],
    ]);
    server = createServer((req, res) => {
      requests.push(req.url ?? '');
      const r = routes.get(req.url ?? '');
      if (!r) {
        res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
        return;
      }
      res.writeHead(200, { 'content-type': r.type }).end(r.body);
    });
    // Containers reach the host on the bridge's gateway only: listen there, nowhere else.
    const bridge = (await docker.getNetwork('bridge').inspect()) as { IPAM?: { Config?: { Gateway?: string }[] } };
    const gateway = bridge.IPAM?.Config?.find((c) => c.Gateway)?.Gateway;
    if (!gateway) throw new Error('the Docker bridge network names no gateway: cannot serve a module proxy to build containers');
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, gateway, () => resolve());
    });
    proxyUrl = `http://${gateway}:${(server.address() as AddressInfo).port}`;
    await ensureBaseImage();
  }, 300_000);

  afterAll(async () => {
    server?.close();
    for (const image of built) await docker.getImage(image).remove({ force: true }).catch(() => undefined);
    if (work) await rm(work, { recursive: true, force: true });
    clearSecrets();
  });

  it('with FORESIGHT_GOPROXY the go deps step fills the module cache and the tests run offline; without it go says why', async () => {
    const repo = await newRepo();
    const commit = await repo.commit({ files: APP, message: 'app using greet', date: DATE });
    const recipe = goRecipe();
    const req = { clone: repo.dir, repo: 'test/goproxy', commit, recipe, logDir: path.join(work, 'logs') };
    // Both at once: they share the base image, not a key.
    const [withProxy, without] = (await Promise.all([
      new EnvImages({ sources: sources({ goProxy: proxyUrl, goFlags: '-x' }) }).envImageFor(req),
      new EnvImages({ sources: sources({}) }).envImageFor(req),
    ])) as [EnvImageResult, EnvImageResult];
    for (const r of [withProxy, without]) if (r.ok) built.push(r.image);
    expect(withProxy.key).not.toBe(without.key);

    // With the proxy: built, the modules asked for, no checksum database consulted (go.sum has them).
    if (!withProxy.ok) throw new Error(`the image did not build with the proxy: ${withProxy.detail}`);
    expect(requests).toEqual(expect.arrayContaining([`/${MOD}/@v/${VERSION}.mod`, `/${MOD}/@v/${VERSION}.zip`]));
    expect(requests.filter((u) => !u.startsWith(`/${MOD}/@v/`))).toEqual([]);
    // GOFLAGS=-x made go print every URL it fetched: redacted in the log, which names the proxy only as the configuration's.
    const log = await readFile(withProxy.log!, 'utf8');
    expect(log).toContain('go deps step, GOPROXY from the configuration (FORESIGHT_GOPROXY), GOFLAGS -x');
    expect(log).toContain(`<Go proxy>/${MOD}/@v/${VERSION}.zip`);
    expect(log).not.toContain(proxyUrl);
    expect(log).not.toContain(proxyUrl.replace(/^http:\/\//, ''));
    // Nor in the image: its config, its history.
    const image = docker.getImage(withProxy.image);
    expect(JSON.stringify(await image.inspect())).not.toContain(proxyUrl);
    expect(JSON.stringify(await image.history())).not.toContain(proxyUrl);
    expect(((await image.inspect()) as { Config: { Env: string[] } }).Config.Env).toContain('GOPROXY=off');

    // As the test runs see it: offline, the module from the image's cache, the repository's test passing.
    const gitDir = await absoluteGitDir(repo.dir);
    const run = await runLockedDown(
      docker,
      withProxy.image,
      [
        'set -e',
        `test -f /opt/go/mod/${MOD}@${VERSION}/greet.go && echo module-in-cache`,
        // /src belongs to the host's user: git refuses another uid's repository unless told it is safe.
        "git config --global safe.directory '*'",
        'git clone -q /src /tmp/app',
        `cd /tmp/app && git -c advice.detachedHead=false checkout -q ${commit}`,
        'GOCACHE=/tmp/gocache go test -count=1 ./... 2>&1',
      ].join('\n'),
      [`${gitDir}:/src:ro`],
    );
    expect(run.code, run.out).toBe(0);
    expect(run.out).toContain('module-in-cache');
    expect(run.out).toMatch(/^ok\s+example\.com\/app\/app\b/m);

    // Without it: the offline install's `go mod download` fails, a failure of this candidate naming go's reason.
    if (without.ok) throw new Error('the image built without a proxy');
    expect(without.reason).toBe('env_install_failed');
    expect(without.detail).toMatch(/example\.com\/greet@v1\.0\.0: module lookup disabled by GOPROXY=off/);
    expect(without.detail).toContain('set FORESIGHT_GOPROXY');
    const failedLog = await readFile(without.log, 'utf8');
    expect(failedLog).not.toContain('go deps step');
  }, 240_000);
});
