/** The base tier `foresight-base:<recipe>`, built by image/build-base-image.sh (see core/env/README.md). */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type Docker from 'dockerode';
import { ForesightError } from '../../errors.ts';
import { connectDocker } from '../connect.ts';
import { withLock } from './lock.ts';
import type { BuildLog } from './docker-image.ts';
import { inspectImage, logLine, tagImage } from './docker-image.ts';

export const BASE_REPOSITORY = 'foresight-base';
export const BASE_SCRIPT = fileURLToPath(new URL('./build-base-image.sh', import.meta.url));
/** The Python of the base image (Debian bookworm). */
export const BASE_PYTHON = '3.11';

export interface BaseImage {
  /** `foresight-base:<recipe>`. */
  image: string;
  /** Docker image id (sha256:…): part of every env key. */
  id: string;
  /** The alias pointed at it (foresight-base:bookworm unless FORESIGHT_BASE_IMAGE says otherwise). */
  alias: string;
  built: boolean;
}

/** First 16 hex digits of the sha256 of core/env/build-base-image.sh (the script computes the same). */
export async function baseRecipeHash(script = BASE_SCRIPT): Promise<string> {
  return createHash('sha256').update(await readFile(script)).digest('hex').slice(0, 16);
}

export async function baseImageTag(script = BASE_SCRIPT): Promise<string> {
  return `${BASE_REPOSITORY}:${await baseRecipeHash(script)}`;
}

export interface EnsureBaseOptions {
  docker?: Docker;
  log?: BuildLog;
  /** Alias to point at the base (default foresight-base:bookworm; config images.baseAlias). */
  alias?: string;
  /** Where build lock files live (config images.lockDir). */
  lockDir?: string | null;
}

/** The alias of the base image unless the configuration names another (FORESIGHT_BASE_IMAGE). */
export const DEFAULT_BASE_ALIAS = 'foresight-base:bookworm';

/** The base image for the current build script: reused when present, else built (about 90 s). */
export async function ensureBaseImage(opts: EnsureBaseOptions = {}): Promise<BaseImage> {
  const docker = opts.docker ?? connectDocker();
  const alias = opts.alias ?? DEFAULT_BASE_ALIAS;
  const image = await baseImageTag();
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
  return withLock(opts.lockDir, `base-${image.split(':')[1]}`, 30 * 60_000, async () => (await reuse()) ?? buildBase(docker, image, alias, opts.log));
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
      remedy: `run \`core/env/build-base-image.sh\` and fix what it reports`,
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
