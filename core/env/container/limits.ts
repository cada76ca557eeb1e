import type { Config } from '../../foundation/config.ts';

/** What every container that runs repository code is held to (validate's chain containers, bisection, emit's gate, grading). */
export interface ContainerLimits {
  memoryBytes: number;
  pidsLimit: number;
  nanoCpus: number;
  /** Size of the tmpfs at /tmp, the container's only writable place (its root filesystem is read-only). */
  diskBytes: number;
  /** Per test run: SIGTERM after this, SIGKILL 5 s later. */
  runTimeoutSec: number;
}

/** The limits from the configuration's validate section: the one place its units are converted. */
export function containerLimits(cfg: Config['validate']): ContainerLimits {
  return {
    memoryBytes: cfg.memoryMiB * 1024 * 1024,
    pidsLimit: cfg.pidsLimit,
    nanoCpus: Math.round(cfg.cpus * 1e9),
    diskBytes: cfg.diskMiB * 1024 * 1024,
    runTimeoutSec: cfg.timeoutSec,
  };
}

/**
 * The HostConfig part that holds untrusted code in: memory (no swap), pids, CPU, no capabilities, no
 * privilege gain, docker-init as pid 1 (it reaps the orphans of killed runs), and disk: the root
 * filesystem read-only and a size-limited tmpfs at /tmp as the only writable place. overlay2 on ext4
 * (this Docker) cannot limit a writable layer (`--storage-opt size` needs xfs with pquota), so the
 * limit is the tmpfs's; /var/tmp gets a small one, /dev/shm keeps Docker's 64 MiB.
 */
export function lockedDown(l: Omit<ContainerLimits, 'runTimeoutSec'>): {
  Memory: number;
  MemorySwap: number;
  PidsLimit: number;
  NanoCpus: number;
  SecurityOpt: string[];
  CapDrop: string[];
  Init: boolean;
  ReadonlyRootfs: boolean;
  Tmpfs: Record<string, string>;
} {
  return {
    Memory: l.memoryBytes,
    MemorySwap: l.memoryBytes,
    PidsLimit: l.pidsLimit,
    NanoCpus: l.nanoCpus,
    SecurityOpt: ['no-new-privileges'],
    CapDrop: ['ALL'],
    Init: true,
    ReadonlyRootfs: true,
    Tmpfs: { '/tmp': `rw,exec,nosuid,nodev,mode=1777,size=${l.diskBytes}`, '/var/tmp': 'rw,noexec,nosuid,nodev,mode=1777,size=16m' },
  };
}
