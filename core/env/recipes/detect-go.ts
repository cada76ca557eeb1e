/**
 * Install candidates for a Go module (go.mod at the root), one per toolchain the commit can build with
 * (go-era.ts), the newest released by the commit's date first. Modules come from the commit's vendor/ when
 * it has one, else `go mod download`: the install step is offline (GOPROXY=off), so the modules are there
 * only when the configuration names a proxy (FORESIGHT_GOPROXY) and the build's go deps step has downloaded
 * them into the image's module cache (image/go-deps.ts); without one a commit that needs modules fails to
 * install with go's own reason. Each then builds every package and its tests once
 * (`go test -run '^$' ./...`), so the image's build cache (the runner's seed) holds the standard library
 * and the dependencies: a state compiles only what it changed.
 */
import { RecipeSchema } from './schema.ts';
import { goModVersion, goOrder, GO_TOOLCHAINS } from './go-era.ts';
import type { DetectedCandidates, RecipeCandidate } from './detect.ts';

/** What keys a Go image: the module's requirements, their sums and the vendored tree's manifest. */
export const GO_DEPENDENCY_FILES = ['go.mod', 'go.sum', 'vendor/modules.txt'] as const;

/** The warm-up: a package that does not build at this commit is the tests' business, not the image's. */
export const GO_WARM = "go test -count=1 -run '^$' ./... >/dev/null 2>&1 || echo '[foresight] some packages do not build at this commit (their tests will say)'";

export function detectGoCandidates(goMod: string, has: ReadonlySet<string>, goSum: string | undefined, commitDate: string | null = null): DetectedCandidates {
  const wanted = goModVersion(goMod);
  const vendored = has.has('vendor/modules.txt');
  const needsModules = !vendored && (goSum ?? '').trim() !== '';
  const install = [...(needsModules ? ['go mod download'] : []), GO_WARM];
  const reasons = [
    `go.mod: runner go${wanted ? `, asks for Go ${wanted}` : ', names no Go version'}`,
    vendored ? 'vendor/modules.txt: modules from vendor/' : needsModules ? 'go.sum: go mod download (through GOPROXY; off offline)' : 'no third-party modules',
  ];
  const candidates: RecipeCandidate[] = goOrder(wanted, commitDate).map((go) => ({
    label: `go${go}${vendored ? ' vendor' : needsModules ? ' mod download' : ''}`,
    recipe: RecipeSchema.parse({ runner: 'go', go, python: GO_TOOLCHAINS[go].python, install, dependencyFiles: [...GO_DEPENDENCY_FILES] }),
    isolated: true,
  }));
  reasons.push(`${candidates.length} install candidates: ${candidates.map((c) => c.label).join(' -> ')}`);
  return { candidates: candidates as [RecipeCandidate, ...RecipeCandidate[]], reasons };
}
