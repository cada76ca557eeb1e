/**
 * Containers must not outlive the work they serve. Each container is tied to the run's AbortSignal
 * (`removeOnAbort`): when the process's one signal owner (pipeline/signals.ts) aborts the run, every live
 * container is force-removed, and no new one is created after that. Before such a process exits,
 * `removeOwnContainers` removes whatever it still owns (a container whose creation was in flight at the
 * signal included). A process killed outright (kill -9) leaves labelled containers that
 * `removeStaleContainers` sweeps up at the next run.
 */
import { hostname } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import type Docker from 'dockerode';
import { pidAlive } from '../../foundation/pid.ts';
import { withRetry } from '../../http/retry.ts';

export const RUN_LABEL = 'foresight.run';
export const PID_LABEL = 'foresight.pid';
export const HOST_LABEL = 'foresight.host';

/** Labels for a new container: who owns it, so a sweep can tell stale from live. */
export function ownerLabels(): Record<string, string> {
  return { [RUN_LABEL]: '1', [PID_LABEL]: String(process.pid), [HOST_LABEL]: hostname() };
}

/** Remove (force) one container; a container already gone or being removed is fine. */
export async function forceRemove(docker: Docker, id: string): Promise<void> {
  try {
    await docker.getContainer(id).remove({ force: true, v: true });
  } catch (err) {
    const status = (err as { statusCode?: number }).statusCode;
    if (status !== 404 && status !== 409) throw err;
  }
}

/**
 * Force-remove the container as soon as `signal` aborts (at once if it already has). Returns the
 * disposer to call when the container is closed normally.
 */
export function removeOnAbort(docker: Docker, id: string, signal: AbortSignal | undefined): () => void {
  if (!signal) return () => undefined;
  const onAbort = (): void => void forceRemove(docker, id).catch(() => undefined);
  if (signal.aborted) {
    onAbort();
    return () => undefined;
  }
  signal.addEventListener('abort', onAbort, { once: true });
  return () => signal.removeEventListener('abort', onAbort);
}

/**
 * Remove containers labelled `foresight.run=1` that no running foresight process owns: owned by a dead
 * process on this host (or carrying no owner). Containers of live processes (this one included) and of
 * other hosts sharing the daemon are left alone. Returns the ids removed. Safe to call concurrently.
 */
export async function removeStaleContainers(docker: Docker): Promise<string[]> {
  const containers = await docker.listContainers({ all: true, filters: { label: [`${RUN_LABEL}=1`] } });
  const me = hostname();
  const stale = containers.filter((c) => {
    const host = c.Labels[HOST_LABEL];
    const pid = Number(c.Labels[PID_LABEL]);
    if (host === undefined || !Number.isInteger(pid) || pid <= 0) return true;
    if (host !== me) return false;
    return pid !== process.pid && !pidAlive(pid);
  });
  await Promise.all(stale.map((c) => forceRemove(docker, c.Id)));
  await removeStaleNetworks(docker, me);
  return stale.map((c) => c.Id);
}

/**
 * Remove a network (a database service's internal one): its endpoints are disconnected first, and a
 * container still being removed (an abort races us) is waited for a few seconds. A network gone is fine.
 */
export async function removeNetwork(docker: Docker, name: string): Promise<void> {
  const net = docker.getNetwork(name);
  // 21 tries, 250 ms apart: about five seconds for a racing removal to finish.
  await withRetry(
    async () => {
      try {
        const info = (await net.inspect()) as { Containers?: Record<string, unknown> };
        for (const id of Object.keys(info.Containers ?? {})) await net.disconnect({ Container: id, Force: true }).catch(() => undefined);
        await net.remove();
      } catch (err) {
        if ((err as { statusCode?: number }).statusCode !== 404) throw err;
      }
    },
    { attempts: 21, backoff: () => 250 },
  );
}

/** Networks of dead processes on this host (the service networks, labelled as containers are). */
async function removeStaleNetworks(docker: Docker, me: string): Promise<void> {
  const nets = await docker.listNetworks({ filters: { label: [`${RUN_LABEL}=1`] } });
  const stale = nets.filter((n) => {
    const labels = n.Labels ?? {};
    const pid = Number(labels[PID_LABEL]);
    if (labels[HOST_LABEL] === undefined || !Number.isInteger(pid) || pid <= 0) return true;
    return labels[HOST_LABEL] === me && pid !== process.pid && !pidAlive(pid);
  });
  await Promise.all(stale.map((n) => removeNetwork(docker, n.Name).catch(() => undefined)));
}

/** Names of the live networks this process owns, e.g. to check nothing is left. */
export async function ownNetworkNames(docker: Docker): Promise<string[]> {
  const nets = await docker.listNetworks({ filters: { label: [`${RUN_LABEL}=1`, `${PID_LABEL}=${process.pid}`] } });
  return nets.filter((n) => n.Labels?.[HOST_LABEL] === hostname()).map((n) => n.Name);
}

/** Ids of the live containers this process owns (label `foresight.pid`), e.g. to check nothing is left. */
export async function ownContainerIds(docker: Docker): Promise<string[]> {
  const containers = await docker.listContainers({ all: true, filters: { label: [`${RUN_LABEL}=1`, `${PID_LABEL}=${process.pid}`] } });
  return containers.filter((c) => c.Labels[HOST_LABEL] === hostname()).map((c) => c.Id);
}

/** The containers the final sweep removed itself, and those still there at its deadline. */
export interface OwnSweep {
  removed: string[];
  left: string[];
}

/**
 * Remove every container and network this process owns (its pid and host labels), listing again until none
 * has been seen for `settleMs`: a container whose creation was in flight when the sweep began is removed
 * too. Stops at `deadlineMs` (a slow daemon) or when Docker does not answer (no daemon, no containers).
 */
export async function removeOwnContainers(docker: Docker, opts: { deadlineMs: number; settleMs?: number }): Promise<OwnSweep> {
  const end = Date.now() + opts.deadlineMs;
  const settleMs = opts.settleMs ?? 500;
  const removed = new Set<string>();
  let left: string[] = [];
  let clearSince: number | null = null;
  // Each call races the deadline: a daemon that hangs must not hold the exit.
  const bounded = <T>(p: Promise<T>): Promise<T> =>
    Promise.race([p, sleep(Math.max(0, end - Date.now()), undefined, { ref: false }).then(() => Promise.reject(new Error('deadline')))]);
  while (Date.now() < end) {
    try {
      left = await bounded(ownContainerIds(docker));
    } catch {
      return { removed: [...removed], left };
    }
    if (left.length) {
      clearSince = null;
      // Counted when this sweep removed it (not one already being removed); one that resists is listed again next round.
      const remove = (id: string): Promise<void> => docker.getContainer(id).remove({ force: true, v: true }).then(() => void removed.add(id), () => undefined);
      await bounded(Promise.all(left.map(remove))).catch(() => undefined);
    } else {
      const nets = await bounded(ownNetworkNames(docker)).catch(() => []);
      await bounded(Promise.all(nets.map((n) => removeNetwork(docker, n).catch(() => undefined)))).catch(() => undefined);
      clearSince ??= Date.now();
      if (Date.now() - clearSince >= settleMs) return { removed: [...removed], left: [] };
    }
    await sleep(Math.min(100, Math.max(0, end - Date.now())));
  }
  return { removed: [...removed], left };
}
