/**
 * Scratch directories owned by this process: small files git needs as paths (ignore-revs lists, blame
 * grafts). Each is made on first use as `<tmp>/foresight-<name>-<pid>-XXXXXX` and removed when the
 * process exits; one left by a process killed outright is removed by the next process that asks for
 * the same name. A file in one is named by its content, so callers (several clones, several revisions)
 * never overwrite each other's.
 */
import { rmSync } from 'node:fs';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ForesightError } from './errors.ts';
import { fingerprint } from './fingerprint.ts';
import { pidAlive } from './pid.ts';

/** Per name: the directory being made, and its path once made (what the synchronous exit hook can reach). */
const made = new Map<string, { dir: Promise<string>; path?: string }>();

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
    // made only grows: the first directory registers the one exit hook.
    if (made.size === 0) {
      process.once('exit', () => {
        for (const x of made.values()) if (x.path) rmSync(x.path, { recursive: true, force: true });
      });
    }
    made.set(name, (entry = e));
  }
  return entry.dir;
}

const files = new Map<string, Promise<string>>();

/** The path of a file holding `content` in this process's scratch directory `name`, written once. */
export function scratchFile(name: string, content: string): Promise<string> {
  const id = fingerprint(content).slice(0, 32);
  const key = `${name}/${id}`;
  let path = files.get(key);
  if (!path) {
    path = processScratch(name).then(async (dir) => {
      const p = join(dir, id);
      await writeFile(p, content);
      return p;
    });
    files.set(key, path);
  }
  return path;
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
