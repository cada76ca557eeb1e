/**
 * Go toolchains an env image can have offline, all Debian's: each Go release's `golang-<v>-go` package
 * on the Debian release that ships it (bookworm-backports for 1.21–1.23), installed by the env build's apt
 * step beside that release's Python. Which one a commit gets: the oldest that is at least what its go.mod
 * asks (`toolchain go1.x.y`, else `go 1.x`), then the newer ones in order; a go.mod asking for more than
 * the newest gets the newest (its build then says what it lacks).
 */
import { z } from 'zod';

export const GO_TOOLCHAINS = {
  '1.15': { python: '3.9', release: 'bullseye', apt: 'golang-1.15-go' },
  '1.19': { python: '3.11', release: 'bookworm', apt: 'golang-1.19-go' },
  '1.21': { python: '3.11', release: 'bookworm', apt: 'golang-1.21-go/bookworm-backports' },
  '1.22': { python: '3.11', release: 'bookworm', apt: 'golang-1.22-go/bookworm-backports' },
  '1.23': { python: '3.11', release: 'bookworm', apt: 'golang-1.23-go/bookworm-backports' },
  '1.24': { python: '3.13', release: 'trixie', apt: 'golang-1.24-go' },
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

/** The toolchains to try for a go.mod asking `wanted` (null: the newest first), in order. */
export function goOrder(wanted: string | null): GoVersion[] {
  if (wanted === null) return [...GO_VERSIONS].reverse();
  const enough = GO_VERSIONS.filter((v) => minor(v) >= minor(wanted));
  return enough.length ? enough : [GO_VERSIONS[GO_VERSIONS.length - 1]!];
}
