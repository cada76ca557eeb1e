/**
 * The env tier `foresight-env:<key>`: envImageFor() reuses the image of a key or has it built once
 * (in-process promise map + a lock file per key); see images.ts.
 */
import { stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type Docker from 'dockerode';
import type { Recipe } from './recipes/schema.ts';
import { ensureBaseImage } from './base-image.ts';
import { withLock } from './build-lock.ts';
import { connectDocker } from './connect.ts';
import { assertDockerReachable, type BuildLog } from './docker.ts';
import { buildEnv, DEFAULT_BUILD_TIMEOUT_SEC } from './env-build.ts';
import { ENV_REPOSITORY, envImageKey, envImageTag, type DependencyFile } from './env-key.ts';
import { inspectImage } from './image-docker.ts';
import { touchImage } from './image-cache.ts';

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

export interface EnvCommon {
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

function defaultLogDir(): string {
  return path.join(tmpdir(), 'foresight-env-logs');
}

const envBuilds = new Map<string, Promise<EnvImageResult>>();
/** Keys whose build failed in this process: not retried (the install is deterministic and offline). */
const envFailures = new Map<string, EnvImageResult>();

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
