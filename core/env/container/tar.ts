/**
 * A tar archive of in-memory files for `putArchive`: grading lays the agent's patch and the grading
 * bundle's test files into an eval container with it, so nothing is bind-mounted from the host and the
 * files belong to the eval user (Docker's extraction keeps the headers' owner). tar-stream writes the
 * headers: a path longer than ustar's 100 bytes goes into the prefix field or a PAX header (Django's
 * test paths can be long).
 */
import { buffer } from 'node:stream/consumers';
import { pack } from 'tar-stream';
import { ForesightError } from '../../foundation/errors.ts';

export interface TarFile {
  /** Relative path inside the archive (no leading /, no ..). */
  path: string;
  content: Buffer;
  /** Default 0o644. */
  mode?: number;
}

export interface TarOptions {
  uid: number;
  gid: number;
}

/** Checks that `p` stays inside the directory it is extracted to. */
export function isSafeRelativePath(p: string): boolean {
  return p !== '' && !p.startsWith('/') && !p.split('/').some((s) => s === '..' || s === '' || s === '.') && !/[\0\n\r]/.test(p);
}

/**
 * The archive of `files`, with a directory entry (0755) for every parent directory, all owned by
 * uid:gid. A later file of the same path wins (tar extraction overwrites in order). The same files give
 * the same bytes (mtime 0): the eval image key includes the runner tar's digest.
 */
export async function makeTar(files: readonly TarFile[], o: TarOptions): Promise<Buffer> {
  for (const f of files) {
    if (!isSafeRelativePath(f.path)) {
      throw new ForesightError(`cannot put ${JSON.stringify(f.path)} into a container: not a relative path inside it`, {
        remedy: 'pass repo-relative paths without "..", "." or empty segments',
      });
    }
  }
  const tar = pack();
  const owner = { uid: o.uid, gid: o.gid, mtime: new Date(0) };
  const dirs = new Set<string>();
  for (const f of files) {
    const segs = f.path.split('/');
    for (let i = 1; i < segs.length; i++) {
      const d = segs.slice(0, i).join('/');
      if (dirs.has(d)) continue;
      dirs.add(d);
      // The trailing slash as tar itself writes it (tar-stream does not add it).
      tar.entry({ ...owner, name: `${d}/`, type: 'directory', mode: 0o755 });
    }
    tar.entry({ ...owner, name: f.path, type: 'file', mode: f.mode ?? 0o644 }, f.content);
  }
  tar.finalize();
  return buffer(tar);
}
