/**
 * Test environments, the one surface the stages (and later eval and bisection) use:
 *  - image/      base tier (Debian bullseye/bookworm/trixie from debootstrap, tagged by the build script's hash), env tier
 *                (`foresight-env:<key>`: the recipe's install in /opt/venv, keyed by the recipe's build
 *                fields and the dependency files' content), build locks, the cache policy
 *  - container/  one locked-down container per environment (no network, limits, non-root), states run as
 *                execs with bounded output and deadlines, removed on close or when the run aborts
 *  - services/   database backends (sqlite: none; postgresql, postgis, mysql: a sidecar on an internal network)
 *  - recipes/, runners/  the plug-ins that shape them
 */
export { assertDockerReachable, connectDocker, dockerEndpoint, isDockerReachable } from './daemon.ts';
export { BASE_PYTHON, BASE_PYTHONS, BASE_RELEASES, BASE_REPOSITORY, BASE_SCRIPT, baseImageTag, baseRecipeHash, DEFAULT_BASE_ALIAS, DEFAULT_RELEASE, ensureBaseImage, ensureImage, releaseAlias } from './image/base.ts';
export type { BaseImage, BasePython, BaseRelease, EnsureBaseOptions, EnsureImageOptions } from './image/base.ts';
export { releaseOf } from './image/release.ts';
export { aptScript, BUILD_USER, installScript, VENV, VENV_PYTHON } from './image/build-scripts.ts';
export { APT_CAPS, DEFAULT_BUILD_MEMORY_BYTES, DEFAULT_BUILD_PIDS_LIMIT, DEFAULT_BUILD_TIMEOUT_SEC, envBuildHostConfig, envBuildLimits, ROOT_STEP_CAPS } from './image/build.ts';
export type { BuildLog } from './image/docker-image.ts';
export { inspectImage } from './image/docker-image.ts';
export { EnvImages, envImageFor } from './image/env-images.ts';
export { DEFAULT_EVAL_BUILD_TIMEOUT_SEC, ensureEvalImage, EVAL_COMMIT_LABEL, EVAL_CREATED_LABEL, EVAL_ENV_LABEL, EVAL_HISTORIES, EVAL_HISTORY_LABEL, EVAL_KEY_LABEL, EVAL_RECIPE_VERSION, EVAL_REPO_PATH, EVAL_REPOSITORY, EVAL_RUNNER_PATH, EVAL_UID, evalImageTag, TIER_LABEL } from './image/eval-image.ts';
export type { EvalHistory, EvalImageOptions, EvalImageResult } from './image/eval-image.ts';
export { pushedRef, pushImage } from './image/push.ts';
export type { PushOptions, PushResult } from './image/push.ts';
export type { EnvImagesOptions } from './image/env-images.ts';
export { BASE_LABEL, COMMIT_LABEL, CREATED_LABEL, dependencyFiles, ENV_REPOSITORY, envImageKey, envImageTag, KEY_LABEL, REPO_LABEL } from './image/key.ts';
export type { DependencyFile, EnvKeyInput } from './image/key.ts';
export { defaultLockDir } from './image/lock.ts';
export type { EnvBuildLimits, EnvImageRequest, EnvImageResult } from './image/types.ts';
export { applyCachePolicy, CACHE_LEVELS, DEFAULT_CACHE_LEVEL, DEFAULT_ENV_KEEP, listEnvImages, pruneImages, touchImage } from './image/cache.ts';
export type { CacheLevel, CachedImage, CachePolicyOptions } from './image/cache.ts';
export { DEFAULT_LIMITS, openChainEnv, REPO_PATH } from './container/chain-env.ts';
export { ChainEnvPool } from './container/pool.ts';
export type { ChainEnv, ChainEnvOptions, StateRequest, StateRun } from './container/chain-env.ts';
export { runnerExecCounts } from './container/run-report.ts';
export { forceRemove, ownContainerIds, ownerLabels, ownNetworkNames, removeNetwork, removeStaleContainers, RUN_LABEL } from './container/cleanup.ts';
export { backendNames, backends, DEFAULT_BACKEND, getBackend } from './services/registry.ts';
export { ensureServiceImage, SERVICE_LABEL, SERVICE_REPOSITORY } from './services/image.ts';
export type { ServiceImage, ServiceImageOptions } from './services/image.ts';
export { backendEnv, startService } from './services/sidecar.ts';
export type { ServiceSession, StartServiceOptions } from './services/sidecar.ts';
export { SERVICE_DB, SERVICE_HOST, SERVICE_PASSWORD, SERVICE_USER, SETTINGS_DIR } from './services/types.ts';
export type { Backend, NoService, ServiceSpec } from './services/types.ts';
export { loadRecipe, parseRecipe, recipeFileName, type LoadedRecipe } from './recipes/load.ts';
export { filterTestFiles, isIgnoredTest, RecipeSchema, type Recipe } from './recipes/schema.ts';
export { planTestFiles, runnableTestFiles, type TestFilesPlan } from './runnable.ts';
export { getRunner, runners } from './runners/registry.ts';
export type { ParsedRun, Runner, TestStatus } from './runners/types.ts';
export { BundleFileSchema, BundlePartSchema, gradeInstance, gradeLimits, GradingBundleSchema, noEvidenceUnderPatch } from './container/grade.ts';
export { containerLimits, type ContainerLimits } from './container/limits.ts';
export type { BundleFile, GradedRun, GradedStatus, GradeLimits, GradeOptions, GradeResult, GradingBundle, Score, TamperedFile } from './container/grade.ts';
export { outgrownCandidate, outgrownEnvironment, runProblem } from './runners/evidence.ts';
export type { RunInfraReason, RunProblem } from './runners/evidence.ts';
export { backendUnavailable, CHOICE_FILE, EnvChoices, rejectionReason } from './image/choose-env.ts';
export type { ChoiceFile, ChooseEnvOptions, ChosenEnv, Rejection, TriedCandidate } from './image/choose-env.ts';
export { detectCandidates, type DetectedCandidates, type RecipeCandidate } from './recipes/detect.ts';
export { ERA_PYTHONS, pythonEra, rankPythons, type EraPython, type PythonEra } from './recipes/python-era.ts';
export { changedTestModules, eraEnvironment, eraTestRules, type EnvironmentOptions, type EraEnv, type EraTestRules } from './era.ts';
