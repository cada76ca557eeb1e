/**
 * Validates and attributes one chain, start to end, keeping what a process reuses across chains (ChainWork).
 *
 * As this process and a `foresight worker` both do it: the chain's eras' environments, its five states on
 * its backends (validate-states.ts), then the execution-confirmed attribution (bisection), and when that
 * names another PR1, the chain re-extracted and validated again. The env images of the run, a pool of warm
 * containers and the history live in one ChainWork.
 */
import type Docker from 'dockerode';
import type { Config } from '../../core/foundation/config.ts';
import { bisectBudget, type BisectBudget } from '../../core/attribution/index.ts';
import { ChainEnvPool, containerLimits, EnvImages, eraEnvironment, eraTestRules, type EnvironmentOptions, type PackageSources, type EraTestRules } from '../../core/env/index.ts';
import { contextCollector, type ContextCollector } from '../../core/extract/context.ts';
import { extractChain, repoShortName } from '../../core/extract/chain.ts';
import { absoluteGitDir } from '../../core/foundation/git.ts';
import { listChanges, type ListedChanges } from '../../core/history/changes.ts';
import type { Logger } from '../../core/foundation/log.ts';
import type { Exclusion, PullRequest } from '../../core/foundation/model/change.ts';
import type { ExtractedChain } from '../../core/foundation/model/extracted.ts';
import type { ValidatedChain } from '../../core/foundation/model/validated.ts';
import type { SourceSettings } from '../../core/sources/types.ts';
import { attributeChain, canAttribute, type AttributeDeps } from './attribute.ts';
import type { ContainerDeps } from './backend-containers.ts';
import { chainOnBackends, excludedChain, validateChain, type ChainEras } from './validate-states.ts';

/** What one chain's work gives back: the validated chain and the counts the stage's stats add up. */
export interface ChainOutcome {
  chain: ValidatedChain;
  stateRuns: number;
  backendFallbacks: number;
  /** Env images this chain's lookups built (not reused). */
  imagesBuilt: string[];
}

export interface ChainWorkOptions {
  repo: { name: string; clone: string };
  /** The repository's data folder (caches, container logs). */
  repoDir: string;
  validate: Config['validate'];
  /** How attribution lists the history (as discover does). */
  discover: Pick<Config['discover'], 'branch' | 'units' | 'tracker' | 'offline'>;
  /** The sources a re-extraction reads (credentials from this process's own environment). */
  sourceSettings: SourceSettings;
  images: Pick<Config['images'], 'baseAlias' | 'lockDir'>;
  /** Where env builds fetch packages (the configuration's). */
  packages: PackageSources;
  docker: Docker;
  log: Logger;
  /** Warm containers kept across chains: the chains run at once here. */
  poolSize: number;
}

export class ChainWork {
  /** Images this process's chains ran in, and those it built. */
  readonly usedImages = new Set<string>();
  readonly builtImages = new Set<string>();
  private readonly pool: ChainEnvPool;
  private readonly envImages: EnvImages;
  private history: Promise<ListedChanges> | null = null;
  private discussion: ContextCollector | null = null;

  private constructor(
    private readonly opts: ChainWorkOptions,
    private readonly gitDir: string,
  ) {
    this.pool = new ChainEnvPool(opts.docker, opts.poolSize);
    // Builds shared by the chains of one era, failures remembered until this work ends.
    this.envImages = new EnvImages({ docker: opts.docker, baseAlias: opts.images.baseAlias, lockDir: opts.images.lockDir, log: opts.log, sources: opts.packages });
  }

  static async open(opts: ChainWorkOptions): Promise<ChainWork> {
    return new ChainWork(opts, await absoluteGitDir(opts.repo.clone));
  }

  private envOpts(signal: AbortSignal, log: Logger): EnvironmentOptions {
    const { opts } = this;
    const cfg = opts.validate;
    return { repo: opts.repo.name, clone: opts.repo.clone, gitDir: this.gitDir, repoDir: opts.repoDir, log, images: this.envImages, image: cfg.image, runner: cfg.runner, signal, recipes: cfg.recipes, language: cfg.language, limits: containerLimits(cfg) };
  }

  /** The bisection's probe budget (validate's settings). */
  bisectBudget(): BisectBudget {
    return bisectBudget(this.opts.validate);
  }

  /** What a chain's containers need: this work's pool, limits and git dir. */
  containers(signal: AbortSignal, log: Logger): ContainerDeps {
    const { opts } = this;
    return { docker: opts.docker, pool: this.pool, gitDir: this.gitDir, baseAlias: opts.images.baseAlias, lockDir: opts.images.lockDir, repoDir: opts.repoDir, log, signal, limits: containerLimits(opts.validate) };
  }

  /**
   * The environment of a commit's era (a detected recipe is checked on the PR's own test files at that PR's
   * head); `without`: the install candidates a run showed the commit has outgrown; `built` collects the images built.
   */
  async eraOf(commit: string, testFiles: readonly string[], signal: AbortSignal, o: { built?: string[]; log?: Logger; without?: readonly string[] } = {}) {
    const era = await eraEnvironment(this.envOpts(signal, o.log ?? this.opts.log), commit, testFiles, o.without);
    if (era.kind === 'ready' && era.built) {
      this.builtImages.add(era.image);
      o.built?.push(era.image);
    }
    return era;
  }

  /** The recipe and runner of a commit's era, from the commit alone (no image, no container); null: only the chosen era tells. */
  testRules(commit: string): Promise<EraTestRules | null> {
    const { repo, validate: cfg } = this.opts;
    return eraTestRules({ repo: repo.name, clone: repo.clone, recipes: cfg.recipes, language: cfg.language, image: cfg.image, runner: cfg.runner }, commit);
  }

  /**
   * Why a chain runs no test here, told by its eras' recipes before any image is built or container started (a
   * Django chain whose PR1 touched only js_tests), with the runner's name; null when it runs some, or only its
   * chosen eras can tell. validateChain decides the same way once the eras are chosen.
   */
  async runsNothing(chain: ExtractedChain): Promise<{ exclusion: Exclusion; runner: string } | null> {
    const pr1 = await this.testRules(chain.pr1_head);
    const pr2 = chain.pr2_head === chain.pr1_head ? pr1 : await this.testRules(chain.pr2_head);
    if (!pr1 || !pr2) return null;
    const planned = chainOnBackends(chain, { pr1, pr2 });
    return planned.kind === 'excluded' ? { exclusion: planned.exclusion, runner: pr1.runner.name } : null;
  }

  /**
   * Validate one chain that is not excluded (and attribute it, unless attribution is off); `onEras` once
   * its environments are known; `log`: the job's own (a worker's chains share this ChainWork). Everything
   * logged for the chain carries its `instance_id`, and its progress notes say what it runs now.
   */
  async run(chain: ExtractedChain, signal: AbortSignal, opts: { onEras?: () => void; log?: Logger } = {}): Promise<ChainOutcome> {
    const log = (opts.log ?? this.opts.log).child({ instance_id: chain.instance_id });
    try {
      return await this.runChain(chain, signal, log, opts.onEras);
    } finally {
      log.note(null);
    }
  }

  private async runChain(chain: ExtractedChain, signal: AbortSignal, log: Logger, onEras?: () => void): Promise<ChainOutcome> {
    const cfg = this.opts.validate;
    const containers = this.containers(signal, log);
    const imagesBuilt: string[] = [];
    let stateRuns = 0;
    let backendFallbacks = 0;
    // Finding (or building) an era's image is one-time setup: the stage's rate leaves it out, so the first
    // chains' builds do not make the ETA of the rest (which reuse the images) hours long.
    const used = async (commit: string, testFiles: readonly string[], without?: readonly string[]) => {
      log.note(`environment at ${commit.slice(0, 10)}: finding or building its image`);
      const setupDone = log.setup(this.opts.poolSize);
      let era: Awaited<ReturnType<ChainWork['eraOf']>>;
      try {
        era = await this.eraOf(commit, testFiles, signal, { built: imagesBuilt, log, ...(without ? { without } : {}) });
      } finally {
        setupDone();
      }
      if (era.kind === 'ready') this.usedImages.add(era.image);
      return era;
    };
    // Each era's environment comes from its PR's head: its recipe and dependency files.
    const chainEras = async (c: ExtractedChain): Promise<ChainEras> => {
      const pr1 = await used(c.pr1_head, c.pr1_test_files);
      const pr2 = c.pr2_head === c.pr1_head ? pr1 : await used(c.pr2_head, c.anticipation_test_files);
      return { pr1, pr2 };
    };
    const validateOne = async (c: ExtractedChain, eras: ChainEras): Promise<ValidatedChain> => {
      const r = await validateChain(c, eras, { cfg, containers, eraWithout: used });
      stateRuns += r.stateRuns;
      if (r.fellBack) backendFallbacks++;
      return r.chain;
    };
    const done = (v: ValidatedChain): ChainOutcome => ({ chain: v, stateRuns, backendFallbacks, imagesBuilt });
    const nothing = await this.runsNothing(chain);
    if (nothing) {
      onEras?.();
      return done(excludedChain({ ...chain, excluded: nothing.exclusion }, nothing.runner));
    }
    const eras = await chainEras(chain);
    onEras?.();
    const validated = await validateOne(chain, eras);
    if (cfg.attribution === 'off' || !canAttribute(validated)) return done(validated);
    // Attribution reads the history as szz did.
    const deps: AttributeDeps = { history: () => (this.history ??= listChanges(this.opts.repo.clone, this.opts.discover)), eraOf: used, containers, budget: this.bisectBudget() };
    const att = await attributeChain(validated, deps);
    if (att.kind === 'kept') return done({ ...validated, attribution: att.record });
    if (att.kind === 'unattributed') {
      return done({ ...validated, attribution: att.record, gradeable: false, excluded: { reason: 'unattributed', detail: att.detail, stage: 'validate' } });
    }
    if (att.kind === 'predates') {
      log.info(`the defect predates ${chain.pr1.id}: ${att.record.predates?.detail ?? ''}`);
      return done({ ...validated, attribution: att.record, gradeable: false, excluded: { reason: 'defect_predates_pr1', detail: att.detail, stage: 'validate' } });
    }
    // Execution names another PR1: the chain is extracted (as extract does) and its states validated again for it.
    log.info(`the tests stop passing in ${att.pr1.id}, not ${chain.pr1.id} (${att.record.disagreements.map((d) => d.source).join(', ') || 'blame'}): PR1 moved`);
    const moved = await this.reextract(chain, att.pr1);
    if (moved.excluded) return done({ ...excludedChain(moved, cfg.runner), attribution: att.record, cost: validated.cost });
    const again = await validateOne(moved, await chainEras(moved));
    // The cost covers both validations (the bisection's own is in the record).
    // (a moved chain excluded before its states has no cost of its own: the first validation's stands).
    const cost = again.cost && validated.cost ? { containerStarts: validated.cost.containerStarts + again.cost.containerStarts, execMs: validated.cost.execMs + again.cost.execMs, wallMs: validated.cost.wallMs + again.cost.wallMs } : validated.cost;
    return done({ ...again, attribution: att.record, cost });
  }

  private async reextract(chain: ExtractedChain, pr1: PullRequest): Promise<ExtractedChain> {
    const { opts } = this;
    this.discussion ??= contextCollector({
      repo: opts.repo.name, clone: opts.repo.clone, repoDir: opts.repoDir, tracker: chain.tracker,
      offline: opts.discover.offline, log: opts.log, settings: opts.sourceSettings,
    });
    return (await extractChain({ ...chain, pr1, excluded: null }, { clone: opts.repo.clone, repoName: repoShortName(opts.repo.name), discussion: this.discussion })).chain;
  }

  /** Stop the warm containers. */
  async close(): Promise<void> {
    await this.pool.close();
  }
}
