/**
 * Scratch directories owned by this process: small files git needs as paths (ignore-revs lists, blame
 * grafts). Each is made on first use as `<tmp>/foresight-<name>-<pid>-XXXXXX` and removed when the
 * process exits; one left by a process killed outright is removed by the next process that asks for
 * the same name.
 */
import { rmSync } from 'node:fs';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ForesightError } from './errors.ts';
import { pidAlive } from './pid.ts';

/** Per name: the directory being made, and its path once made (what the synchronous exit hook can reach). */
const made = new Map<string, { dir: Promise<string>; path?: string }>();
let hooked = false;

/** This process's scratch directory for `name` (made once; removed at exit). */
export function processScratch(name: string): Promise<string> {
  let entry = made.get(name);
  if (!entry) {
    const prefix = `foresight-${name}-`;
    const e: { dir: Promise<string>; path?: string } = {
      dir: removeDeadOwned(tmpdir(), prefix)
        .then(() => mkdtemp(join(tmpdir(), `${prefix}${process.pid}-`)))
        .then(
          (p) => (e.path = p),
          (err: Error) => {
            throw new ForesightError(`cannot make a scratch directory in ${tmpdir()}: ${err.message}`, {
              remedy: 'set TMPDIR to a writable directory with free space',
              external: true,
              cause: err,
            });
          },
        ),
    };
    made.set(name, (entry = e));
    if (!hooked) {
      hooked = true;
      process.once('exit', () => {
        for (const x of made.values()) if (x.path) rmSync(x.path, { recursive: true, force: true });
      });
    }
  }
  return entry.dir;
}

/**
 * Entries of `parent` named `<prefix><pid>-...` whose process is gone (killed before its exit hook ran).
 * A live owner, this process included, keeps its own.
 */
export async function removeDeadOwned(parent: string, prefix: string): Promise<void> {
  for (const name of await readdir(parent).catch(() => [] as string[])) {
    if (!name.startsWith(prefix)) continue;
    const pid = Number(/^(\d+)-/.exec(name.slice(prefix.length))?.[1]);
    if (!Number.isInteger(pid) || pid <= 0 || pid === process.pid || pidAlive(pid)) continue;
    await rm(join(parent, name), { recursive: true, force: true });
  }
}
