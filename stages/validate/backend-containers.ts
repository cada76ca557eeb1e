/**
 * The containers of one chain on one database backend: one per env image, the backend's service beside them.
 *
 * The service (a sidecar, none for sqlite) starts with the first container and is shared by them. Without
 * a service a container comes from the run's pool (warm, reused by the next chain of the era); on a
 * service network it dies with the chain.
 */
import type Docker from 'dockerode';
import { join } from 'node:path';
import { errorMessage, ForesightError } from '../../core/foundation/errors.ts';
import type { ProbeEnv } from '../../core/attribution/index.ts';
import { backendEnv, openChainEnv, startService, type ChainEnv, type ChainEnvPool, type ContainerLimits, type Recipe, type Runner, type ServiceSession } from '../../core/env/index.ts';
import type { Logger } from '../../core/foundation/log.ts';

export interface ContainerDeps {
  docker: Docker;
  pool: ChainEnvPool;
  gitDir: string;
  limits: ContainerLimits;
  baseAlias: string;
  lockDir: string | null;
  repoDir: string;
  log: Logger;
  signal: AbortSignal;
}

/** An era ready to run (its image, recipe for the environment, runner and install candidate: EraEnv's `label`), or why it is not. */
export type EraToRun = { kind: 'ready'; image: string; recipe: Pick<Recipe, 'env'>; runner: Runner; label?: string } | { kind: 'broken'; problem: string };

export class ChainContainers {
  private readonly held = new Map<string, { env: ChainEnv; poolKey: string | null }>();
  private service: ServiceSession | null = null;
  private serviceProblem: string | null = null;
  /** Containers started for this chain (a pooled one reused is not counted). */
  opened = 0;

  constructor(
    private readonly deps: ContainerDeps,
    readonly backend: string,
    private readonly label: string,
  ) {}

  /** Seconds the service took to be ready (0 without one). */
  get readySec(): number {
    return this.service?.readySec ?? 0;
  }

  /**
   * The container of an era's image, started on first use; a broken era, or a service that did not start, is
   * an environment failure, never evidence.
   */
  async envOf(era: EraToRun): Promise<ProbeEnv> {
    if (era.kind === 'broken') return { kind: 'broken', problem: era.problem };
    const service = await this.ensureService();
    if (!service) return { kind: 'broken', problem: this.serviceProblem ?? `the ${this.backend} database service did not start` };
    let held = this.held.get(era.image);
    if (!held) {
      const env = backendEnv(era.recipe.env, service);
      const open = () => openChainEnv({ gitDir: this.deps.gitDir, image: era.image, runner: era.runner, env, network: service.network, ...this.deps.limits, docker: this.deps.docker, signal: this.deps.signal });
      const poolKey = service.network ? null : JSON.stringify([era.image, era.runner.name, env]);
      if (poolKey === null) {
        held = { env: await open(), poolKey };
        this.opened++;
      } else {
        const got = await this.deps.pool.acquire(poolKey, open);
        held = { env: got.env, poolKey };
        if (!got.reused) this.opened++;
      }
      this.held.set(era.image, held);
    }
    return { kind: 'ready', env: held.env, runner: era.runner, ...(era.label !== undefined ? { label: era.label } : {}) };
  }

  private async ensureService(): Promise<ServiceSession | null> {
    if (this.service || this.serviceProblem !== null) return this.service;
    const { docker, baseAlias, lockDir, log, repoDir, signal } = this.deps;
    try {
      this.service = await startService({ backend: this.backend, docker, baseAlias, lockDir, log, logDir: join(repoDir, 'validate', 'env-logs'), signal });
      if (this.service.network) log.child({ instance_id: this.label }).debug(`${this.backend} ready in ${this.service.readySec.toFixed(1)} s`);
    } catch (err) {
      if (signal.aborted || !(err instanceof ForesightError)) throw err;
      this.serviceProblem = `the ${this.backend} database service did not start: ${errorMessage(err)}`;
    }
    return this.service;
  }

  /** Pooled containers go back to the pool, the others and the service are removed. */
  async close(): Promise<void> {
    for (const { env, poolKey } of this.held.values()) {
      if (poolKey === null || this.deps.signal.aborted) await env.close().catch(() => undefined);
      else await this.deps.pool.release(poolKey, env);
    }
    this.held.clear();
    await this.service?.close().catch(() => undefined);
    this.service = null;
  }
}
