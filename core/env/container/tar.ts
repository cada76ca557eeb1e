/**
 * A tar archive of in-memory files for `putArchive`: grading lays the agent's patch and the grading
 * bundle's test files into an eval container with it, so nothing is bind-mounted from the host and the
 * files belong to the eval user (Docker's extraction keeps the headers' owner). Paths longer than
 * ustar's 100 bytes get a PAX header (Django's test paths can be long).
 */
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

function header(name: string, mode: number, size: number, type: '0' | '5' | 'x', o: TarOptions): Buffer {
  const h = Buffer.alloc(512);
  const put = (s: string, at: number, len: number): void => void h.write(s, at, len, 'utf8');
  const oct = (n: number, len: number): string => `${n.toString(8).padStart(len - 1, '0')}\0`;
  put(name, 0, 100);
  put(oct(mode, 8), 100, 8);
  put(oct(o.uid, 8), 108, 8);
  put(oct(o.gid, 8), 116, 8);
  put(oct(size, 12), 124, 12);
  put(oct(0, 12), 136, 12);
  put('        ', 148, 8);
  put(type, 156, 1);
  put('ustar\0', 257, 6);
  put('00', 263, 2);
  let sum = 0;
  for (const b of h) sum += b;
  put(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 8);
  return h;
}

const pad = (n: number): Buffer => Buffer.alloc((512 - (n % 512)) % 512);

/** A PAX record "<len> path=<name>\n", whose length counts its own digits. */
function paxPath(name: string): Buffer {
  const body = ` path=${name}\n`;
  const n = Buffer.byteLength(body);
  let total = n + 1;
  while (n + String(total).length !== total) total = n + String(total).length;
  return Buffer.from(`${total}${body}`, 'utf8');
}

function entry(name: string, mode: number, body: Buffer | null, o: TarOptions): Buffer[] {
  const type = body === null ? '5' : '0';
  const parts: Buffer[] = [];
  let short = name;
  if (Buffer.byteLength(name) > 100) {
    const pax = paxPath(name);
    parts.push(header('PaxHeader', 0o644, pax.length, 'x', o), pax, pad(pax.length));
    short = Buffer.from(name, 'utf8').subarray(0, 100).toString('utf8').replace(/\uFFFD+$/, '');
  }
  parts.push(header(short, mode, body?.length ?? 0, type, o));
  if (body) parts.push(body, pad(body.length));
  return parts;
}

/** Checks that `p` stays inside the directory it is extracted to. */
export function isSafeRelativePath(p: string): boolean {
  return p !== '' && !p.startsWith('/') && !p.split('/').some((s) => s === '..' || s === '' || s === '.') && !/[\0\n\r]/.test(p);
}

/**
 * The archive of `files`, with a directory entry (0755) for every parent directory, all owned by
 * uid:gid. A later file of the same path wins (tar extraction overwrites in order).
 */
export function makeTar(files: readonly TarFile[], o: TarOptions): Buffer {
  const parts: Buffer[] = [];
  const dirs = new Set<string>();
  for (const f of files) {
    if (!isSafeRelativePath(f.path)) {
      throw new ForesightError(`cannot put ${JSON.stringify(f.path)} into a container: not a relative path inside it`, {
        remedy: 'pass repo-relative paths without "..", "." or empty segments',
      });
    }
    const segs = f.path.split('/');
    for (let i = 1; i < segs.length; i++) {
      const d = segs.slice(0, i).join('/');
      if (dirs.has(d)) continue;
      dirs.add(d);
      parts.push(...entry(`${d}/`, 0o755, null, o));
    }
    parts.push(...entry(f.path, f.mode ?? 0o644, f.content, o));
  }
  parts.push(Buffer.alloc(1024));
  return Buffer.concat(parts);
}
