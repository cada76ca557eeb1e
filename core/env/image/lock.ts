/** Lock files serialising env builds of one key across processes on this host (see core/env/README.md). */
import { mkdir, open, readFile, rm, stat } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import path from 'node:path';
import { pidAlive } from '../../foundation/pid.ts';

/** Where lock files live by default (config images.lockDir overrides): one per key, across processes on this host. */
export function defaultLockDir(): string {
  return path.join(tmpdir(), 'foresight-locks');
}

/** Run `fn` holding an exclusive lock file; a lock of a dead process, or older than staleMs, is broken. */
export async function withLock<T>(lockDir: string | null | undefined, name: string, staleMs: number, fn: () => Promise<T>): Promise<T> {
  const dir = lockDir || defaultLockDir();
  await mkdir(dir, { recursive: true });
  const file = path.join(dir, `${name}.lock`);
  const me = hostname();
  for (;;) {
    try {
      const fh = await open(file, 'wx');
      await fh.writeFile(JSON.stringify({ pid: process.pid, host: me, since: new Date().toISOString() }));
      await fh.close();
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const [text, st] = await Promise.all([readFile(file, 'utf8').catch(() => ''), stat(file).catch(() => null)]);
      let owner: { pid?: number; host?: string } = {};
      try {
        owner = JSON.parse(text) as typeof owner;
      } catch {
        /* being written */
      }
      const dead = owner.host === me && typeof owner.pid === 'number' && owner.pid !== process.pid && !pidAlive(owner.pid);
      const old = st !== null && Date.now() - st.mtimeMs > staleMs;
      if (dead || old || !st) {
        await rm(file, { force: true });
        continue;
      }
      await new Promise((r) => setTimeout(r, 500));
    }
  }
  try {
    return await fn();
  } finally {
    await rm(file, { force: true });
  }
}
