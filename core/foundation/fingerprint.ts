import { createHash } from 'node:crypto';

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
