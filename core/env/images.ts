/**
 * Environment tiers, each image keyed by a content hash of what built it.
 *
 *  - base  `foresight-base:<recipe>`: Debian bookworm minbase + python3 (venv, pip, pytest) + git +
 *          ca-certificates, built offline with debootstrap by core/env/build-base-image.sh; <recipe>
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
 *
 * This module only re-exports; the tiers live in the files next to it:
 *   base-image.ts     the base tier (core/env/build-base-image.sh, tag from its hash)
 *   build-scripts.ts  the apt and install scripts run in the env build container
 *   env-key.ts        the env key (recipe build fields + dependency files), tag and labels
 *   env-image.ts      envImageFor(): reuse, in-process build map, failures remembered
 *   env-build.ts      one env build: the build container, its steps, docker commit
 *   build-lock.ts     lock files per key across processes
 *   image-cache.ts    the cache policy: last use, pruning, removal at the end of a run
 *   image-docker.ts   Docker image helpers shared by the above
 */
export { BASE_PYTHON, BASE_REPOSITORY, BASE_SCRIPT, baseImageTag, baseRecipeHash, ensureBaseImage } from './base-image.ts';
export type { BaseImage, EnsureBaseOptions } from './base-image.ts';
export { aptScript, installScript, VENV, VENV_PYTHON } from './build-scripts.ts';
export {
  BASE_LABEL,
  COMMIT_LABEL,
  CREATED_LABEL,
  dependencyFiles,
  ENV_REPOSITORY,
  envImageKey,
  envImageTag,
  KEY_LABEL,
  REPO_LABEL,
} from './env-key.ts';
export type { DependencyFile, EnvKeyInput } from './env-key.ts';
export { defaultLockDir } from './build-lock.ts';
export { DEFAULT_BUILD_TIMEOUT_SEC } from './env-build.ts';
export { EnvImages, envImageFor } from './env-image.ts';
export type { EnvImagesOptions } from './env-image.ts';
export type { EnvImageRequest, EnvImageResult } from './image-types.ts';
export {
  applyCachePolicy,
  CACHE_LEVELS,
  DEFAULT_CACHE_LEVEL,
  DEFAULT_ENV_KEEP,
  listEnvImages,
  pruneImages,
  touchImage,
} from './image-cache.ts';
export type { CacheLevel, CachedImage, CachePolicyOptions } from './image-cache.ts';
