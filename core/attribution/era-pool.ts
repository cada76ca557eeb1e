/**
 * One container per environment era for a bisection, as validate has: the commits of one era (one
 * image) share a container and run as execs in it; the containers are removed by close().
 */
import type { ChainEnv, Runner } from '../env/index.ts';
import type { ProbeEnv } from './types.ts';

/** The environment of a commit's era: its image, the runner and the run's environment, or why it did not build. */
export type EraImage = { kind: 'ready'; image: string; runner: Runner; env?: Readonly<Record<string, string>>; label?: string } | { kind: 'broken'; problem: string };

export interface EraPoolOptions {
  /** The era of a commit (validate's eraEnvironment, or a fixed image); commits of one era return one image; `without`: candidates (labels) the commit outgrew. */
  eraOf: (commit: string, without: readonly string[]) => Promise<EraImage>;
  /** Open a container on an image (openChainEnv with the clone's git dir, limits and the run's signal). */
  open: (era: { image: string; runner: Runner; env?: Readonly<Record<string, string>> }) => Promise<ChainEnv>;
}

export class EraPool {
  private readonly envs = new Map<string, Promise<ChainEnv>>();
  private opened = 0;

  constructor(private readonly opts: EraPoolOptions) {}

  /** The container of `commit`'s era, opened on first use; a broken era is returned as is (the probe is a skip). */
  readonly envFor = async (commit: string, without: readonly string[] = []): Promise<ProbeEnv> => {
    const era = await this.opts.eraOf(commit, without);
    if (era.kind === 'broken') return era;
    let env = this.envs.get(era.image);
    if (!env) {
      this.opened++;
      env = this.opts.open({ image: era.image, runner: era.runner, ...(era.env ? { env: era.env } : {}) });
      this.envs.set(era.image, env);
    }
    return { kind: 'ready', env: await env, runner: era.runner, ...(era.label !== undefined ? { label: era.label } : {}) };
  };

  /** Containers opened so far. */
  get containers(): number {
    return this.opened;
  }

  /** Remove every container opened (idempotent). */
  async close(): Promise<void> {
    const envs = [...this.envs.values()];
    this.envs.clear();
    await Promise.all(envs.map(async (e) => (await e.catch(() => null))?.close()));
  }
}
