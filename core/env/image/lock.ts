/** Lock files serialising env builds of one key across processes on this host (see core/env/README.md). */
import { mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import lockfile from 'proper-lockfile';
import { ForesightError } from '../../foundation/errors.ts';

/** Where lock files live by default (config images.lockDir overrides): one per key, across processes on this host. */
export function defaultLockDir(): string {
  return path.join(tmpdir(), 'foresight-locks');
}

/** A wait for another holder is said this often: under the 30 s a run's log may stay silent. */
export const WAIT_NOTE_MS = 25_000;

/** How long a lock may go without its holder refreshing it (every 2 s) before it counts as a dead process's. */
const HOLDER_GONE_MS = 10_000;

/**
 * Run `fn` holding an exclusive lock on `name`. proper-lockfile keeps the lock's mtime fresh while `fn`
 * runs, so a lock left by a dead process is taken over once it has gone unrefreshed for 10 s (staleMs if
 * shorter). A holder still running after staleMs (a hung build) lets the lock go.
 */
export async function withLock<T>(
  lockDir: string | null | undefined,
  name: string,
  staleMs: number,
  fn: () => Promise<T>,
  /** Called every WAIT_NOTE_MS while another holder keeps the lock, with how long it has waited. */
  onWait?: (waitedMs: number) => void,
  noteEveryMs = WAIT_NOTE_MS,
): Promise<T> {
  const dir = lockDir || defaultLockDir();
  await mkdir(dir, { recursive: true });
  // A directory `<name>.lockdir`: older versions left plain `<name>.lock` files, which the library cannot remove.
  const lockfilePath = path.join(dir, `${name}.lockdir`);
  const stale = Math.min(staleMs, HOLDER_GONE_MS);
  let release: () => Promise<void>;
  const t0 = Date.now();
  let noted = t0;
  for (let wait = 100; ; wait = Math.min(2 * wait, 500)) {
    try {
      release = await lockfile.lock(path.join(dir, name), {
        lockfilePath,
        realpath: false, // the locked file itself need not exist
        stale,
        update: Math.min(2_000, stale / 2),
        // A holder that lost its lock (its event loop stalled past `stale`) finishes anyway: a build made twice is waste, not harm.
        onCompromised: () => {},
      });
      break;
    } catch (err) {
      // Waiting is ours (no retries option): the library would retry any error forever, an unwritable directory too.
      if ((err as NodeJS.ErrnoException).code !== 'ELOCKED') {
        throw new ForesightError(`cannot take the build lock ${lockfilePath}: ${(err as Error).message}`, {
          remedy: 'make the lock directory writable, or point images.lockDir (FORESIGHT_LOCK_DIR) at one that is',
          cause: err,
        });
      }
      if (onWait && Date.now() - noted >= noteEveryMs) {
        noted = Date.now();
        onWait(noted - t0);
      }
      await sleep(wait);
    }
  }
  // Already released (expired, or taken over when compromised): nothing of ours to remove.
  const letGo = (): Promise<void> => release().catch(() => {});
  const expire = setTimeout(() => void letGo(), Math.min(staleMs, 2 ** 31 - 1)); // a longer delay would fire at once
  expire.unref();
  try {
    return await fn();
  } finally {
    clearTimeout(expire);
    await letGo();
  }
}
