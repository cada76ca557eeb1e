import { Minimatch, type MinimatchOptions } from 'minimatch';

/**
 * Path globs (recipes' dependencyFiles, testFiles, ignoreTests), matched by minimatch against
 * repo-relative paths with `/` separators. A glob is anchored at the repository root:
 * `requirements*.txt` matches only the top-level files, `**` + `/requirements*.txt` every directory.
 * `*`, `?`, `[...]`, `{a,b}`, extglobs and `\` escapes mean what minimatch documents (so `\*` is a
 * literal star, `[]]` a `]`, and `**.py` is `*.py`: `**` spans folders only as a whole path segment).
 *
 * Options, and why:
 *  - dot: a recipe names hidden folders like any other (`**` + `/x` also finds `.github/x`);
 *  - platform linux: paths are git's, `/`-separated and `\`-escaped whatever the host;
 *  - nonegate, nocomment: a glob is one entry of a list, so a leading `!` or `#` is a literal
 *    character, not "everything else" or "nothing", which would silently turn a list entry around.
 */
const OPTIONS: MinimatchOptions = { dot: true, platform: 'linux', nonegate: true, nocomment: true };

/** Compiled patterns are pure functions of the glob text, so memoising them cannot go stale. */
const compiled = new Map<string, Minimatch>();

function compile(glob: string): Minimatch {
  let mm = compiled.get(glob);
  if (!mm) compiled.set(glob, (mm = new Minimatch(glob, OPTIONS)));
  return mm;
}

export function matchesGlob(path: string, glob: string): boolean {
  return compile(glob).match(path);
}

export function matchesAny(path: string, globs: readonly string[]): boolean {
  return globs.some((g) => matchesGlob(path, g));
}

/** True when the glob matches exactly the path spelled by its own characters (no wildcard, brace or escape). */
export function isLiteralGlob(glob: string): boolean {
  const mm = compile(glob);
  const only = mm.set.length === 1 ? mm.set[0]! : null;
  return only !== null && only.every((part) => typeof part === 'string') && only.join('/') === glob;
}
