/**
 * A tar archive of in-memory files for `putArchive`: grading lays the agent's patch and the grading
 * bundle's test files into an eval container with it, so nothing is bind-mounted from the host and the
 * files belong to the eval user (Docker's extraction keeps the headers' owner). Paths are stored file
 * names (pathText: a name that is not UTF-8 is git's C-quoted form) and go into the archive as their
 * bytes, which tar-stream cannot write (it encodes names as UTF-8): the ustar headers are written
 * here. A path longer than ustar's 100-byte name field goes into its prefix field, or, when it does not
 * fit there either, into a PAX header (Django's test paths can be long).
 */
import { ForesightError } from '../../foundation/errors.ts';
import { pathBytes } from '../../foundation/git.ts';

export interface TarFile {
  /** Relative path inside the archive (no leading /, no ..): a stored file name (pathText). */
  path: string;
  content: Buffer;
  /** Default 0o644. */
  mode?: number;
}

export interface TarOptions {
  uid: number;
  gid: number;
}

/** The bytes a stored path names, or null when it is a malformed quoted form. */
function bytesOf(p: string): Buffer | null {
  try {
    return pathBytes(p);
  } catch {
    return null;
  }
}

/** Checks that `p` (a stored file name) stays inside the directory it is extracted to, judged on the bytes it names. */
export function isSafeRelativePath(p: string): boolean {
  const bytes = bytesOf(p);
  if (bytes === null) return false;
  const b = bytes.toString('latin1');
  return b !== '' && !b.startsWith('/') && !b.split('/').some((s) => s === '..' || s === '' || s === '.') && !/[\0\n\r]/.test(b);
}

const BLOCK = 512;

/** An octal header field of `width` bytes: digits, then a space and NULs (as tar-stream and GNU tar write it). */
function octal(header: Buffer, at: number, width: number, value: number): void {
  header.write(`${value.toString(8).padStart(width - 2, '0')} `, at, 'latin1');
}

/** "<length> <key>=<value>\n", the length counting the whole record in bytes. */
function paxRecord(key: string, value: Buffer): Buffer {
  const body = Buffer.concat([Buffer.from(` ${key}=`, 'latin1'), value, Buffer.from('\n')]);
  let len = body.length + 1;
  while (String(len).length + body.length !== len) len = String(len).length + body.length;
  return Buffer.concat([Buffer.from(String(len)), body]);
}

/** The name as ustar's prefix and name fields, or null when it fits neither way. */
function ustarName(name: Buffer): { prefix: Buffer; name: Buffer } | null {
  if (name.length <= 100) return { prefix: Buffer.alloc(0), name };
  for (let at = name.indexOf(0x2f); at >= 0; at = name.indexOf(0x2f, at + 1)) {
    if (at > 155) break;
    if (name.length - at - 1 <= 100 && at > 0) return { prefix: name.subarray(0, at), name: name.subarray(at + 1) };
  }
  return null;
}

function header(fields: { name: Buffer; prefix?: Buffer; mode: number; size: number; type: '0' | '5' | 'x' }, o: TarOptions): Buffer {
  const h = Buffer.alloc(BLOCK);
  fields.name.copy(h, 0);
  octal(h, 100, 8, fields.mode);
  octal(h, 108, 8, o.uid);
  octal(h, 116, 8, o.gid);
  octal(h, 124, 12, fields.size);
  octal(h, 136, 12, 0); // mtime 0: the same files give the same bytes
  h.write(fields.type, 156, 'latin1');
  h.write('ustar\u000000', 257, 'latin1');
  octal(h, 329, 8, 0);
  octal(h, 337, 8, 0);
  fields.prefix?.copy(h, 345);
  h.fill(0x20, 148, 156);
  let sum = 0;
  for (const b of h) sum += b;
  octal(h, 148, 8, sum);
  return h;
}

function padded(content: Buffer): Buffer[] {
  const rest = content.length % BLOCK;
  return rest ? [content, Buffer.alloc(BLOCK - rest)] : [content];
}

/** One entry's blocks: a PAX header first when ustar's fields cannot hold the name. */
function entry(name: Buffer, mode: number, type: '0' | '5', content: Buffer, o: TarOptions): Buffer[] {
  const fits = ustarName(name);
  if (fits) return [header({ ...fits, mode, size: content.length, type }, o), ...padded(content)];
  const pax = paxRecord('path', name);
  const placeholder = Buffer.from('PaxHeader');
  return [header({ name: placeholder, mode, size: pax.length, type: 'x' }, o), ...padded(pax), header({ name: placeholder, mode, size: content.length, type }, o), ...padded(content)];
}

/**
 * The archive of `files`, with a directory entry (0755) for every parent directory, all owned by
 * uid:gid. A later file of the same path wins (tar extraction overwrites in order). The same files give
 * the same bytes (mtime 0).
 */
export async function makeTar(files: readonly TarFile[], o: TarOptions): Promise<Buffer> {
  for (const f of files) {
    if (!isSafeRelativePath(f.path)) {
      throw new ForesightError(`cannot put ${JSON.stringify(f.path)} into a container: not a relative path inside it`, {
        remedy: 'pass repo-relative paths without "..", "." or empty segments',
      });
    }
  }
  const blocks: Buffer[] = [];
  const dirs = new Set<string>();
  for (const f of files) {
    // Latin-1: one character per byte, so "/" splits the name's bytes.
    const name = pathBytes(f.path).toString('latin1');
    const segs = name.split('/');
    for (let i = 1; i < segs.length; i++) {
      const d = `${segs.slice(0, i).join('/')}/`;
      if (dirs.has(d)) continue;
      dirs.add(d);
      blocks.push(...entry(Buffer.from(d, 'latin1'), 0o755, '5', Buffer.alloc(0), o));
    }
    blocks.push(...entry(Buffer.from(name, 'latin1'), f.mode ?? 0o644, '0', f.content, o));
  }
  // The end of the archive: two zero blocks.
  blocks.push(Buffer.alloc(2 * BLOCK));
  return Buffer.concat(blocks);
}
