import type { Config } from '../../config.ts';

/** What every container that runs repository code is held to (validate's chain containers, bisection, emit's gate). */
export interface ContainerLimits {
  memoryBytes: number;
  pidsLimit: number;
  nanoCpus: number;
  /** Per test run: SIGTERM after this, SIGKILL 5 s later. */
  runTimeoutSec: number;
}

/** The limits from the configuration's validate section: the one place its units are converted. */
export function containerLimits(cfg: Config['validate']): ContainerLimits {
  return { memoryBytes: cfg.memoryMiB * 1024 * 1024, pidsLimit: cfg.pidsLimit, nanoCpus: Math.round(cfg.cpus * 1e9), runTimeoutSec: cfg.timeoutSec };
}
