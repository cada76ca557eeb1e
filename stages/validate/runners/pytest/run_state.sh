#!/bin/sh
# In-container primitive of the pytest runner (POSIX sh; mounted read-only at /foresight).
#   run_state.sh <checkout_sha> <overlay_sha|-> <junit_out> <test_files...>
# In /tmp/testbed (cloned once from the read-only git dir at /src): check out <checkout_sha>,
# remove every untracked/ignored file, overlay the given test files that exist at <overlay_sha>,
# then run pytest on the given test files that exist now, writing xunit1 JUnit XML to <junit_out>.
# No test file existing is a successful run of zero tests (empty JUnit, exit 0).
# Exit: pytest's exit code; 90 clone failed, 91 checkout failed, 92 overlay failed, 64 usage.
# FORESIGHT_PYTHON: the interpreter (an env image sets it to its venv); default python3.
set -u
if [ $# -lt 3 ]; then
  echo "usage: run_state.sh <checkout_sha> <overlay_sha|-> <junit_out> <test_files...>" >&2
  exit 64
fi
checkout=$1 overlay=$2 junit=$3
shift 3
src=/src
testbed=/tmp/testbed
export HOME="${HOME:-/tmp}"
export GIT_TERMINAL_PROMPT=0
rm -f "$junit"

die() { code=$1; shift; echo "run_state: $*" >&2; exit "$code"; }

if [ ! -d "$testbed/.git" ]; then
  # /src belongs to another uid. git 2.39 (bookworm) honours safe.directory only from the
  # global/system config, not from `-c` (the local transport's upload-pack ignores it): write it.
  if [ "$(git config --global --get safe.directory)" != "*" ]; then
    git config --global --replace-all safe.directory '*' || die 90 "cannot write $HOME/.gitconfig"
  fi
  # Clone into a temporary directory first: a clone killed halfway must not look usable.
  rm -rf "$testbed" "$testbed.partial"
  # A local clone copies the object files; one it cannot read (e.g. a partial clone's 0600 .promisor
  # marker) fails it, so fall back to the pack transport, which reads only objects.
  git -c safe.directory='*' clone -q --no-hardlinks --no-checkout "$src" "$testbed.partial" 2>/dev/null \
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

need_commit "$checkout" || die 91 "commit $checkout is not in $src"
git -c advice.detachedHead=false checkout -qf "$checkout" || die 91 "git checkout $checkout failed"
git clean -qfdx || die 91 "git clean failed"

if [ "$overlay" != "-" ]; then
  need_commit "$overlay" || die 92 "commit $overlay is not in $src"
  for f do
    if [ "$(git cat-file -t "$overlay:$f" 2>/dev/null)" = blob ]; then
      git --literal-pathspecs checkout -q "$overlay" -- "$f" || die 92 "cannot overlay $f from $overlay"
    fi
  done
  # Support files the PR's tests need (test apps' models, conftest.py, fixtures), one per line.
  if [ -n "${FORESIGHT_OVERLAY_FILES:-}" ]; then
    printf '%s\n' "$FORESIGHT_OVERLAY_FILES" | while IFS= read -r f; do
      [ -n "$f" ] || continue
      if [ "$(git cat-file -t "$overlay:$f" 2>/dev/null)" = blob ]; then
        git --literal-pathspecs checkout -q "$overlay" -- "$f" || exit 1
      fi
    done || die 92 "cannot overlay the support files from $overlay"
  fi
fi

# Keep only the test files that exist now.
n=$#
for f do
  if [ -f "$f" ]; then set -- "$@" "$f"; fi
done
shift "$n"

if [ $# -eq 0 ]; then
  printf '%s\n' '<?xml version="1.0" encoding="utf-8"?>' \
    '<testsuites><testsuite name="pytest" errors="0" failures="0" skipped="0" tests="0" time="0"></testsuite></testsuites>' \
    >"$junit" || die 90 "cannot write $junit"
  echo "run_state: none of the test files exists at this state: 0 tests"
  exit 0
fi

# --continue-on-collection-errors: a test file that cannot be imported at this state (typical for
# tests overlaid from a later commit) must not stop the other files from running.
exec "${FORESIGHT_PYTHON:-python3}" -m pytest -p no:cacheprovider -o junit_family=xunit1 --continue-on-collection-errors \
  --junitxml="$junit" -q -rN "$@"
