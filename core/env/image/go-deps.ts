/**
 * When a Go image gets its go deps step (goDepsScript below): its recipe is a Go one whose install
 * runs `go mod download` and the configuration names a module proxy (FORESIGHT_GOPROXY). The step runs with
 * the network before the offline install step and fills the module cache that step then reads. The proxy
 * reaches it only as its exec's variable: it may carry credentials, so it is registered for redaction whole,
 * per entry of its list and per credential, and never keys an image (go.sum pins what it serves).
 */
import { splitCredentials } from '../../foundation/config.ts';
import { registerSecret } from '../../foundation/secrets.ts';
import type { Recipe } from '../recipes/schema.ts';
import { BUILD_USER_PREAMBLE, CHECKOUT, GO_ENV, GO_EXPORT } from './build-scripts.ts';
import type { PackageSources } from './types.ts';

type GoRecipe = Pick<Recipe, 'install'> & { go?: string | undefined };
type GoSources = Pick<PackageSources, 'goProxy' | 'goFlags'>;

/** Whether the recipe's install downloads modules (detect-go.ts puts `go mod download` there when go.sum names some). */
export function downloadsGoModules(recipe: GoRecipe): boolean {
  return recipe.go !== undefined && recipe.install.some((cmd) => /(^|[\s;&|(])go mod download(\s|$|[;&|)])/.test(cmd));
}

/** Whether a build of `recipe` runs the go deps step with `sources`. */
export function runsGoDeps(recipe: GoRecipe, sources: Partial<GoSources> | null | undefined): boolean {
  return Boolean(sources?.goProxy) && downloadsGoModules(recipe);
}

/**
 * What keys a Go image beyond its recipe when it has the go deps step: that step's script and GOFLAGS (which
 * may change what is downloaded), never the proxy. Nothing otherwise, so other images keep their keys.
 */
export function goDepsKeyParts(recipe: GoRecipe, sources: Partial<GoSources> | null | undefined, script: string): unknown[] {
  if (!runsGoDeps(recipe, sources)) return [];
  return [{ goDeps: script, ...(sources?.goFlags ? { goFlags: sources.goFlags } : {}) }];
}

export interface GoDeps {
  /** The step's exec variables on its command line (FORESIGHT_GOFLAGS): no credential. */
  env: string[];
  /** The step's secret exec variables (FORESIGHT_GOPROXY): never a command line, an image or a log. */
  secretEnv: string[];
  /** For the build log (no proxy). */
  notes: string[];
}

/** The go deps step's variables for `recipe`, or null when it has none (see runsGoDeps). */
export function goDepsSetup(recipe: GoRecipe, sources: Partial<GoSources> | null | undefined): GoDeps | null {
  if (!runsGoDeps(recipe, sources)) return null;
  const proxy = sources!.goProxy!;
  registerSecret('Go proxy', proxy);
  // A list (`a,b|direct`): each entry, and the credentials of each, as go may print one of them.
  for (const entry of proxy.split(/[,|]/)) {
    const e = entry.trim();
    if (e === '' || e === 'direct' || e === 'off') continue;
    registerSecret('Go proxy', e);
    registerSecret('Go proxy', e.replace(/\/+$/, ''));
    const { credentials } = splitCredentials(e);
    if (credentials) {
      registerSecret('Go proxy credentials', credentials);
      registerSecret('Go proxy credentials', credentials.split(':').slice(1).join(':'));
    }
  }
  const flags = sources?.goFlags ?? null;
  return {
    env: flags ? [`FORESIGHT_GOFLAGS=${flags}`] : [],
    secretEnv: [`FORESIGHT_GOPROXY=${proxy}`],
    notes: [`go modules: go mod download in the go deps step, GOPROXY from the configuration (FORESIGHT_GOPROXY)${flags ? `, GOFLAGS ${flags} (FORESIGHT_GOFLAGS)` : ''}`],
  };
}

/** The install failure's hint for a Go recipe that downloads modules and has no proxy. */
export function noGoProxyHint(recipe: GoRecipe, sources: Partial<GoSources> | null | undefined): string | null {
  if (!downloadsGoModules(recipe) || sources?.goProxy) return null;
  return '[foresight] the install step is offline (GOPROXY=off): set FORESIGHT_GOPROXY to a Go module proxy so the go deps step downloads the modules go.sum names';
}

/**
 * The go deps step of a Go image (BUILD_USER, with network; image/go-deps.ts says when it runs): the commit
 * checked out, then `go mod download` through the configured proxy into GOMODCACHE, where the offline
 * install step's own `go mod download` finds every module. GOPROXY comes only as the exec's variable
 * FORESIGHT_GOPROXY (it may carry credentials), GOFLAGS as FORESIGHT_GOFLAGS; go.sum checks what arrives.
 */
export function goDepsScript(): string {
  return [
    ...BUILD_USER_PREAMBLE,
    ...CHECKOUT,
    GO_EXPORT,
    '[ -n "${FORESIGHT_GOPROXY:-}" ] || fail 1 "no FORESIGHT_GOPROXY in the go deps step"',
    'export GOPROXY="$FORESIGHT_GOPROXY" GOFLAGS="${FORESIGHT_GOFLAGS:-}"',
    'step "go mod download (GOPROXY from the configuration${GOFLAGS:+, GOFLAGS=$GOFLAGS}; $(go version))"',
    "go mod download || fail $? 'go mod download'",
    // go.mod and go.sum as committed, should this go have tidied them.
    'git checkout -q -- . 2>/dev/null',
    `echo "[foresight] modules downloaded: $(find ${GO_ENV.GOMODCACHE}/cache/download -name '*.zip' 2>/dev/null | wc -l) zips in ${GO_ENV.GOMODCACHE}"`,
  ].join('\n');
}
