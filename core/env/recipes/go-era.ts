/**
 * Go toolchains an env image can have offline, all Debian's: each Go release's `golang-<v>-go` package
 * on the Debian release that ships it (bookworm-backports for 1.21–1.23), installed by the env build's apt
 * step beside that release's Python. Which one a commit gets: of those at least what its go.mod asks
 * (`toolchain go1.x.y`, else `go 1.x`), the newest released by the commit's date (what its developers ran:
 * a go.mod's `go` line is a floor, often years old, and test files may need more, `//go:build go1.22`),
 * then the newer ones, then the older; a go.mod asking for more than the newest gets the newest (its
 * build then says what it lacks).
 */
import { z } from 'zod';

export const GO_TOOLCHAINS = {
  '1.15': { python: '3.9', release: 'bullseye', apt: 'golang-1.15-go', released: '2020-08-11' },
  '1.19': { python: '3.11', release: 'bookworm', apt: 'golang-1.19-go', released: '2022-08-02' },
  '1.21': { python: '3.11', release: 'bookworm', apt: 'golang-1.21-go/bookworm-backports', released: '2023-08-08' },
  '1.22': { python: '3.11', release: 'bookworm', apt: 'golang-1.22-go/bookworm-backports', released: '2024-02-06' },
  '1.23': { python: '3.11', release: 'bookworm', apt: 'golang-1.23-go/bookworm-backports', released: '2024-08-13' },
  '1.24': { python: '3.13', release: 'trixie', apt: 'golang-1.24-go', released: '2025-02-11' },
} as const;

export type GoVersion = keyof typeof GO_TOOLCHAINS;
export const GO_VERSIONS = Object.keys(GO_TOOLCHAINS) as [GoVersion, ...GoVersion[]];
export const GoVersionSchema = z.enum(GO_VERSIONS, { error: `must be one of ${GO_VERSIONS.map((v) => `"${v}"`).join(', ')}` });

/** Where Debian puts a toolchain: linked into /usr/local/bin by the apt step. */
export function goRoot(v: GoVersion): string {
  return `/usr/lib/go-${v}`;
}

function minor(v: string): number {
  return Number(v.split('.')[1] ?? 0);
}

/** The Go a go.mod asks for: its `toolchain go1.x[.y]` line, else its `go 1.x[.y]` line, as "1.x"; null when it says neither. */
export function goModVersion(goMod: string): string | null {
  const line = (re: RegExp): string | null => {
    for (const l of goMod.split('\n')) {
      const m = re.exec(l.replace(/\/\/.*$/, '').trim());
      if (m) return `1.${m[1]}`;
    }
    return null;
  };
  return line(/^toolchain\s+go1\.(\d+)(?:\.\d+)?(?:\S*)$/) ?? line(/^go\s+1\.(\d+)(?:\.\d+)?(?:\S*)$/);
}

/**
 * The toolchains to try for a go.mod asking `wanted` (null: any) at a commit of `date` (ISO; null: no
 * preference, the oldest that is enough first), in order.
 */
export function goOrder(wanted: string | null, date: string | null = null): GoVersion[] {
  const enough = wanted === null ? [...GO_VERSIONS] : GO_VERSIONS.filter((v) => minor(v) >= minor(wanted));
  if (!enough.length) return [GO_VERSIONS[GO_VERSIONS.length - 1]!];
  if (date === null) return wanted === null ? [...enough].reverse() : enough;
  const day = date.slice(0, 10);
  const at = Math.max(0, enough.findLastIndex((v) => GO_TOOLCHAINS[v].released <= day));
  // Then the newer ones (Go keeps old code building; a test file may ask for more, `//go:build go1.23`), then the older.
  return [...enough.slice(at), ...enough.slice(0, at).reverse()];
}
