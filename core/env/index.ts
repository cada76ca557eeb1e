/**
 * Test environments, the one surface the rest of the code uses (validate, emit, eval, szz-eval, core/attribution):
 *  - image/      base tier (Debian bullseye/bookworm/trixie from debootstrap, tagged by the build script's hash), env tier
 *                (`foresight-env:<key>`: the recipe's install in /opt/venv, keyed by the recipe's build
 *                fields and the dependency files' content), build locks, the cache policy
 *  - container/  one locked-down container per environment (no network, limits, non-root), states run as
 *                execs with bounded output and deadlines, removed on close or when the run aborts
 *  - services/   database backends (sqlite: none; postgresql, postgis, mysql: a sidecar on an internal network)
 *  - recipes/, runners/  the plug-ins that shape them
 */
export { assertDockerReachable, connectDocker, isDockerReachable } from './daemon.ts';
export { baseImageTag, DEFAULT_BASE_ALIAS, ensureBaseImage, ensureImage } from './image/base.ts';
export type { BaseImage } from './image/base.ts';
export { releaseOf } from './image/release.ts';
export { aptScript, BUILD_USER, installScript } from './image/build-scripts.ts';
export { APT_CAPS, DEFAULT_BUILD_MEMORY_BYTES, DEFAULT_BUILD_PIDS_LIMIT, envBuildHostConfig, envBuildLimits, ROOT_STEP_CAPS } from './image/build.ts';

export { inspectImage } from './image/docker-image.ts';
export { EnvImages, envImageFor } from './image/env-images.ts';
export { packageSources } from './image/package-sources.ts';
export type { PackageSources } from './image/types.ts';
export { ensureEvalImage, EVAL_HISTORIES, EVAL_HISTORY_LABEL, EVAL_KEY_LABEL, EVAL_REPO_PATH } from './image/eval-image.ts';
export type { EvalHistory, EvalImageResult } from './image/eval-image.ts';
export { pushedRef, pushImage } from './image/push.ts';

export { envImageKey, REPO_LABEL } from './image/key.ts';

export { applyCachePolicy, listEnvImages, pruneImages, touchImage } from './image/cache.ts';

export { DEFAULT_LIMITS, openChainEnv } from './container/chain-env.ts';
export { ChainEnvPool } from './container/pool.ts';
export type { ChainEnv, StateRequest, StateRun } from './container/chain-env.ts';
export { runnerExecCounts } from './container/run-report.ts';
export { forceRemove, ownContainerIds, ownerLabels, ownNetworkNames, removeOwnContainers, removeStaleContainers, RUN_LABEL, type OwnSweep } from './container/cleanup.ts';
export { backendNames, backends, DEFAULT_BACKEND, getBackend } from './services/registry.ts';
export { ensureServiceImage } from './services/image.ts';

export { backendEnv, startService } from './services/sidecar.ts';
export type { ServiceSession } from './services/sidecar.ts';
export { SETTINGS_DIR } from './services/types.ts';

export { loadRecipe, parseRecipe } from './recipes/load.ts';
export { isIgnoredTest, RecipeSchema, type Recipe } from './recipes/schema.ts';
export { planTestFiles, runnableTestFiles, type TestFilesPlan } from './runnable.ts';
export { getRunner, runners } from './runners/registry.ts';
export { testFileOf } from './runners/test-file.ts';
export { rowLanguage, type RowLanguage } from './runners/language.ts';
export { KEEP_SAMPLE, type KeepRule, type Runner } from './runners/types.ts';
export { gradeInstance, gradeLimits, GradingBundleSchema, noEvidenceUnderPatch } from './container/grade.ts';
export { containerLimits, type ContainerLimits } from './container/limits.ts';
export type { BundleFile, GradeLimits, GradeResult, GradingBundle, Score } from './container/grade.ts';
export { outgrownCandidate, outgrownEnvironment, runProblem } from './runners/evidence.ts';

export { EnvChoices } from './image/choose-env.ts';
export { CHOICE_FILE, type ChoiceFile } from './image/choice-file.ts';
export { backendUnavailable, rejectionReason } from './image/env-check.ts';
export { detectCandidates } from './recipes/detect.ts';
export { pythonEra, rankPythons } from './recipes/python-era.ts';
export { changedTestModules, eraEnvironment, eraTestRules, type EnvironmentOptions, type EraEnv, type EraTestRules } from './era.ts';
