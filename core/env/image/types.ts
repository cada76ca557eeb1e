/** The request and result types of the env tier (see core/env/README.md): shared by env-images.ts and build.ts. */
import type Docker from 'dockerode';
import type { Recipe } from '../recipes/schema.ts';
import type { BuildLog } from './docker-image.ts';
import type { DependencyFile } from './key.ts';

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
  /** Limits of the build container (defaults in build.ts: 4 GiB, 1024 pids); not part of the image's key. */
  limits?: Partial<EnvBuildLimits>;
  /** The run's signal: an abort removes the build container at once. */
  signal?: AbortSignal;
}

/**
 * Where env builds fetch packages from, as the configuration says (settings `packages.*`, secrets npmToken
 * and goProxy). Lockfiles and go.sum pin what is fetched, so neither the registry, the token nor the proxy
 * keys an image; a Go image's key covers its go deps step (and GOFLAGS) when a proxy makes it run, so a
 * candidate rejected offline is tried again once one is configured. It reaches a build only as the
 * variables of the step that downloads, never an image layer, a log or a row.
 */
export interface PackageSources {
  /** The npm registry (no credentials); null: the host npm's `registry`. */
  npmRegistry: string | null;
  /** That registry's token; null: the host npmrc's for it, if any. */
  npmToken: string | null;
  /** GOPROXY of `go mod download`; null: modules only from vendor/ (GOPROXY=off). */
  goProxy: string | null;
  /** GOFLAGS of that download. */
  goFlags: string | null;
}

/** What an env build container is held to: its install step runs the repository's own code (setup.py, build backends). */
export interface EnvBuildLimits {
  /** Memory, swap included (MemorySwap = Memory). */
  memoryBytes: number;
  pidsLimit: number;
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

