/**
 * Chain containers must not outlive the process: every live container is tracked here; SIGINT/SIGTERM
 * remove them all (force) and exit 130/143; removeStaleContainers() sweeps up after killed processes.
 */
import { hostname } from 'node:os';
import type Docker from 'dockerode';

export const RUN_LABEL = 'foresight.run';
export const PID_LABEL = 'foresight.pid';
export const HOST_LABEL = 'foresight.host';

/** Labels for a new chain container: who owns it, so a sweep can tell stale from live. */
export function ownerLabels(): Record<string, string> {
  return { [RUN_LABEL]: '1', [PID_LABEL]: String(process.pid), [HOST_LABEL]: hostname() };
}

const live = new Map<string, Docker>();
const SIGNALS = { SIGINT: 130, SIGTERM: 143 } as const;
type HandledSignal = keyof typeof SIGNALS;
let handlersInstalled = false;
let exiting = false;
let exitAfterCleanup = true;

/**
 * By default a SIGINT/SIGTERM removes the live containers and then exits 130/143. Pass false when
 * the caller handles the signal itself (e.g. aborts and exits on its own): the containers are still
 * removed, but the process is left running. Without another listener the signal is then ignored.
 */
export function setExitAfterSignalCleanup(exit: boolean): void {
  exitAfterCleanup = exit;
}

export function trackContainer(docker: Docker, id: string): void {
  live.set(id, docker);
  installSignalHandlers();
}

export function untrackContainer(id: string): void {
  live.delete(id);
  if (live.size === 0) uninstallSignalHandlers();
}

/** Ids of the containers this process has open. */
export function liveContainerIds(): string[] {
  return [...live.keys()];
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

/** Remove every container this process has open. Idempotent; never throws. */
export async function removeLiveContainers(): Promise<void> {
  const entries = [...live.entries()];
  await Promise.allSettled(
    entries.map(async ([id, docker]) => {
      await forceRemove(docker, id);
      untrackContainer(id);
    }),
  );
}

/** Whether a process of this host is still running (EPERM: it is, under another user). */
export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Remove containers labelled `foresight.run=1` that no running foresight process owns:
 * not open in this process, and owned by a dead process on this host (or carrying no owner).
 * Containers of live processes and of other hosts sharing the daemon are left alone.
 * Returns the ids removed. Safe to call concurrently and repeatedly.
 */
export async function removeStaleContainers(docker: Docker): Promise<string[]> {
  const containers = await docker.listContainers({ all: true, filters: { label: [`${RUN_LABEL}=1`] } });
  const me = hostname();
  const stale = containers.filter((c) => {
    if (live.has(c.Id)) return false;
    const host = c.Labels[HOST_LABEL];
    const pid = Number(c.Labels[PID_LABEL]);
    if (host === undefined || !Number.isInteger(pid) || pid <= 0) return true;
    if (host !== me) return false;
    return pid === process.pid || !pidAlive(pid);
  });
  await Promise.all(stale.map((c) => forceRemove(docker, c.Id)));
  return stale.map((c) => c.Id);
}

function onSignal(signal: HandledSignal): void {
  const code = SIGNALS[signal];
  if (exiting) process.exit(code); // second signal: stop waiting for the cleanup
  exiting = true;
  process.stderr.write(`\nforesight: ${signal}, removing ${live.size} container(s)…\n`);
  if (!exitAfterCleanup) {
    void removeLiveContainers().finally(() => {
      exiting = false;
    });
    return;
  }
  const hardStop = setTimeout(() => process.exit(code), 15_000);
  hardStop.unref();
  void removeLiveContainers().finally(() => process.exit(code));
}

const handlers: Record<HandledSignal, () => void> = {
  SIGINT: () => onSignal('SIGINT'),
  SIGTERM: () => onSignal('SIGTERM'),
};

function installSignalHandlers(): void {
  if (handlersInstalled) return;
  handlersInstalled = true;
  for (const sig of Object.keys(handlers) as HandledSignal[]) process.on(sig, handlers[sig]);
}

function uninstallSignalHandlers(): void {
  if (!handlersInstalled || exiting) return;
  handlersInstalled = false;
  for (const sig of Object.keys(handlers) as HandledSignal[]) process.off(sig, handlers[sig]);
}
