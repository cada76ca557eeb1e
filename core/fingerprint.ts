import { createHash } from 'node:crypto';
import { readFile, readdir } from 'node:fs/promises';
import { join, relative } from 'node:path';

/** A sha256 hex digest of everything that produced a value. Branded so a raw string cannot pass as one. */
export type Fingerprint = string & { readonly __brand: 'Fingerprint' };

/** Stable JSON: object keys sorted, so equal values hash equally. */
export function stableStringify(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => {
    if (v && typeof v === 'object' && !Array.isArray(v)) {
      return Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
    }
    return v;
  });
}

export function fingerprint(...parts: unknown[]): Fingerprint {
  const h = createHash('sha256');
  for (const p of parts) {
    h.update(typeof p === 'string' ? p : stableStringify(p));
    h.update('\0');
  }
  return h.digest('hex') as Fingerprint;
}

/** Hash of every file under the given paths (relative names and contents), for a stage's code version. */
export async function hashTree(root: string, paths: readonly string[]): Promise<Fingerprint> {
  const h = createHash('sha256');
  const files: string[] = [];
  async function walk(p: string): Promise<void> {
    let entries;
    try {
      entries = await readdir(p, { withFileTypes: true });
    } catch {
      files.push(p);
      return;
    }
    for (const e of entries) {
      if (e.name === 'node_modules' || e.name.startsWith('.')) continue;
      const full = join(p, e.name);
      if (e.isDirectory()) await walk(full);
      else if (e.isFile()) files.push(full);
    }
  }
  for (const p of paths) await walk(join(root, p));
  files.sort();
  for (const f of files) {
    h.update(relative(root, f));
    h.update('\0');
    h.update(await readFile(f));
    h.update('\0');
  }
  return h.digest('hex') as Fingerprint;
}
