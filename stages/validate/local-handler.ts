/**
 * How this process runs `validate.chain` jobs when no queue URL is set: on this host's Docker, all chains sharing one ChainWork.
 *
 * Docker is checked (and containers left by a killed run removed) before any chain; one ChainWork serves the
 * run, so a warm container serves the next chain of its era; the env images of the chains after the running
 * ones are built meanwhile; the image cache policy applies once every chain is done.
 */
import type Docker from 'dockerode';
import { applyCachePolicy, assertDockerReachable, connectDocker, ensureImage, packageSources, removeStaleContainers } from '../../core/env/index.ts';
import { errorMessage } from '../../core/foundation/errors.ts';
import type { ExtractedChain } from '../../core/foundation/model/extracted.ts';
import type { StageContext } from '../../core/foundation/stage.ts';
import type { JobHandler } from '../../core/queue/index.ts';
import { sourceSettings } from '../../core/sources/registry.ts';
import { infra, validateChainKind, type ChainJob, type ChainJobResult } from './queue-job.ts';
import { ChainWork } from './validate-and-attribute.ts';

export class LocalChains {
  private lookAhead: Promise<void> | null = null;

  private constructor(
    private readonly work: ChainWork,
    private readonly docker: Docker,
    /** The chains to validate, in the stage's order: the look-ahead follows it. */
    private readonly todo: readonly ExtractedChain[],
    private readonly ctx: StageContext,
  ) {}

  static async open(chains: readonly ExtractedChain[], ctx: StageContext): Promise<LocalChains> {
    const cfg = ctx.config.validate;
    const { images } = ctx.config;
    const docker = connectDocker(ctx.config.docker.host);
    const todo = chains.filter((c) => !c.excluded);
    if (todo.length) {
      await assertDockerReachable(docker);
      const stale = await removeStaleContainers(docker);
      if (stale.length) ctx.log.info(`removed ${stale.length} container(s) left by a killed run`);
      if (cfg.image) await ensureImage(cfg.image, { docker, log: ctx.log, baseAlias: images.baseAlias, lockDir: images.lockDir });
    }
    // Containers without a service outlive their chain: the next chain of the era reuses a warm one.
    const work = await ChainWork.open({
      repo: ctx.repo, repoDir: ctx.repoDir, validate: cfg, discover: ctx.config.discover, sourceSettings: sourceSettings(ctx.config, ctx.secrets),
      images, packages: packageSources(ctx.config, ctx.secrets), docker, log: ctx.log, poolSize: cfg.jobs,
    });
    return new LocalChains(work, docker, todo, ctx);
  }

  /** The in-process queue's handler: a job's chain on this run's ChainWork (the stage's clone and configuration, as the job carries them). */
  handler(): JobHandler<ChainJob, ChainJobResult> {
    return {
      kind: validateChainKind,
      // The chain's own eras first, then the look-ahead starts behind them.
      run: (job, jctx) => infra(() => this.work.run(job.chain, jctx.signal, { onEras: () => this.buildAhead(job.chain) })),
    };
  }

  /**
   * Look-ahead: the env images of the chains after `after` are built meanwhile, one at a time, so a chain
   * seldom waits for its image (an era's build is shared: EnvImages, EnvChoices).
   */
  private buildAhead(after: ExtractedChain): void {
    const { ctx, work } = this;
    if (this.lookAhead || ctx.config.validate.image) return;
    // The job's chain is a copy (it crossed the queue's JSON): found by its id.
    const rest = this.todo.slice(this.todo.findIndex((c) => c.instance_id === after.instance_id) + 1);
    this.lookAhead = (async () => {
      for (const c of rest) {
        if (ctx.signal.aborted) return;
        // A chain whose tests run nowhere here needs no image.
        if (await work.runsNothing(c)) continue;
        // Its builds' lines name the chain they are for.
        const log = ctx.log.child({ instance_id: c.instance_id });
        await work.eraOf(c.pr1_head, c.pr1_test_files, ctx.signal, { log });
        if (c.pr2_head !== c.pr1_head) await work.eraOf(c.pr2_head, c.anticipation_test_files, ctx.signal, { log });
      }
    })().catch((err: unknown) => ctx.log.debug(`image look-ahead stopped: ${errorMessage(err)}`));
  }

  /** Stop the warm containers and wait for the look-ahead, whether the chains all ended or not. */
  async close(): Promise<void> {
    await this.work.close();
    await this.lookAhead;
  }

  /** Once every chain is done: add the images built (the look-ahead's count too), then apply the image cache policy. */
  async finish(imagesBuilt: Set<string>): Promise<void> {
    const { images } = this.ctx.config;
    for (const i of this.work.builtImages) imagesBuilt.add(i);
    if (!this.ctx.config.validate.image) await applyCachePolicy(images.cache, { used: [...this.work.usedImages], keep: images.envKeep, docker: this.docker, baseAlias: images.baseAlias });
  }
}
