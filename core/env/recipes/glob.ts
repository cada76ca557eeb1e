/**
 * Path globs of recipes (dependencyFiles, testFiles, ignoreTests), matched against repo-relative
 * paths with `/` separators:
 *   `*`  any characters except `/`         `?`  one character except `/`
 *   `**` any characters including `/` (as a whole segment, `a/**` + `/b` also matches `a/b`)
 *   `{x,y}` either alternative             `[abc]` one of the characters
 * A glob is anchored at the repository root: `requirements*.txt` matches only the top-level files;
 * write `**` + `/requirements*.txt` for every directory.
 */

const cache = new Map<string, RegExp>();

function escape(c: string): string {
  return /[\\^$.*+?()[\]{}|/]/.test(c) ? `\\${c}` : c;
}

export function globToRegExp(glob: string): RegExp {
  const hit = cache.get(glob);
  if (hit) return hit;
  let re = '';
  let inBraces = 0;
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!;
    if (c === '*') {
      if (glob[i + 1] === '*') {
        const atStart = i === 0 || glob[i - 1] === '/';
        const slashAfter = glob[i + 2] === '/';
        if (atStart && slashAfter) {
          re += '(?:[^/]*/)*'; // `**/`: zero or more directories
          i += 2;
        } else {
          re += '.*';
          i += 1;
        }
      } else {
        re += '[^/]*';
      }
    } else if (c === '?') {
      re += '[^/]';
    } else if (c === '{') {
      inBraces++;
      re += '(?:';
    } else if (c === '}' && inBraces > 0) {
      inBraces--;
      re += ')';
    } else if (c === ',' && inBraces > 0) {
      re += '|';
    } else if (c === '[') {
      const end = glob.indexOf(']', i + 1);
      if (end === -1) {
        re += '\\[';
      } else {
        const body = glob.slice(i + 1, end).replace(/\\/g, '\\\\');
        re += `[${body.startsWith('!') ? `^${body.slice(1)}` : body}]`;
        i = end;
      }
    } else {
      re += escape(c);
    }
  }
  const out = new RegExp(`^${re}$`);
  cache.set(glob, out);
  return out;
}

export function matchesGlob(path: string, glob: string): boolean {
  return globToRegExp(glob).test(path);
}

export function matchesAny(path: string, globs: readonly string[]): boolean {
  return globs.some((g) => matchesGlob(path, g));
}

/** True when the characters are those of a plain path (no glob syntax). */
export function isLiteralGlob(glob: string): boolean {
  return !/[*?{}[\]]/.test(glob);
}
