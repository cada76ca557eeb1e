/**
 * Environment tiers, each image keyed by a content hash of what built it.
 *
 *  - base  `foresight-base:<recipe>`: Debian bookworm minbase + python3 (venv, pip, pytest) + git +
 *          ca-certificates, built offline with debootstrap by scripts/build-base-image.sh; <recipe>
 *          is the first 16 hex digits of the sha256 of that script. `foresight-base:bookworm` (or
 *          FORESIGHT_BASE_IMAGE) is kept as an alias of it for the demo and the README.
 *  - env   `foresight-env:<key>`, key = hash(base image id, the recipe's build fields, the build
 *          steps, the content of every dependencyFiles match at the commit). Built in a container
 *          from the base: apt-get install systemPackages (the only step with network: Debian's
 *          mirror through the default bridge; the container is cut off after it), `python3 -m venv
 *          /opt/venv`, clone of the commit into /tmp/testbed, the recipe's install commands with
 *          /opt/venv/bin first on PATH and the host's local pip sources mounted read-only (no
 *          network), then `docker commit` with FORESIGHT_PYTHON=/opt/venv/bin/python and PATH.
 *          /tmp is emptied before the commit: the runner script clones its own /tmp/testbed, and an
 *          editable install (`pip install -e .`) then points at the state being tested.
 *
 * Chains of one dependency era share one env image: envImageFor() reuses an image whose tag
 * exists, and concurrent requests for one key build it once (in-process promise map + a lock file
 * per key for other processes on this host).
 *
 * Cache policy (`CacheLevel`, default 'env'):
 *   'env'   keep base and env images across runs; prune the least recently used env images beyond
 *           `keep` (default 30) at the end of a run
 *   'base'  at the end of a run remove the env images the run used; keep the base image
 *   'none'  at the end of a run remove the env images the run used and the base image
 * Last use is Docker's own `Metadata.LastTagTime`, refreshed by re-tagging on every reuse; the
 * creation time is also in the `foresight.env.created` label.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { appendFile, mkdir, open, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type Docker from 'dockerode';
import { ForesightError } from '../../../pipeline/errors.ts';
import { fingerprint } from '../../../pipeline/fingerprint.ts';
import { git } from '../../../pipeline/git.ts';
import { matchesAny } from '../recipes/glob.ts';
import { buildFields, type Recipe } from '../recipes/schema.ts';
import { forceRemove, ownerLabels, PID_LABEL, HOST_LABEL, RUN_LABEL, trackContainer, untrackContainer } from './cleanup.ts';
import { connectDocker } from './connect.ts';
import { assertDockerReachable, baseImageName, type BuildLog } from './docker.ts';
import { runExec } from './exec.ts';
import { pipSources, type PipSources } from './pip-sources.ts';

export const BASE_REPOSITORY = 'foresight-base';
export const ENV_REPOSITORY = 'foresight-env';
export const BASE_SCRIPT = fileURLToPath(new URL('../../../scripts/build-base-image.sh', import.meta.url));
/** Inside env images. */
export const VENV = '/opt/venv';
export const VENV_PYTHON = `${VENV}/bin/python`;
/** The Python of the base image (Debian bookworm). */
export const BASE_PYTHON = '3.11';
const IMAGE_PATH = `${VENV}/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin`;

export const KEY_LABEL = 'foresight.env.key';
export const CREATED_LABEL = 'foresight.env.created';
export const REPO_LABEL = 'foresight.env.repo';
export const COMMIT_LABEL = 'foresight.env.commit';
export const BASE_LABEL = 'foresight.env.base';

export type CacheLevel = 'none' | 'base' | 'env';
export const CACHE_LEVELS: readonly CacheLevel[] = ['none', 'base', 'env'];
export const DEFAULT_CACHE_LEVEL: CacheLevel = 'env';
export const DEFAULT_ENV_KEEP = 30;
/** Default limit of one env build (all steps). */
export const DEFAULT_BUILD_TIMEOUT_SEC = 1800;

const DETAIL_LINES = 25;
const DETAIL_CHARS = 3000;

const statusCode = (err: unknown): number | undefined => (err as { statusCode?: number } | null)?.statusCode;

function dockerError(what: string, err: unknown): ForesightError {
  if (err instanceof ForesightError) return err;
  return new ForesightError(`${what}: ${(err as Error).message}`, {
    remedy: 'check `docker info` and the daemon log',
    external: true,
    cause: err,
  });
}

function logLine(log: BuildLog | undefined, msg: string): void {
  if (!log) return;
  if (typeof log === 'function') log(`${msg}\n`);
  else log.info(msg);
}

async function inspectImage(docker: Docker, name: string): Promise<Docker.ImageInspectInfo | null> {
  try {
    return await docker.getImage(name).inspect();
  } catch (err) {
    if (statusCode(err) === 404) return null;
    throw dockerError(`cannot inspect image ${name}`, err);
  }
}

function splitRef(ref: string): { repo: string; tag: string } {
  const i = ref.lastIndexOf(':');
  if (i <= ref.lastIndexOf('/')) return { repo: ref, tag: 'latest' };
  return { repo: ref.slice(0, i), tag: ref.slice(i + 1) };
}

async function tagImage(docker: Docker, source: string, ref: string): Promise<void> {
  try {
    await docker.getImage(source).tag(splitRef(ref));
  } catch (err) {
    throw dockerError(`cannot tag ${source} as ${ref}`, err);
  }
}

// ------------------------------------------------------------------------------------------ base

export interface BaseImage {
  /** `foresight-base:<recipe>`. */
  image: string;
  /** Docker image id (sha256:…): part of every env key. */
  id: string;
  /** The alias pointed at it (foresight-base:bookworm unless FORESIGHT_BASE_IMAGE says otherwise). */
  alias: string;
  built: boolean;
}

/** First 16 hex digits of the sha256 of scripts/build-base-image.sh (the script computes the same). */
export async function baseRecipeHash(script = BASE_SCRIPT): Promise<string> {
  return createHash('sha256').update(await readFile(script)).digest('hex').slice(0, 16);
}

export async function baseImageTag(script = BASE_SCRIPT): Promise<string> {
  return `${BASE_REPOSITORY}:${await baseRecipeHash(script)}`;
}

export interface EnsureBaseOptions {
  docker?: Docker;
  log?: BuildLog;
  /** Alias to point at the base (default baseImageName(): foresight-base:bookworm). */
  alias?: string;
}

const baseBuilds = new Map<string, Promise<BaseImage>>();

/** The base image for the current build script: reused when present, else built (about 90 s). */
export async function ensureBaseImage(opts: EnsureBaseOptions = {}): Promise<BaseImage> {
  const docker = opts.docker ?? connectDocker();
  const alias = opts.alias ?? baseImageName();
  const image = await baseImageTag();
  const present = await inspectImage(docker, image);
  if (present) {
    const aliased = await inspectImage(docker, alias);
    if (aliased?.Id !== present.Id) await tagImage(docker, image, alias);
    return { image, id: present.Id, alias, built: false };
  }
  let build = baseBuilds.get(image);
  if (!build) {
    build = buildBase(docker, image, alias, opts.log).finally(() => baseBuilds.delete(image));
    baseBuilds.set(image, build);
    return build;
  }
  return { ...(await build), built: false };
}

async function buildBase(docker: Docker, image: string, alias: string, log: BuildLog | undefined): Promise<BaseImage> {
  let pending = '';
  const write = (chunk: string): void => {
    const lines = (pending + chunk).split('\n');
    pending = lines.pop() ?? '';
    for (const l of lines) if (l.trim()) logLine(log, l);
  };
  const code = await new Promise<number | null>((resolve, reject) => {
    const child = spawn('bash', [BASE_SCRIPT, alias], { stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.setEncoding('utf8').on('data', write);
    child.stderr.setEncoding('utf8').on('data', write);
    child.on('error', reject);
    child.on('close', resolve);
  }).catch((err: unknown) => {
    throw new ForesightError(`cannot run ${BASE_SCRIPT}`, { remedy: 'check that bash is installed', cause: err });
  });
  if (pending.trim()) logLine(log, pending);
  if (code !== 0) {
    throw new ForesightError(`building the base image ${image} failed (exit ${code})`, {
      remedy: `run \`scripts/build-base-image.sh\` and fix what it reports`,
      external: true,
    });
  }
  const info = await inspectImage(docker, image);
  if (!info) {
    throw new ForesightError(`scripts/build-base-image.sh finished but ${image} is missing`, {
      remedy: 'run `docker image ls` and `scripts/build-base-image.sh` by hand',
      external: true,
    });
  }
  return { image, id: info.Id, alias, built: true };
}

// ------------------------------------------------------------------------------------------ keys

/** sh single-quoting. */
function q(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

/** The apt step (run with network to Debian's mirror), or null when the recipe needs no packages. */
export function aptScript(recipe: Pick<Recipe, 'systemPackages'>): string | null {
  if (recipe.systemPackages.length === 0) return null;
  const pkgs = recipe.systemPackages.map(q).join(' ');
  return [
    'set -eu',
    'export DEBIAN_FRONTEND=noninteractive',
    `echo '[foresight] $ apt-get install ${recipe.systemPackages.join(' ')}'`,
    'apt-get update -q',
    `apt-get install -y -q --no-install-recommends ${pkgs}`,
    'apt-get clean',
    'rm -rf /var/lib/apt/lists/*',
  ].join('\n');
}

/** The install step (no network): venv, clone of $FORESIGHT_COMMIT, the recipe's commands, cleanup. */
export function installScript(recipe: Pick<Recipe, 'install' | 'runner'>): string {
  const lines = [
    'set -u',
    'step() { printf "\\n[foresight] \\$ %s\\n" "$1"; }',
    'fail() { code=$1; shift; printf "\\n[foresight] FAILED (exit %s): %s\\n" "$code" "$*"; exit 1; }',
    'export GIT_CONFIG_GLOBAL=/tmp/.foresight-build.gitconfig GIT_TERMINAL_PROMPT=0 HOME=/root',
    "git config --global safe.directory '*' || fail $? 'git config'",
    `step 'python3 -m venv ${VENV}'`,
    `python3 -m venv ${VENV} || fail $? 'python3 -m venv ${VENV}'`,
    `export VIRTUAL_ENV=${VENV} PATH=${VENV}/bin:$PATH`,
    'step "git clone /src /tmp/testbed && git checkout $FORESIGHT_COMMIT"',
    'rm -rf /tmp/testbed',
    "git clone -q --no-hardlinks --no-checkout /src /tmp/testbed || fail $? 'git clone /src'",
    'cd /tmp/testbed || fail 1 "no /tmp/testbed"',
    'if ! git cat-file -e "$FORESIGHT_COMMIT^{commit}" 2>/dev/null; then',
    "  git fetch -q origin '+refs/*:refs/foresight/*' >/dev/null 2>&1",
    'fi',
    'git -c advice.detachedHead=false checkout -qf "$FORESIGHT_COMMIT" || fail $? "git checkout $FORESIGHT_COMMIT"',
  ];
  for (const cmd of recipe.install) {
    lines.push(`step ${q(cmd)}`, `(cd /tmp/testbed && sh -c ${q(cmd)}) || fail $? ${q(cmd)}`);
  }
  if (recipe.runner === 'pytest') {
    const ensure = 'python -m pytest --version >/dev/null 2>&1 || pip install pytest';
    lines.push(`step ${q(ensure)}`, `(cd /tmp/testbed && ${ensure}) || fail $? ${q(ensure)}`);
  }
  lines.push(
    "step 'pip freeze'",
    'pip freeze --all 2>&1 || true',
    'cd /',
    // The runner clones its own /tmp/testbed as an unprivileged user: leave /tmp empty.
    'find /tmp -mindepth 1 -maxdepth 1 -exec rm -rf {} + 2>/dev/null || true',
    'rm -rf /root/.cache',
    "echo '[foresight] env ready'",
  );
  return lines.join('\n');
}

export interface DependencyFile {
  path: string;
  /** git blob id: a hash of the file's content. */
  blob: string;
}

/** The files matching the recipe's dependencyFiles at `commit`, with their content ids (no checkout). */
export async function dependencyFiles(clone: string, commit: string, globs: readonly string[]): Promise<DependencyFile[]> {
  const out = await git(clone, ['ls-tree', '-r', '-z', '--full-tree', commit]);
  const files: DependencyFile[] = [];
  for (const rec of out.split('\0')) {
    const tab = rec.indexOf('\t');
    if (tab < 0) continue;
    const [, type, blob] = rec.slice(0, tab).split(' ');
    const p = rec.slice(tab + 1);
    if (type === 'blob' && blob && matchesAny(p, globs)) files.push({ path: p, blob });
  }
  return files.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

export interface EnvKeyInput {
  clone: string;
  commit: string;
  recipe: Recipe;
  /** Docker id of the base image. */
  baseId: string;
}

/** The env image key (24 hex digits) and the dependency files it covers. */
export async function envImageKey(input: EnvKeyInput): Promise<{ key: string; files: DependencyFile[] }> {
  const files = await dependencyFiles(input.clone, input.commit, input.recipe.dependencyFiles);
  const key = fingerprint(
    'foresight-env/1',
    input.baseId,
    buildFields(input.recipe),
    aptScript(input.recipe) ?? '',
    installScript(input.recipe),
    files,
  ).slice(0, 24);
  return { key, files };
}

// ------------------------------------------------------------------------------------------ locks

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Where lock files live (one per key, across processes on this host). */
export function lockDir(env: NodeJS.ProcessEnv = process.env): string {
  return env['FORESIGHT_LOCK_DIR'] || path.join(tmpdir(), 'foresight-locks');
}

/** Run `fn` holding an exclusive lock file; a lock of a dead process, or older than staleMs, is broken. */
async function withLock<T>(name: string, staleMs: number, fn: () => Promise<T>): Promise<T> {
  const dir = lockDir();
  await mkdir(dir, { recursive: true });
  const file = path.join(dir, `${name}.lock`);
  const me = hostname();
  for (;;) {
    try {
      const fh = await open(file, 'wx');
      await fh.writeFile(JSON.stringify({ pid: process.pid, host: me, since: new Date().toISOString() }));
      await fh.close();
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const [text, st] = await Promise.all([readFile(file, 'utf8').catch(() => ''), stat(file).catch(() => null)]);
      let owner: { pid?: number; host?: string } = {};
      try {
        owner = JSON.parse(text) as typeof owner;
      } catch {
        /* being written */
      }
      const dead = owner.host === me && typeof owner.pid === 'number' && owner.pid !== process.pid && !pidAlive(owner.pid);
      const old = st !== null && Date.now() - st.mtimeMs > staleMs;
      if (dead || old || !st) {
        await rm(file, { force: true });
        continue;
      }
      await new Promise((r) => setTimeout(r, 500));
    }
  }
  try {
    return await fn();
  } finally {
    await rm(file, { force: true });
  }
}

// ------------------------------------------------------------------------------------------ env

export interface EnvImageRequest {
  /** The clone (work tree or git dir) read with git ls-tree / show. */
  clone: string;
  /** Host path of the .git directory mounted read-only at /src (default: the clone's). */
  gitDir?: string;
  /** `owner/name` (labels and log names). */
  repo: string;
  commit: string;
  recipe: Recipe;
  /** Progress lines (a logger or a chunk callback). */
  log?: BuildLog;
  /** Directory of the build logs (default <tmpdir>/foresight-env-logs). */
  logDir?: string;
  docker?: Docker;
  /** Limit of the whole build (default 1800 s): past it the build fails as env_install_failed. */
  timeoutSec?: number;
}

interface EnvCommon {
  /** `foresight-env:<key>`. */
  image: string;
  key: string;
  /** The base image it is (or would be) built on. */
  baseImage: string;
  /** Dependency files that keyed it. */
  dependencyFiles: DependencyFile[];
  durationMs: number;
}

export type EnvImageResult =
  | (EnvCommon & {
      ok: true;
      /** True only for the one call that built the image (joiners of a concurrent build get false). */
      built: boolean;
      /** Build log path (null when the image was reused and its log is not in logDir). */
      log: string | null;
    })
  | (EnvCommon & {
      ok: false;
      reason: 'env_install_failed';
      built: false;
      /** Build log path. */
      log: string;
      /** The last lines of the failing step's output (the error). */
      detail: string;
    });

export function envImageTag(key: string): string {
  return `${ENV_REPOSITORY}:${key}`;
}

function defaultLogDir(): string {
  return path.join(tmpdir(), 'foresight-env-logs');
}

let pipMemo: Promise<PipSources> | null = null;
/** The host's pip sources, read once per process. */
function hostPipSources(): Promise<PipSources> {
  pipMemo ??= pipSources().catch((err: unknown) => {
    pipMemo = null;
    throw err;
  });
  return pipMemo;
}

const envBuilds = new Map<string, Promise<EnvImageResult>>();
/** Keys whose build failed in this process: not retried (the install is deterministic and offline). */
const envFailures = new Map<string, EnvImageResult>();

async function resolveGitDir(clone: string, gitDir: string | undefined): Promise<string> {
  if (gitDir) {
    const abs = path.resolve(gitDir);
    const dotGit = path.join(abs, '.git');
    return (await stat(dotGit).catch(() => null))?.isDirectory() ? dotGit : abs;
  }
  return (await git(clone, ['rev-parse', '--absolute-git-dir'])).trim();
}

/**
 * The env image for `recipe` at `commit`: reused when its tag exists, else built. An install
 * failure resolves to `{ ok: false, reason: 'env_install_failed', log, detail }` (never throws for
 * that); Docker being unreachable or failing throws a ForesightError.
 */
export async function envImageFor(req: EnvImageRequest): Promise<EnvImageResult> {
  const t0 = Date.now();
  const docker = req.docker ?? connectDocker();
  await assertDockerReachable(docker);
  const base = await ensureBaseImage({ docker, log: req.log });
  const { key, files } = await envImageKey({ clone: req.clone, commit: req.commit, recipe: req.recipe, baseId: base.id });
  const image = envImageTag(key);
  const common = { image, key, baseImage: base.image, dependencyFiles: files };
  const logDir = req.logDir ?? defaultLogDir();
  const logPath = path.join(logDir, `${ENV_REPOSITORY}-${key}.log`);

  const failed = envFailures.get(key);
  if (failed) return { ...failed, durationMs: Date.now() - t0 };
  const inflight = envBuilds.get(key);
  if (inflight) {
    const res = await inflight;
    return { ...res, built: false, durationMs: Date.now() - t0 } as EnvImageResult;
  }
  if (await inspectImage(docker, image)) {
    await touchImage(image, docker);
    const log = (await stat(logPath).catch(() => null)) ? logPath : null;
    return { ok: true, built: false, log, ...common, durationMs: Date.now() - t0 };
  }
  const build = withLock(`env-${key}`, ((req.timeoutSec ?? DEFAULT_BUILD_TIMEOUT_SEC) + 120) * 1000, async () => {
    // Another process may have built it while we waited for the lock.
    if (await inspectImage(docker, image)) {
      await touchImage(image, docker);
      const log = (await stat(logPath).catch(() => null)) ? logPath : null;
      return { ok: true as const, built: false, log, ...common, durationMs: Date.now() - t0 };
    }
    return buildEnv(docker, req, base, common, logPath, t0);
  });
  envBuilds.set(key, build);
  try {
    const res = await build;
    if (!res.ok) envFailures.set(key, res);
    return res;
  } finally {
    envBuilds.delete(key);
  }
}

/** Forget the failures remembered by this process (tests; a rerun after fixing the wheels). */
export function forgetEnvFailures(): void {
  envFailures.clear();
}

function lastLines(text: string): string {
  const lines = text.split('\n').map((l) => l.trimEnd()).filter((l) => l.trim() !== '');
  const tail = lines.slice(-DETAIL_LINES).join('\n');
  return tail.length > DETAIL_CHARS ? tail.slice(-DETAIL_CHARS) : tail;
}

async function buildEnv(
  docker: Docker,
  req: EnvImageRequest,
  base: BaseImage,
  common: Omit<EnvCommon, 'durationMs'>,
  logPath: string,
  t0: number,
): Promise<EnvImageResult> {
  const timeoutSec = req.timeoutSec ?? DEFAULT_BUILD_TIMEOUT_SEC;
  const deadline = t0 + timeoutSec * 1000;
  const gitDir = await resolveGitDir(req.clone, req.gitDir);
  const pip: PipSources = await hostPipSources();
  const apt = aptScript(req.recipe);
  const install = installScript(req.recipe);
  await mkdir(path.dirname(logPath), { recursive: true });
  const header = [
    `# ${common.image}`,
    `# repo ${req.repo} commit ${req.commit}`,
    `# base ${base.image} (${base.id})`,
    `# recipe ${JSON.stringify(buildFields(req.recipe))}`,
    `# dependency files ${common.dependencyFiles.map((f) => `${f.path}@${f.blob.slice(0, 12)}`).join(' ') || '(none)'}`,
    ...pip.notes.map((n) => `# ${n}`),
    ...(req.recipe.python === BASE_PYTHON ? [] : [`# note: the recipe names Python ${req.recipe.python}; the image has ${BASE_PYTHON} (Debian bookworm)`]),
    `# started ${new Date().toISOString()}`,
    '',
  ];
  await writeFile(logPath, header.join('\n'));
  const append = (text: string): Promise<void> => appendFile(logPath, text.endsWith('\n') ? text : `${text}\n`);
  logLine(req.log, `building ${common.image} for ${req.repo}@${req.commit.slice(0, 12)} (log: ${logPath})`);

  const fail = async (detail: string): Promise<EnvImageResult> => {
    await append(`\n# FAILED after ${Math.round((Date.now() - t0) / 1000)} s\n`);
    logLine(req.log, `${common.image}: install failed (see ${logPath})`);
    return { ok: false, reason: 'env_install_failed', built: false, log: logPath, detail, ...common, durationMs: Date.now() - t0 };
  };

  let container: Docker.Container;
  try {
    container = await docker.createContainer({
      Image: base.image,
      Cmd: ['sleep', 'infinity'],
      User: '0:0',
      WorkingDir: '/',
      Labels: {
        ...ownerLabels(),
        [KEY_LABEL]: common.key,
        [REPO_LABEL]: req.repo,
        [COMMIT_LABEL]: req.commit,
        [BASE_LABEL]: base.image,
        [CREATED_LABEL]: new Date().toISOString(),
      },
      NetworkDisabled: apt === null,
      HostConfig: {
        NetworkMode: apt === null ? 'none' : 'bridge',
        Binds: [`${gitDir}:/src:ro`, ...pip.binds],
        SecurityOpt: ['no-new-privileges'],
        Init: true,
      },
    });
  } catch (err) {
    throw dockerError(`cannot create the env build container from ${base.image}`, err);
  }
  trackContainer(docker, container.id);
  try {
    try {
      await container.start();
    } catch (err) {
      throw dockerError('cannot start the env build container', err);
    }
    const exec = async (script: string, env: string[]): Promise<{ exitCode: number | null; text: string; timedOut: boolean }> => {
      const left = deadline - Date.now();
      if (left <= 0) return { exitCode: null, text: '', timedOut: true };
      try {
        const res = await runExec(container, ['env', ...env, 'sh', '-c', script], {
          capture: 'combined',
          maxChars: 4 * 1024 * 1024,
          deadlineMs: left,
          onDeadline: async () => {
            await container.kill().catch(() => undefined);
          },
        });
        await append(res.text);
        return { exitCode: res.exitCode, text: res.text, timedOut: res.deadlineHit };
      } catch (err) {
        throw dockerError('docker exec in the env build container failed', err);
      }
    };

    if (apt !== null) {
      const res = await exec(apt, []);
      if (res.timedOut) return await fail(`timed out after ${timeoutSec} s during apt-get\n${lastLines(res.text)}`);
      if (res.exitCode !== 0) {
        return await fail(`apt-get install ${req.recipe.systemPackages.join(' ')} failed (exit ${res.exitCode})\n${lastLines(res.text)}`);
      }
      try {
        await docker.getNetwork('bridge').disconnect({ Container: container.id, Force: true });
      } catch (err) {
        throw dockerError('cannot disconnect the env build container from the network', err);
      }
      await append('# network disconnected\n');
    }

    const res = await exec(install, [`FORESIGHT_COMMIT=${req.commit}`, ...pip.env]);
    if (res.timedOut) return await fail(`timed out after ${timeoutSec} s\n${lastLines(res.text)}`);
    if (res.exitCode !== 0) return await fail(lastLines(res.text));

    const { repo, tag } = splitRef(common.image);
    try {
      await container.commit({
        repo,
        tag,
        comment: `foresight env for ${req.repo}@${req.commit}`,
        changes: [
          `ENV FORESIGHT_PYTHON=${VENV_PYTHON} VIRTUAL_ENV=${VENV} PATH=${IMAGE_PATH}`,
          'WORKDIR /tmp',
          // The build container's owner labels must not mark containers of this image as stale.
          `LABEL ${RUN_LABEL}="" ${PID_LABEL}="" ${HOST_LABEL}=""`,
        ],
      });
    } catch (err) {
      throw dockerError(`cannot commit ${common.image}`, err);
    }
    await append(`\n# committed ${common.image} after ${Math.round((Date.now() - t0) / 1000)} s\n`);
    logLine(req.log, `built ${common.image} in ${Math.round((Date.now() - t0) / 1000)} s`);
    return { ok: true, built: true, log: logPath, ...common, durationMs: Date.now() - t0 };
  } finally {
    await forceRemove(docker, container.id).catch(() => undefined);
    untrackContainer(container.id);
  }
}

// ------------------------------------------------------------------------------------------ cache

/** Mark an image as used now (re-tagging refreshes Docker's Metadata.LastTagTime). */
export async function touchImage(image: string, docker: Docker = connectDocker()): Promise<void> {
  await tagImage(docker, image, image);
}

export interface CachedImage {
  /** One `repository:tag` of the image. */
  ref: string;
  id: string;
  created: Date;
  lastUsed: Date;
}

/** The images of `repository` (default foresight-env), most recently used first. */
export async function listEnvImages(opts: { docker?: Docker; repository?: string } = {}): Promise<CachedImage[]> {
  const docker = opts.docker ?? connectDocker();
  const repository = opts.repository ?? ENV_REPOSITORY;
  let list: Docker.ImageInfo[];
  try {
    list = await docker.listImages({ filters: { reference: [repository] } });
  } catch (err) {
    throw dockerError('cannot list images', err);
  }
  const out: CachedImage[] = [];
  for (const img of list) {
    const info = await inspectImage(docker, img.Id);
    if (!info) continue;
    const created = new Date(info.Config?.Labels?.[CREATED_LABEL] || info.Created);
    const tagged = new Date((info as { Metadata?: { LastTagTime?: string } }).Metadata?.LastTagTime ?? 0);
    const lastUsed = tagged.getTime() > created.getTime() ? tagged : created;
    for (const ref of img.RepoTags ?? []) {
      if (splitRef(ref).repo === repository) out.push({ ref, id: img.Id, created, lastUsed });
    }
  }
  return out.sort((a, b) => b.lastUsed.getTime() - a.lastUsed.getTime() || (a.ref < b.ref ? -1 : 1));
}

async function removeImage(docker: Docker, ref: string): Promise<boolean> {
  try {
    await docker.getImage(ref).remove({ force: false, noprune: false });
    return true;
  } catch (err) {
    const code = statusCode(err);
    if (code === 404 || code === 409) return false; // gone already, or a container uses it
    throw dockerError(`cannot remove image ${ref}`, err);
  }
}

/**
 * Remove the least recently used env images beyond the `keep` most recent. Images in use by a
 * container are left alone. Returns the refs removed.
 */
export async function pruneImages(opts: { keep: number; docker?: Docker; repository?: string }): Promise<string[]> {
  if (!Number.isInteger(opts.keep) || opts.keep < 0) {
    throw new ForesightError(`pruneImages: keep must be a whole number ≥ 0, got ${opts.keep}`, { remedy: 'pass keep: N' });
  }
  const docker = opts.docker ?? connectDocker();
  const images = await listEnvImages({ docker, repository: opts.repository });
  const removed: string[] = [];
  for (const img of images.slice(opts.keep)) if (await removeImage(docker, img.ref)) removed.push(img.ref);
  return removed;
}

export interface CachePolicyOptions {
  /** The env images (refs) this run used. */
  used: readonly string[];
  /** 'env' only: how many env images to keep (default DEFAULT_ENV_KEEP). */
  keep?: number;
  docker?: Docker;
}

/** Apply the cache policy at the end of a run; returns the refs removed. See the header comment. */
export async function applyCachePolicy(level: CacheLevel, opts: CachePolicyOptions): Promise<string[]> {
  const docker = opts.docker ?? connectDocker();
  if (level === 'env') return pruneImages({ keep: opts.keep ?? DEFAULT_ENV_KEEP, docker });
  const removed: string[] = [];
  for (const ref of new Set(opts.used)) if (await removeImage(docker, ref)) removed.push(ref);
  if (level === 'none') {
    const base = await baseImageTag();
    const info = await inspectImage(docker, base);
    const alias = baseImageName();
    const aliasInfo = await inspectImage(docker, alias);
    if (info && aliasInfo?.Id === info.Id && (await removeImage(docker, alias))) removed.push(alias);
    if (info && (await removeImage(docker, base))) removed.push(base);
  }
  return removed;
}

/** FORESIGHT_IMAGE_CACHE (none|base|env, default env) and FORESIGHT_ENV_KEEP (default 30). */
export function cacheSettingsFromEnv(env: NodeJS.ProcessEnv = process.env): { level: CacheLevel; keep: number } {
  const raw = env['FORESIGHT_IMAGE_CACHE'] || DEFAULT_CACHE_LEVEL;
  if (!(CACHE_LEVELS as readonly string[]).includes(raw)) {
    throw new ForesightError(`FORESIGHT_IMAGE_CACHE=${raw} is not a cache level`, { remedy: 'use none, base or env' });
  }
  const keepRaw = env['FORESIGHT_ENV_KEEP'];
  const keep = keepRaw ? Number(keepRaw) : DEFAULT_ENV_KEEP;
  if (!Number.isInteger(keep) || keep < 0) {
    throw new ForesightError(`FORESIGHT_ENV_KEEP=${keepRaw} is not a whole number`, { remedy: 'set it to how many env images to keep, e.g. 30' });
  }
  return { level: raw as CacheLevel, keep };
}
