/** The base tier `foresight-base:<recipe>`, built by image/build-base-image.sh (see core/env/README.md). */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type Docker from 'dockerode';
import { ForesightError } from '../../foundation/errors.ts';
import { connectDocker } from '../connect.ts';
import { withLock } from './lock.ts';
import type { BuildLog } from './docker-image.ts';
import { inspectImage, logLine, stepHeartbeat, tagImage } from './docker-image.ts';
import { formatDuration } from '../../foundation/progress.ts';

export const BASE_REPOSITORY = 'foresight-base';
export const BASE_SCRIPT = fileURLToPath(new URL('./build-base-image.sh', import.meta.url));
/** The Python of the default base image (Debian bookworm). */
export const BASE_PYTHON = '3.11';

/**
 * One base image per era's Python, each Debian's own python3 (the mirror serves these releases); 3.7 is
 * bullseye's PyPy (pypy3 7.3.5), installed into the env image by its apt step (build-scripts.ts).
 */
export const BASE_RELEASES = { '3.9': 'bullseye', '3.11': 'bookworm', '3.13': 'trixie', '3.7': 'bullseye' } as const;
export type BasePython = keyof typeof BASE_RELEASES;
export type BaseRelease = (typeof BASE_RELEASES)[BasePython];
export const BASE_PYTHONS = Object.keys(BASE_RELEASES) as BasePython[];
/** The release of the default base (the one setup.sh builds). */
export const DEFAULT_RELEASE: BaseRelease = 'bookworm';

export interface BaseImage {
  /** `foresight-base:<recipe>`. */
  image: string;
  /** Docker image id (sha256:…): part of every env key. */
  id: string;
  /** The alias pointed at it (foresight-base:bookworm unless FORESIGHT_BASE_IMAGE says otherwise). */
  alias: string;
  built: boolean;
}

/** First 16 hex digits of the sha256 of build-base-image.sh then `release=<release>\n` (the script computes the same). */
export async function baseRecipeHash(script = BASE_SCRIPT, release: BaseRelease = DEFAULT_RELEASE): Promise<string> {
  return createHash('sha256').update(await readFile(script)).update(`release=${release}\n`).digest('hex').slice(0, 16);
}

export async function baseImageTag(script = BASE_SCRIPT, release: BaseRelease = DEFAULT_RELEASE): Promise<string> {
  return `${BASE_REPOSITORY}:${await baseRecipeHash(script, release)}`;
}

/** The alias of a release's base: the configured alias for the default release, else foresight-base:<release>. */
export function releaseAlias(release: BaseRelease, defaultAlias: string = DEFAULT_BASE_ALIAS): string {
  return release === DEFAULT_RELEASE ? defaultAlias : `${BASE_REPOSITORY}:${release}`;
}

export interface EnsureBaseOptions {
  docker?: Docker;
  log?: BuildLog;
  /** Alias to point at the base (default foresight-base:bookworm; config images.baseAlias). */
  alias?: string;
  /** Where build lock files live (config images.lockDir). */
  lockDir?: string | null;
  /** The Debian release (default bookworm); other releases are aliased foresight-base:<release>. */
  release?: BaseRelease;
}

/** The alias of the base image unless the configuration names another (FORESIGHT_BASE_IMAGE). */
export const DEFAULT_BASE_ALIAS = 'foresight-base:bookworm';

/** The base image of a release for the current build script: reused when present, else built (about 90 s). */
export async function ensureBaseImage(opts: EnsureBaseOptions = {}): Promise<BaseImage> {
  const docker = opts.docker ?? connectDocker();
  const release = opts.release ?? DEFAULT_RELEASE;
  const alias = release === DEFAULT_RELEASE ? (opts.alias ?? DEFAULT_BASE_ALIAS) : releaseAlias(release);
  const image = await baseImageTag(BASE_SCRIPT, release);
  const reuse = async (): Promise<BaseImage | null> => {
    const present = await inspectImage(docker, image);
    if (!present) return null;
    const aliased = await inspectImage(docker, alias);
    if (aliased?.Id !== present.Id) await tagImage(docker, image, alias);
    return { image, id: present.Id, alias, built: false };
  };
  const ready = await reuse();
  if (ready) return ready;
  // One build per tag across the processes (and concurrent callers) of this host: the others wait and reuse it.
  return withLock(
    opts.lockDir,
    `base-${image.split(':')[1]}`,
    30 * 60_000,
    async () => (await reuse()) ?? buildBase(docker, image, alias, release, opts.log),
    (ms) => logLine(opts.log, `waiting ${formatDuration(ms)} for another process building ${image}`),
  );
}

async function buildBase(docker: Docker, image: string, alias: string, release: BaseRelease, log: BuildLog | undefined): Promise<BaseImage> {
  if (release !== DEFAULT_RELEASE) logLine(log, `building the Debian ${release} base image ${image} for Python ${pythonOf(release)} (first use; a few minutes, reused after)`);
  let pending = '';
  const beat = stepHeartbeat({ log, what: `building ${image}` });
  const write = (chunk: string): void => {
    beat.onOutput(chunk);
    const lines = (pending + chunk).split('\n');
    pending = lines.pop() ?? '';
    for (const l of lines) if (l.trim()) logLine(log, l);
  };
  const code = await new Promise<number | null>((resolve, reject) => {
    const child = spawn('bash', [BASE_SCRIPT, '--release', release, alias], { stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.setEncoding('utf8').on('data', write);
    child.stderr.setEncoding('utf8').on('data', write);
    child.on('error', reject);
    child.on('close', resolve);
  })
    .catch((err: unknown) => {
      throw new ForesightError(`cannot run ${BASE_SCRIPT}`, { remedy: 'check that bash is installed', cause: err });
    })
    .finally(() => beat.stop());
  if (pending.trim()) logLine(log, pending);
  if (code !== 0) {
    throw new ForesightError(`building the base image ${image} failed (exit ${code})`, {
      remedy: `run \`core/env/image/build-base-image.sh --release ${release}\` and fix what it reports`,
      external: true,
    });
  }
  const info = await inspectImage(docker, image);
  if (!info) {
    throw new ForesightError(`${BASE_SCRIPT} finished but ${image} is missing`, {
      remedy: 'run `docker image ls` and `core/env/build-base-image.sh` by hand',
      external: true,
    });
  }
  return { image, id: info.Id, alias, built: true };
}

/** The release's own python3 (the first key naming it: bullseye is 3.9, not its PyPy). */
function pythonOf(release: BaseRelease): BasePython {
  return BASE_PYTHONS.find((p) => BASE_RELEASES[p] === release)!;
}

async function imagePresent(docker: Docker, name: string): Promise<boolean> {
  try {
    await docker.getImage(name).inspect();
    return true;
  } catch (err) {
    if ((err as { statusCode?: number }).statusCode === 404) return false;
    throw err;
  }
}


export interface EnsureImageOptions {
  docker?: Docker;
  log?: BuildLog;
  /** The base image's alias (config images.baseAlias): that name is built offline when missing. */
  baseAlias?: string;
  lockDir?: string | null;
}

/**
 * Make sure `name` exists locally. The offline base image's alias is built (one build path:
 * ensureBaseImage, about 90 s); any other missing image is an error (no registry is assumed reachable).
 */
export async function ensureImage(name: string, opts: EnsureImageOptions = {}): Promise<void> {
  const docker = opts.docker ?? connectDocker();
  if (await imagePresent(docker, name)) return;
  const alias = opts.baseAlias ?? DEFAULT_BASE_ALIAS;
  if (name !== alias) {
    throw new ForesightError(`Docker image ${name} is not present`, {
      remedy: `build or \`docker load\` it first, or use the offline base image ${alias}`,
      external: true,
    });
  }
  await ensureBaseImage({ docker, alias, lockDir: opts.lockDir, log: opts.log });
}
