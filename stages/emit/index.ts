import { join } from 'node:path';
import { readManifest } from '../../core/foundation/artifacts.ts';
import { revParse } from '../../core/foundation/git.ts';
import type { StageContext, StageDef } from '../../core/foundation/stage.ts';
import { FORESIGHT_VERSION } from '../../core/foundation/version.ts';
import { JudgedChainSchema, type JudgedChain } from '../../core/foundation/model/judged.ts';
import { ForesightError } from '../../core/foundation/errors.ts';
import { absoluteGitDir } from '../../core/foundation/git.ts';
import { assertDockerReachable, connectDocker, containerLimits, EnvImages, ensureEvalImage, eraEnvironment, EVAL_REPO_PATH, getRunner, gradeInstance, gradeLimits, inspectImage, loadRecipe, packageSources, pushImage, runners } from '../../core/env/index.ts';
import { rowSchema, TEST_COLUMNS, VERIFIED_COLUMNS } from './columns.ts';
import { detectLicense } from './license.ts';
import { funnelOf } from './plots.ts';
import { testRow, verifiedRow, type EvalEntry, type RowContext } from './build-rows.ts';
import { goldProblem } from './gold-check.ts';
import { gradingBundle } from './grading-bundle.ts';
import { writeDataset } from './write-dataset.ts';

// The gold gate's verdict, for the eval-image benchmark (bench/eval-images.ts) to judge rows as emit does.
export { goldProblem } from './gold-check.ts';
// The card's repository id is known only when publishing: publish replaces the placeholder.
export { CONFIGS, datasetCard, REPO_ID_PLACEHOLDER, setCardRepoId, type CardInput, type DatasetRepo } from './dataset-card.ts';
// The plots, for the HTML report; emit writes them to <dataset>/plots/*.svg.
export { funnelOf, renderPlots, sumFunnels, type Funnel, type Plot, type PlotInput, type RenderOptions } from './plots.ts';
// A dataset folder from built rows: one repository's emit, or a campaign's merged rows of several.
export { writeDataset, type DatasetInput } from './write-dataset.ts';
export { TEST_COLUMNS, VERIFIED_COLUMNS } from './columns.ts';
export { readReleaseManifest, RELEASE_FILE, RELEASE_NAME, ReleaseManifestSchema, type ReleaseManifest } from './release-manifest.ts';
export { readSplit, writeRelease, type ReleaseInput } from './write-release.ts';
export { readParquetRows } from './write-parquet.ts';
export { detectLicense, identifyLicense, type HubLicenseId, type LicenseDetection } from './license.ts';

const VerifiedRowSchema = rowSchema(VERIFIED_COLUMNS);
const TestRowSchema = rowSchema(TEST_COLUMNS);

/**
 * The reference a row names for an eval image: the local tag, or, with `images.registry` set, the pushed
 * `<registry>/foresight-eval:<key>`. A failed push fails the stage rather than excluding the chain: the
 * registry is down for every chain alike, and a dataset must not name an image nobody can pull.
 */
async function publish(docker: ReturnType<typeof connectDocker>, image: string, ctx: StageContext): Promise<string> {
  const registry = ctx.config.images.registry;
  if (!registry) return image;
  const res = await pushImage({ docker, image, registry, signal: ctx.signal, log: ctx.log });
  if (res.kind === 'pushed') return res.ref;
  throw new ForesightError(`cannot push ${image} to the registry ${registry}: ${res.detail}`, {
    remedy: 'start the registry (or fix --registry / FORESIGHT_REGISTRY: HOST[:PORT]/NAMESPACE) and rerun foresight push-images',
    external: true,
  });
}

/** Where the Hugging Face dataset folder is written: data/<repo>/emit/hf/. */
export function hfDir(outDir: string): string {
  return join(outDir, 'hf');
}

/**
 * The env image validation ran PR1 in must exist to build the eval image on it. Another run's cache policy
 * may have pruned it since: PR1's era is resolved again (its recipe, or the detected choice saved under
 * data/<repo>/), which rebuilds the same content-keyed image. Null when it is there; else why not.
 */
async function restoreEnvImage(image: string, c: JudgedChain, ctx: StageContext, images: () => EnvImages): Promise<string | null> {
  if (await inspectImage(images().docker, image)) return null;
  ctx.log.info(`${c.instance_id}: env image ${image} is gone (pruned by another run?): rebuilding PR1's environment`);
  const cfg = ctx.config.validate;
  const opts = {
    repo: ctx.repo.name, clone: ctx.repo.clone, gitDir: await absoluteGitDir(ctx.repo.clone), repoDir: ctx.repoDir, log: ctx.log, images: images(),
    image: cfg.image, runner: cfg.runner, signal: ctx.signal, recipes: cfg.recipes, language: cfg.language,
    limits: containerLimits(cfg),
  };
  // Validation may have moved PR1's era past install candidates its code outgrew: those are passed over in turn.
  const passedOver: string[] = [];
  for (;;) {
    const era = await eraEnvironment(opts, c.pr1_head, c.pr1_test_files, passedOver);
    if (era.kind === 'broken') return `env image ${image} is gone and PR1's environment did not build again: ${era.problem}`;
    if (era.image === image) break;
    if (era.label === undefined) return `env image ${image} is gone and PR1's era now resolves to ${era.image}: rerun validate (foresight run --from validate)`;
    passedOver.push(era.label);
  }
  return null;
}

/**
 * emit: the `test` split and the `verified` config (the chains that passed every gate, in the v1 and the
 * verified schema) and the `funnel` config (every chain, with gradeable / exclusion_reason), as Parquet in
 * the Hugging Face layout plus JSONL copies and a dataset card (writeDataset). Every gradeable chain gets its eval image (tier 3: the repository at base_commit
 * over the PR1-era environment, no object of the future) and its grading bundle.
 */
export const emitStage: StageDef<JudgedChain, Record<string, unknown>> = {
  name: 'emit',
  entry: import.meta.url,
  // The registry and the eval images' history mode change every gradeable row's docker_image; the card's
  // license is read at the mined branch's head.
  config: (cfg) => ({ image: cfg.validate.image, registry: cfg.images.registry, evalHistory: cfg.images.evalHistory, branch: cfg.discover.branch, recipes: cfg.validate.recipes, language: cfg.validate.language }),
  input: JudgedChainSchema,
  output: VerifiedRowSchema,
  // The card's funnel starts at discover's candidate count, and its license is read at the head discover mined.
  reads: ['discover'],
  async run(input, ctx) {
    const rc: RowContext = {
      image: ctx.config.validate.image ?? '',
      repoPath: EVAL_REPO_PATH,
      runners: new Map([...runners.values()].map((r) => [r.name, { testCmd: r.testCmd, script: r.script }])),
    };
    const sorted = [...input].sort((a, b) => a.instance_id.localeCompare(b.instance_id));
    // Every gradeable chain gets its eval image (tier 3, without the future) and its grading bundle.
    const gradeable = sorted.filter((c) => c.gradeable);
    const limits = gradeLimits(ctx.config.validate);
    const docker = connectDocker(ctx.config.docker.host);
    if (gradeable.length) await assertDockerReachable(docker);
    // One image builder for the stage, made when a pruned env image first needs rebuilding.
    let envImages: EnvImages | undefined;
    const images = (): EnvImages => (envImages ??= new EnvImages({ docker, baseAlias: ctx.config.images.baseAlias, lockDir: ctx.config.images.lockDir, log: ctx.log, sources: packageSources(ctx.config, ctx.secrets) }));
    // Not checkpointed: a reused image costs an inspect, and the row must name an image that exists now.
    const evals: EvalEntry[] = [];
    // Grading runs the tests again in the eval image: the run's limits are validate's.
    // Start the clock: the first image's time counts in the rate.
    if (gradeable.length) ctx.log.progress('eval images and gold self-checks', 0, gradeable.length);
    for (const c of gradeable) {
      ctx.signal.throwIfAborted();
      // The PR1 era's recipe: its test environment goes into the eval image, as validation ran with it.
      const { recipe } = await loadRecipe(ctx.repo.name, ctx.repo.clone, c.pr1_head, { recipes: ctx.config.validate.recipes, language: ctx.config.validate.language });
      const gone = c.env_image_pr1 ? await restoreEnvImage(c.env_image_pr1, c, ctx, images) : null;
      const res = gone ? null : await ensureEvalImage({
        docker, clone: ctx.repo.clone, envImage: c.env_image_pr1 ?? rc.image, baseCommit: c.pr1_base, runner: getRunner(c.runner),
        history: ctx.config.images.evalHistory, testEnv: { ...recipe.env, ...c.test_env }, signal: ctx.signal, log: ctx.log, logDir: join(ctx.outDir, 'eval-logs'), lockDir: ctx.config.images.lockDir,
      });
      const bundle = await gradingBundle(ctx.repo.clone, c);
      let problem: EvalEntry['problem'] = gone
        ? { reason: 'eval_image_failed', detail: gone }
        : res?.kind === 'failed' ? { reason: 'eval_image_failed', detail: res.reason === 'clone_incomplete' ? res.detail : `${res.detail.trim().split('\n').pop() ?? ''} (log: ${res.log})` } : null;
      // The gold self-check: PR1's own patch in the eval image must pass every F2P and P2P test and no anticipation test.
      if (res?.kind === 'ready' && !c.excluded) {
        const gold = await gradeInstance({
          docker, image: res.image, runner: getRunner(c.runner), patch: c.patch, goldPatch: c.patch, bundle, f2p: c.FAIL_TO_PASS, p2p: c.PASS_TO_PASS,
          anti: c.ANTICIPATION_FAIL_TO_PASS, limits, signal: ctx.signal, backend: c.db_backend, service: { baseAlias: ctx.config.images.baseAlias, lockDir: ctx.config.images.lockDir, log: ctx.log },
        });
        problem = goldProblem(gold);
        if (problem) ctx.log.warn(`${c.instance_id}: gold self-check failed: ${problem.detail}`);
      }
      const image = res?.kind === 'ready' ? await publish(docker, res.image, ctx) : null;
      evals.push({ instance_id: c.instance_id, image, bundle: JSON.stringify(bundle), problem });
      ctx.log.progress('eval images and gold self-checks', evals.length, gradeable.length);
    }
    const evalOf = new Map(evals.map((e) => [e.instance_id, e]));
    const chains = sorted.map((c): JudgedChain => {
      const e = evalOf.get(c.instance_id);
      // A chain nobody could evaluate, or whose gold patch does not grade right, never enters `test`.
      if (e?.problem && !c.excluded) return { ...c, excluded: { ...e.problem, stage: 'emit' } };
      return c;
    });
    const funnel = chains.map((c) => VerifiedRowSchema.parse(verifiedRow(c, rc, evalOf.get(c.instance_id) ?? null)));
    const passed = new Set(chains.filter((c) => c.gradeable && !c.excluded).map((c) => c.instance_id));
    const verified = funnel.filter((r) => passed.has(r.instance_id as string));
    const test = chains.filter((c) => passed.has(c.instance_id)).map((c) => TestRowSchema.parse(testRow(c, rc, evalOf.get(c.instance_id)!)));

    // The funnel starts at discover's fix candidates, which only its manifest records.
    const discovered = await readManifest(join(ctx.repoDir, 'discover'));
    // The rows are the mined repository's code: its license, at the head the pipeline mined, is the dataset's.
    const license = await detectLicense(ctx.repo.clone, await revParse(ctx.repo.clone, ctx.config.discover.branch));
    const funnelCounts = funnelOf(chains, discovered?.stats.candidates ?? null);
    const dir = hfDir(ctx.outDir);
    await writeDataset(dir, {
      title: `Fix-chains of ${ctx.repo.name}`,
      repoId: null,
      foresightVersion: FORESIGHT_VERSION,
      repos: [{ repo: ctx.repo.name, license, funnel: funnelCounts }],
      test,
      verified,
      funnel,
      warn: (m) => ctx.log.warn(`plots: ${m}`),
    });
    ctx.log.info(`wrote ${dir}: test and verified ${test.length} rows, funnel ${funnel.length} rows`);
    // The artifact is every chain (the funnel's rows): publish's gold gate and the summary read it. The funnel's
    // steps are in the stats, for a dataset merged from several repositories' emits to sum.
    const f = funnelCounts;
    return {
      items: funnel,
      stats: {
        test_rows: test.length, verified_rows: verified.length, funnel_rows: funnel.length, gradeable: funnel.filter((r) => r.gradeable).length, eval_images: evals.filter((e) => e.image).length,
        ...(f.candidates === null ? {} : { funnel_candidates: f.candidates }),
        funnel_chains: f.chains, funnel_gradeable: f.gradeable, funnel_judged: f.judged, funnel_test: f.test,
      },
    };
  },
};
