#!/bin/sh
# In-container primitive of the pytest runner (POSIX sh; mounted read-only at /foresight).
#   run_state.sh <checkout_sha|.> <overlay_sha|-> <junit_out> <test_files...>
# In /tmp/testbed (cloned once from the read-only git dir at /src): check out <checkout_sha>,
# remove every untracked/ignored file, overlay the given test files that exist at <overlay_sha>,
# then run pytest on the given test files that exist now, writing xunit1 JUnit XML to <junit_out>.
# No test file existing is a successful run of zero tests (empty JUnit, exit 0).
# Exit: pytest's exit code; 90 clone failed, 91 checkout failed, 92 overlay failed, 64 usage.
# FORESIGHT_PYTHON: the interpreter (an env image sets it to its venv); default python3.
# FORESIGHT_SELECT, FORESIGHT_KEEP, FORESIGHT_SAMPLE: see below. FORESIGHT_SRC / FORESIGHT_TESTBED override /src and /tmp/testbed. <checkout_sha> "." (with overlay
# "-") runs in place: pytest on the work tree at $FORESIGHT_TESTBED as it is (grading, checkout.sh).
set -u
if [ $# -lt 3 ]; then
  echo "usage: run_state.sh <checkout_sha|.> <overlay_sha|-> <junit_out> <test_files...>" >&2
  exit 64
fi
checkout=$1 overlay=$2 junit=$3
shift 3
src=${FORESIGHT_SRC:-/src}
testbed=${FORESIGHT_TESTBED:-/tmp/testbed}
export HOME="${HOME:-/tmp}"
export GIT_TERMINAL_PROMPT=0
# A pipe the grader holds (/dev/fd/N) is written, never removed.
case $junit in /dev/fd/*) ;; *) rm -f "$junit" ;; esac

die() { code=$1; shift; echo "run_state: $*" >&2; exit "$code"; }

. "$(dirname "$0")/../checkout.sh"

# Keep only the test files that exist now.
n=$#
for f do
  if [ -f "$f" ]; then set -- "$@" "$f"; fi
done
shift "$n"

# FORESIGHT_SELECT (a repeat of the tests that decide a set): "<file>\t<node id>" lines run those tests
# instead (an empty node id: the whole file), those whose file exists now.
if [ -n "${FORESIGHT_SELECT:-}" ]; then
  set --
  tab=$(printf '\t')
  while IFS= read -r line; do
    f=${line%%"$tab"*} id=${line#*"$tab"}
    [ -n "$f" ] && [ -f "$f" ] || continue
    set -- "$@" "${id:-$f}"
  done <<EOF
$FORESIGHT_SELECT
EOF
fi

if [ $# -eq 0 ]; then
  printf '%s\n' '<?xml version="1.0" encoding="utf-8"?>' \
    '<testsuites><testsuite name="pytest" errors="0" failures="0" skipped="0" tests="0" time="0"></testsuite></testsuites>' \
    >"$junit" || die 90 "cannot write $junit"
  echo "run_state: none of the test files exists at this state: 0 tests"
  exit 0
fi

# FORESIGHT_KEEP / FORESIGHT_SAMPLE: which collected cases run (foresight_keep.py, beside this script).
keep=
if [ -n "${FORESIGHT_KEEP:-}" ] || [ -n "${FORESIGHT_SAMPLE:-}" ]; then keep=1; fi

# --continue-on-collection-errors: a test file that cannot be imported at this state (typical for
# tests overlaid from a later commit) must not stop the other files from running.
if [ "${FORESIGHT_GUARD:-}" = 1 ]; then
  # Guarded grading: the interpreter isolated (-I: no PYTHON* variables, no user site, no cwd on sys.path
  # but the one put there here, as `-m` would), and only the plug-ins installed before the agent's patch
  # (FORESIGHT_PLUGINS, module names), loaded by name: an entry point the patch adds is never loaded.
  # foresight_guard (this folder, first on sys.path: nothing in the work tree can stand in for it) is
  # loaded before them and fails the run when the code under test rewires pytest itself.
  export PYTEST_DISABLE_PLUGIN_AUTOLOAD=1
  FORESIGHT_GUARD_DIR=$(cd "$(dirname "$0")" && pwd)
  export FORESIGHT_GUARD_DIR
  # pytest reads every -p before it collects, wherever it stands.
  set -- "$@" -p foresight_guard
  if [ -n "$keep" ]; then set -- "$@" -p foresight_keep; fi
  for m in ${FORESIGHT_PLUGINS:-}; do set -- "$@" -p "$m"; done
  exec "${FORESIGHT_PYTHON:-python3}" -I -c 'import os, sys; sys.path[:0] = [os.environ["FORESIGHT_GUARD_DIR"], os.getcwd()]; import pytest; raise SystemExit(pytest.main())' \
    -p no:cacheprovider -o junit_family=xunit1 --continue-on-collection-errors --junitxml="$junit" -q -rN "$@"
fi
if [ -n "$keep" ]; then
  PYTHONPATH="$(cd "$(dirname "$0")" && pwd)${PYTHONPATH:+:$PYTHONPATH}"
  export PYTHONPATH
  set -- "$@" -p foresight_keep
fi
exec "${FORESIGHT_PYTHON:-python3}" -m pytest -p no:cacheprovider -o junit_family=xunit1 --continue-on-collection-errors \
  --junitxml="$junit" -q -rN "$@"
