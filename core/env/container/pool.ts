/**
 * Chain containers kept between chains of one environment (one env image): the next chain of the same
 * era reuses a container whose clone, work tree and compiled modules are warm, instead of cloning,
 * checking out the whole tree and compiling every module again (Django: seconds per container).
 *
 * A container goes back to the pool only after a reset: every process but the container's own is
 * killed and /tmp holds nothing but the clone (checkout.sh resets the work tree at every state and
 * keeps the compiled modules honest). One that cannot be reset is removed instead.
 */
import type Docker from 'dockerode';
import type { ChainEnv } from './chain-env.ts';
import { runExec } from './exec.ts';

/**
 * Kills every process of the container but docker-init (pid 1), its `sleep infinity` and this shell;
 * removes what the runs left in /tmp besides the clone, its compiled modules and its stamp
 * (checkout.sh) and git's config. Exit 0 only when the reset is complete.
 */
const RESET = `
self=$$
for d in /proc/[0-9]*; do
  p=\${d#/proc/}
  [ "$p" = 1 ] || [ "$p" = "$self" ] && continue
  cmd=$(tr '\\0' ' ' <"$d/cmdline" 2>/dev/null) || continue
  [ "$cmd" = "sleep infinity " ] && continue
  kill -9 "$p" 2>/dev/null
done
find /tmp -mindepth 1 -maxdepth 1 ! -name testbed ! -name testbed.pycache ! -name testbed.stamp ! -name .gitconfig -exec rm -rf {} + 2>/dev/null
[ -z "$(find /tmp -mindepth 1 -maxdepth 1 ! -name testbed ! -name testbed.pycache ! -name testbed.stamp ! -name .gitconfig)" ]
`;

export interface PoolStats {
  /** Containers opened by the pool (a reused one is not counted again). */
  opened: number;
  reused: number;
  /** Containers removed because their reset failed. */
  discarded: number;
  /** Idle containers removed to stay within the total cap. */
  evicted: number;
}

export class ChainEnvPool {
  private readonly idle = new Map<string, ChainEnv[]>();
  /** Idle containers, least recently released first: past `maxIdleTotal` the oldest goes. */
  private readonly order: Array<{ key: string; env: ChainEnv }> = [];
  private closed = false;
  readonly stats: PoolStats = { opened: 0, reused: 0, discarded: 0, evicted: 0 };

  /**
   * `maxIdle`: containers kept per key (one per chain validated at once is enough); `maxIdleTotal`: in all,
   * so a long history of eras (one env image each) does not keep one container per era for the whole run.
   */
  constructor(
    private readonly docker: Docker,
    private readonly maxIdle = 1,
    private readonly maxIdleTotal = Math.max(4, 2 * maxIdle),
  ) {}

  /** An idle container of `key` (an env image, plus anything else that makes containers differ), else a new one. */
  async acquire(key: string, open: () => Promise<ChainEnv>): Promise<{ env: ChainEnv; reused: boolean }> {
    const env = this.idle.get(key)?.pop();
    if (env) {
      this.order.splice(this.order.findIndex((o) => o.env === env), 1);
      this.stats.reused++;
      return { env, reused: true };
    }
    const fresh = await open();
    this.stats.opened++;
    return { env: fresh, reused: false };
  }

  /** Give a container back after a chain: reset and kept, or removed when the pool is full, closed or the reset fails. */
  async release(key: string, env: ChainEnv): Promise<void> {
    const list = this.idle.get(key) ?? [];
    // closed is checked again after the reset: close() may have run meanwhile.
    if (this.closed || list.length >= this.maxIdle || !(await this.reset(env)) || this.closed) {
      await env.close().catch(() => undefined);
      return;
    }
    list.push(env);
    this.idle.set(key, list);
    this.order.push({ key, env });
    while (this.order.length > this.maxIdleTotal) {
      const old = this.order.shift()!;
      const rest = this.idle.get(old.key)?.filter((e) => e !== old.env) ?? [];
      if (rest.length) this.idle.set(old.key, rest);
      else this.idle.delete(old.key);
      this.stats.evicted++;
      await old.env.close().catch(() => undefined);
    }
  }

  /** Remove every idle container. Idempotent; containers released later are removed at once. */
  async close(): Promise<void> {
    this.closed = true;
    const all = [...this.idle.values()].flat();
    this.idle.clear();
    this.order.length = 0;
    await Promise.all(all.map((e) => e.close().catch(() => undefined)));
  }

  private async reset(env: ChainEnv): Promise<boolean> {
    try {
      const container = this.docker.getContainer(env.containerId);
      const res = await runExec(container, ['sh', '-c', RESET], {
        capture: 'combined',
        deadlineMs: 30_000,
        onDeadline: async () => void (await container.kill().catch(() => undefined)),
      });
      if (res.exitCode === 0 && !res.deadlineHit) return true;
    } catch {
      // A container that cannot even run the reset is not reused.
    }
    this.stats.discarded++;
    return false;
  }
}
