/**
 * The env tier `foresight-env:<key>` (see core/env/README.md). An `EnvImages` belongs to one run: it reuses the
 * image of a key or has it built once (its own in-flight map + a lock file per key for other processes),
 * remembers failed keys for the rest of the run (the install is deterministic and offline), and reads the
 * host's pip sources once. Nothing of it outlives the run.
 */
import { stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type Docker from 'dockerode';
import { DEFAULT_BASE_ALIAS, DEFAULT_RELEASE, ensureBaseImage, type BaseImage, type BaseRelease } from './base.ts';
import { releaseOf } from './release.ts';

export { releaseOf } from './release.ts';
import { withLock } from './lock.ts';
import { connectDocker } from '../connect.ts';
import { assertDockerReachable } from '../daemon.ts';
import type { BuildLog } from './docker-image.ts';
import { buildEnv, DEFAULT_BUILD_TIMEOUT_SEC } from './build.ts';
import { ENV_REPOSITORY, envImageKey, envImageTag } from './key.ts';
import { touchImage } from './cache.ts';
import { inspectImage, logLine } from './docker-image.ts';
import { formatDuration } from '../../foundation/progress.ts';
import type { EnvImageRequest, EnvImageResult, PackageSources } from './types.ts';
import { pipSources, type PipSources } from './pip-sources.ts';

export type { EnvCommon, EnvImageRequest, EnvImageResult } from './types.ts';

export interface EnvImagesOptions {
  docker?: Docker;
  /** The alias pointed at the base image (config images.baseAlias). */
  baseAlias?: string;
  /** Where build lock files live (config images.lockDir; default <tmpdir>/foresight-locks). */
  lockDir?: string | null;
  /** Progress lines of base builds. */
  log?: BuildLog;
  /** Where builds fetch packages (default: the host npm's registry and token, no Go proxy). */
  sources?: PackageSources;
}

function defaultLogDir(): string {
  return path.join(tmpdir(), 'foresight-env-logs');
}

export class EnvImages {
  readonly docker: Docker;
  private readonly builds = new Map<string, Promise<EnvImageResult>>();
  private readonly failures = new Map<string, EnvImageResult>();
  private readonly bases = new Map<BaseRelease, Promise<BaseImage>>();
  private pip: Promise<PipSources> | null = null;

  constructor(private readonly opts: EnvImagesOptions = {}) {
    this.docker = opts.docker ?? connectDocker();
  }

  /** Where this run's builds fetch packages (a Go image's go deps step keys its image). */
  get sources(): PackageSources | undefined {
    return this.opts.sources;
  }

  /** A release's base image (default bookworm), reused or built once for this run. */
  ensureBase(log?: BuildLog, release: BaseRelease = DEFAULT_RELEASE): Promise<BaseImage> {
    let base = this.bases.get(release);
    if (!base) {
      base = ensureBaseImage({ docker: this.docker, alias: this.opts.baseAlias ?? DEFAULT_BASE_ALIAS, lockDir: this.opts.lockDir, log: log ?? this.opts.log, release }).catch((err: unknown) => {
        this.bases.delete(release);
        throw err;
      });
      this.bases.set(release, base);
    }
    return base;
  }

  private pipSources(): Promise<PipSources> {
    this.pip ??= pipSources().catch((err: unknown) => {
      this.pip = null;
      throw err;
    });
    return this.pip;
  }

  /**
   * The env image for `recipe` at `commit`: reused when its tag exists, else built. An install failure
   * resolves to `{ ok: false, reason: 'env_install_failed', log, detail }` (never throws for that); Docker
   * being unreachable or failing throws a ForesightError.
   */
  async envImageFor(req: EnvImageRequest): Promise<EnvImageResult> {
    const t0 = Date.now();
    const docker = req.docker ?? this.docker;
    await assertDockerReachable(docker);
    const base = await this.ensureBase(req.log, releaseOf(req.recipe.python));
    const { key, files } = await envImageKey({ clone: req.clone, commit: req.commit, recipe: req.recipe, baseId: base.id, sources: this.opts.sources });
    const image = envImageTag(key);
    const common = { image, key, baseImage: base.image, dependencyFiles: files };
    const logPath = path.join(req.logDir ?? defaultLogDir(), `${ENV_REPOSITORY}-${key}.log`);
    const reused = async (): Promise<EnvImageResult> => {
      await touchImage(image, docker);
      const log = (await stat(logPath).catch(() => null)) ? logPath : null;
      return { ok: true, built: false, log, ...common, durationMs: Date.now() - t0 };
    };

    const failed = this.failures.get(key);
    if (failed) return { ...failed, durationMs: Date.now() - t0 };
    const inflight = this.builds.get(key);
    if (inflight) {
      const res = await inflight;
      return { ...res, built: false, durationMs: Date.now() - t0 } as EnvImageResult;
    }
    if (await inspectImage(docker, image)) return reused();
    const timeoutSec = req.timeoutSec ?? DEFAULT_BUILD_TIMEOUT_SEC;
    const build = withLock(
      this.opts.lockDir,
      `env-${key}`,
      (timeoutSec + 120) * 1000,
      async () => {
        // Another process may have built it while we waited for the lock.
        if (await inspectImage(docker, image)) return reused();
        return buildEnv(docker, req, base, common, logPath, t0, () => this.pipSources(), this.opts.sources);
      },
      (ms) => logLine(req.log, `waiting ${formatDuration(ms)} for another process building ${image}`),
    );
    this.builds.set(key, build);
    try {
      const res = await build;
      if (!res.ok) this.failures.set(key, res);
      return res;
    } finally {
      this.builds.delete(key);
    }
  }
}

/** One env image outside a run (tests, scripts): a fresh `EnvImages` with default settings. */
export function envImageFor(req: EnvImageRequest): Promise<EnvImageResult> {
  return new EnvImages({ docker: req.docker }).envImageFor(req);
}
