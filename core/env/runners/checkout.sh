# Sourced by every runner's run_state.sh (POSIX sh), with $checkout, $overlay, $src, $testbed set, a
# `die <code> <message>` function defined and the test files as positional parameters:
# in $testbed (cloned once from the read-only git dir at $src) check out $checkout, remove every
# untracked/ignored file, lay over it the given test files and the support files named in
# $FORESIGHT_OVERLAY_FILES (one per line) that exist at $overlay ("-": none). Leaves the shell in
# $testbed. Exit codes through die: 90 clone failed, 91 checkout failed, 92 overlay failed, 94 the
# source change ($FORESIGHT_SOURCE_BASE, below) does not apply.
# The support files' names are stored names: a name that is not UTF-8 comes C-quoted, as git writes it
# ("tests/caf\351.txt"), and is turned back into its bytes (path_bytes) before git sees it.
#
# In-place mode ($checkout "."; grading in a tier-3 eval image, core/env/container/grade.ts): the work
# tree at $testbed already holds what is to be tested (the agent's patch and the grading bundle laid
# over the base commit), so nothing is cloned, checked out, cleaned or overlaid: that would discard
# the agent's work. The shell just moves to $testbed.
# setuptools_scm's version file (pyproject.toml's [tool.setuptools_scm] write_to / version_file, e.g.
# pytest's src/_pytest/_version.py) is written by the env image's install into a work tree that is gone:
# each state's checkout lacks it. Write it when missing, with the version of the project installed from
# that work tree (a commit that tracks the file keeps its own).
scm_version_file() {
  [ -f pyproject.toml ] || return 0
  vf=$(awk -v q="[\"']" '
    /^[ \t]*\[/ { s = ($0 ~ /^[ \t]*\[[ \t]*tool\.setuptools_scm[ \t]*\]/) }
    s && $0 ~ "^[ \t]*(version_file|write_to)[ \t]*=[ \t]*" q {
      sub("^[^=]*=[ \t]*" q, ""); sub(q ".*$", ""); print; exit
    }' pyproject.toml)
  case $vf in '' | /* | *..* | *[!A-Za-z0-9_./-]*) return 0 ;; esac
  case $vf in *.py) ;; *) return 0 ;; esac
  [ -e "$vf" ] || [ ! -d "$(dirname "$vf")" ] && return 0
  "${FORESIGHT_PYTHON:-python3}" - "$vf" "$PWD" <<'PYEOF' || echo "checkout: could not write $vf" >&2
import importlib.metadata as m, json, os, re, sys
path, tree = sys.argv[1], os.path.realpath(sys.argv[2])
version = "0.0.0"
for d in m.distributions():
    try:
        url = json.loads(d.read_text("direct_url.json") or "{}").get("url", "")
    except Exception:
        url = ""
    if url.startswith("file://") and url.rstrip("/").endswith(("/testbed", tree)):
        version = d.version
        break
parts = tuple(int(p) if p.isdigit() else p for p in re.split(r"[.+]", version))
with open(path, "x") as f:
    f.write("# written by foresight's checkout in place of setuptools_scm's file\n")
    f.write(f"__version__ = version = {version!r}\n__version_tuple__ = version_tuple = {parts!r}\n")
PYEOF
}

# path_bytes: a stored name back to its bytes (sets $path).
. "$(dirname "$0")/../path-bytes.sh"

if [ "$checkout" = . ]; then
  [ "$overlay" = - ] || die 64 "in-place mode (checkout .) takes no overlay commit, got $overlay"
  cd "$testbed" || die 91 "no work tree at $testbed"
  # The env image's editable install points at the work tree it was built in (/tmp/testbed): a src-layout
  # package (src/<pkg>) is found only there, so that path names this work tree too.
  if [ "$testbed" != /tmp/testbed ] && [ ! -e /tmp/testbed ]; then ln -s "$testbed" /tmp/testbed 2>/dev/null || true; fi
  scm_version_file
  # A dot script may return: the rest of this file is the checkout mode.
  return 0
fi
if [ ! -d "$testbed/.git" ]; then
  # /src belongs to another uid. git 2.39 (bookworm) honours safe.directory only from the
  # global/system config, not from `-c` (the local transport's upload-pack ignores it): write it.
  if [ "$(git config --global --get safe.directory)" != "*" ]; then
    git config --global --replace-all safe.directory '*' || die 90 "cannot write $HOME/.gitconfig"
  fi
  # Clone into a temporary directory first: a clone killed halfway must not look usable.
  rm -rf "$testbed" "$testbed.partial"
  # --shared borrows the objects of $src (mounted read-only for the container's life) instead of
  # copying them (Django: 240 MB). Else a copying local clone; one it cannot read (e.g. a partial
  # clone's 0600 .promisor marker) fails, so last the pack transport, which reads only objects.
  git -c safe.directory='*' clone -q --shared --no-checkout "$src" "$testbed.partial" 2>/dev/null \
    || { rm -rf "$testbed.partial" && git -c safe.directory='*' clone -q --no-hardlinks --no-checkout "$src" "$testbed.partial" 2>/dev/null; } \
    || { rm -rf "$testbed.partial" && git -c safe.directory='*' clone -q --no-checkout "file://$src" "$testbed.partial"; } \
    || die 90 "git clone of $src failed"
  mv "$testbed.partial" "$testbed" || die 90 "cannot move the clone into $testbed"
fi
cd "$testbed" || die 90 "no $testbed"

# A local clone copies all objects, but fetch every ref too if a commit is still missing.
have_commit() { git cat-file -e "$1^{commit}" 2>/dev/null; }
need_commit() {
  have_commit "$1" && return 0
  git fetch -q origin '+refs/*:refs/foresight/*' >/dev/null 2>&1
  have_commit "$1"
}

# Compiled modules are kept outside the work tree, so `git clean` does not throw them away at every
# state (a cold Django start compiles ~1,000 modules). Python trusts a .pyc whose source has the same
# mtime (seconds) and size: a file is never rewritten in the second its previous version was written
# in, because each checkout starts in a later second than the previous one ended. Seconds as the file
# system stamps them (the stamp file's own mtime), not date's: file times come from a coarse clock that
# can trail the wall clock by a tick, so a file written just after date's second changed could still
# get the previous second.
export PYTHONPYCACHEPREFIX="${PYTHONPYCACHEPREFIX:-$testbed.pycache}"
stamp="$testbed.stamp"
if [ -f "$stamp" ]; then
  last=$(stat -c %Y "$stamp" 2>/dev/null || echo 0)
  touch "$stamp" || die 91 "cannot touch $stamp"
  while [ "$(stat -c %Y "$stamp")" -le "${last:-0}" ]; do sleep 0.05; touch "$stamp"; done
fi

need_commit "$checkout" || die 91 "commit $checkout is not in $src"
git -c advice.detachedHead=false checkout -qf "$checkout" || die 91 "git checkout $checkout failed"
git clean -qfdx || die 91 "git clean failed"

if [ "$overlay" != "-" ]; then
  need_commit "$overlay" || die 92 "commit $overlay is not in $src"
  if [ -n "${FORESIGHT_OVERLAY_BASE:-}" ]; then
    # Transplant: the PR's changes to these files (diff of $FORESIGHT_OVERLAY_BASE..$overlay), applied
    # three-way onto this commit's own versions, instead of the PR's whole files.
    need_commit "$FORESIGHT_OVERLAY_BASE" || die 92 "commit $FORESIGHT_OVERLAY_BASE is not in $src"
    patch="$testbed.overlay.patch"
    : >"$patch" || die 92 "cannot write $patch"
    diff_of() {
      git --literal-pathspecs diff --full-index --binary "$FORESIGHT_OVERLAY_BASE" "$overlay" -- "$1" >>"$patch" \
        || die 92 "cannot diff $1 between $FORESIGHT_OVERLAY_BASE and $overlay"
    }
    for f do diff_of "$f"; done
    if [ -n "${FORESIGHT_OVERLAY_FILES:-}" ]; then
      # A here-document, not a pipe: die must leave this shell, not a subshell.
      while IFS= read -r f; do
        [ -n "$f" ] || continue
        path_bytes "$f"
        diff_of "$path"
      done <<OVERLAY_FILES
$FORESIGHT_OVERLAY_FILES
OVERLAY_FILES
    fi
    if [ -s "$patch" ] && ! git apply --3way "$patch" >/dev/null 2>&1; then
      # It conflicts (the PR edits a test that an earlier change rewrote or added): back to the commit's
      # own tree, then file by file, and where a module still conflicts, the PR's changed definitions
      # (transplant_defs.py). The system python3: the env's own may be older than 3.8 (PyPy 3.7).
      git reset -q --hard && git clean -qfdx || die 91 "cannot reset $checkout after a failed apply"
      py=/usr/bin/python3
      [ -x "$py" ] || py=python3
      why=$("$py" "$(dirname "$0")/../transplant_defs.py" "$FORESIGHT_OVERLAY_BASE" "$overlay" "$@" 2>&1 >/dev/null) \
        || die 92 "the test changes of $overlay do not apply at $checkout, nor their definitions: $(printf '%s' "$why" | tail -n 1)"
    fi
  else
    for f do
      if [ "$(git cat-file -t "$overlay:$f" 2>/dev/null)" = blob ]; then
        git --literal-pathspecs checkout -q "$overlay" -- "$f" || die 92 "cannot overlay $f from $overlay"
      fi
    done
    # Support files the PR's tests need (test apps' models, conftest.py, fixtures), one per line.
    if [ -n "${FORESIGHT_OVERLAY_FILES:-}" ]; then
      printf '%s\n' "$FORESIGHT_OVERLAY_FILES" | while IFS= read -r f; do
        [ -n "$f" ] || continue
        path_bytes "$f"
        if [ "$(git cat-file -t "$overlay:$path" 2>/dev/null)" = blob ]; then
          git --literal-pathspecs checkout -q "$overlay" -- "$path" || exit 1
        fi
      done || die 92 "cannot overlay the support files from $overlay"
    fi
  fi
fi
if [ -n "${FORESIGHT_SOURCE_BASE:-}" ]; then
  # A PR's source change (diff of $FORESIGHT_SOURCE_BASE..$FORESIGHT_SOURCE_HEAD of the files named in
  # $FORESIGHT_SOURCE_FILES, one per line) applied three-way over this commit, after the tests: does the
  # fix work on an older commit (core/attribution predates.ts). A change that does not apply is no probe.
  fix_base=$FORESIGHT_SOURCE_BASE fix_head=${FORESIGHT_SOURCE_HEAD:-}
  [ -n "$fix_head" ] || die 64 "FORESIGHT_SOURCE_BASE without FORESIGHT_SOURCE_HEAD"
  need_commit "$fix_base" && need_commit "$fix_head" || die 94 "commit $fix_base or $fix_head is not in $src"
  spatch="$testbed.source.patch"
  : >"$spatch" || die 94 "cannot write $spatch"
  while IFS= read -r f; do
    [ -n "$f" ] || continue
    path_bytes "$f"
    git --literal-pathspecs diff --full-index --binary "$fix_base" "$fix_head" -- "$path" >>"$spatch" \
      || die 94 "cannot diff $f between $fix_base and $fix_head"
  done <<SOURCE_FILES
${FORESIGHT_SOURCE_FILES:-}
SOURCE_FILES
  [ -s "$spatch" ] || die 94 "no source change between $fix_base and $fix_head"
  if ! why=$(git apply --3way "$spatch" 2>&1); then
    git reset -q --hard && git clean -qfdx
    die 94 "the source change of $fix_head does not apply at $checkout: $(printf '%s\n' "$why" | grep -v '^U ' | tail -n 1)"
  fi
fi
scm_version_file
# Touched after the last file was written: its mtime is the latest second any of them can have.
touch "$stamp" || die 91 "cannot touch $stamp"
