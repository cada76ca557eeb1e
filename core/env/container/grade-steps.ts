/**
 * What grading runs inside an eval container (container/grade.ts): the shell steps that check the base
 * commit out, apply the patches and (unguarded) reset the test files, the harness restorer's source, and
 * the test directories a graded file's new neighbours are removed from.
 */
import { readFileSync } from 'node:fs';
import { pathBytes, pathText } from '../../foundation/git.ts';
import { EVAL_REPO_PATH, EVAL_UID } from '../image/eval-image.ts';

/** The grading container's scratch folder (tmpfs): the patch, the gold patch, the gold index. */
export const SCRATCH = '/tmp/foresight-grade';
/** The work tree the tests run in (what the env image's editable install points at). */
export const WORKTREE = '/tmp/testbed';
/** Deadline of the git steps (checkout, apply, restore): they touch the work tree once. */
export const GIT_STEP_MS = 300_000;
export const USER = `${EVAL_UID}:${EVAL_UID}`;
export const HARNESS_PY = readFileSync(new URL('../runners/harness.py', import.meta.url), 'utf8');
/** The shell function that turns a stored file name back into its bytes (path_bytes, sets $path). */
const PATH_BYTES_SH = readFileSync(new URL('../runners/path-bytes.sh', import.meta.url), 'utf8');
/** Test directory names: a new file below the topmost one holding a graded test file is removed. */
const TEST_DIR_NAMES = new Set(['tests', 'test', 'testing']);

/**
 * The base commit checked out in /tmp/testbed with /testbed's objects borrowed (the read-only image
 * stays as built), then the plug-ins the environment's Python installs for pytest, listed before any
 * of the patch's code exists: printed as `plugins: <module> ...`.
 */
export const PREPARE_SCRIPT = String.raw`set -eu
export GIT_CONFIG_GLOBAL=/tmp/.gitconfig
git config --global safe.directory '*'
base=$(git -C ${EVAL_REPO_PATH} rev-parse HEAD)
rm -rf ${WORKTREE} ${SCRATCH}
mkdir -p ${SCRATCH}
git init -q ${WORKTREE}
cd ${WORKTREE}
echo ${EVAL_REPO_PATH}/.git/objects > .git/objects/info/alternates
git -c advice.detachedHead=false checkout -q --detach "$base"
if [ "$1" = plugins ]; then
  printf 'plugins: '
  py=$(printenv FORESIGHT_PYTHON || echo python3)
  "$py" -I -c '
try:
    from importlib.metadata import entry_points
    eps = entry_points()
    eps = eps.select(group="pytest11") if hasattr(eps, "select") else eps.get("pytest11", [])
    values = [e.value for e in eps]
except Exception:
    import pkg_resources
    values = [e.module_name for e in pkg_resources.iter_entry_points("pytest11")]
print(" ".join(sorted(set(v.split(":")[0].strip() for v in values))))
'
fi`;

/** The patch applied in the work tree; then the gold tree (base + the row's own patch) written from a scratch index. */
export const APPLY_SCRIPT = String.raw`cd ${WORKTREE} || exit 1
export GIT_CONFIG_GLOBAL=/tmp/.gitconfig
if [ -s ${SCRATCH}/patch.diff ]; then git apply --verbose ${SCRATCH}/patch.diff || exit 3; fi
export GIT_INDEX_FILE=${SCRATCH}/gold.index
tree=
if [ -s ${SCRATCH}/gold.diff ] && git read-tree HEAD && git apply --cached ${SCRATCH}/gold.diff 2>/dev/null; then tree=$(git write-tree); fi
[ -n "$tree" ] || tree=HEAD
echo "gold-tree: $tree"`;

/** Unguarded only: resets the given files (stored names) to HEAD (the base commit) when the patch touched them; removes those HEAD lacks. */
export const RESET_SCRIPT = String.raw`cd ${WORKTREE} || exit 1
export GIT_CONFIG_GLOBAL=/tmp/.gitconfig
${PATH_BYTES_SH}
for name do
  path_bytes "$name"
  f=$path
  if git cat-file -e "HEAD:$f" 2>/dev/null; then
    if [ -n "$(git status --porcelain --untracked-files=all -- ":(literal)$f")" ]; then
      git checkout -q HEAD -- ":(literal)$f" || { echo "cannot reset $name" >&2; exit 1; }
      echo "reset $name"
    fi
  elif [ -e "$f" ] || [ -L "$f" ]; then
    rm -rf -- "$f" || { echo "cannot remove $name" >&2; exit 1; }
    echo "removed $name"
  fi
done`;

/**
 * The directories in which a new file is removed: for each graded test file, the topmost ancestor
 * named tests/test/testing, else its own directory (none for a file at the root). Stored file names
 * (pathText) in and out: split on the bytes they name, so a folder that is not UTF-8 keeps its place.
 */
export function testDirsOf(files: readonly string[]): string[] {
  const dirs = new Set<string>();
  for (const f of files) {
    const parts = pathBytes(f).toString('latin1').split('/').slice(0, -1);
    if (parts.length === 0) continue;
    const at = parts.findIndex((p) => TEST_DIR_NAMES.has(p));
    dirs.add(pathText(Buffer.from((at >= 0 ? parts.slice(0, at + 1) : parts).join('/'), 'latin1')));
  }
  return [...dirs].sort();
}

/** A patch as git apply wants it: ending in a newline; blank: none. */
export function patchText(patch: string | undefined): string {
  if (!patch?.trim()) return '';
  return patch.endsWith('\n') ? patch : `${patch}\n`;
}
