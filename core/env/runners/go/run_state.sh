#!/bin/sh
# In-container primitive of the go runner (POSIX sh; mounted read-only at /foresight).
#   run_state.sh <checkout_sha|.> <overlay_sha|-> <report_out> <test_files...>
# Same contract and git part as runners/pytest/run_state.sh (both source runners/checkout.sh): in
# /tmp/testbed (cloned once from the read-only git dir at /src) check out <checkout_sha>, remove every
# untracked/ignored file, overlay the given test files that exist at <overlay_sha>, keep the test files
# that exist now. Then, per directory of those files (tests.awk: the top-level tests they declare):
#   cd <dir> && go test -json -count=1 -vet=off -run '^(TestA|TestB)$' .
# One go test per directory: a package that does not build costs only its own files. -vet=off: a vet
# finding is no test result, and a newer toolchain's vet rejects older code.
# <report_out> is written once, in order (it may be a pipe the grader holds, /dev/fd/3), one JSON
# object per line:
#   {"Action":"foresight-go","Version":1}
#   per directory: {"Action":"foresight-dir","Dir":"pkg/x","Files":{"pkg/x/a_test.go":["TestA"]}},
#     go's events (events.awk: no output, no subtests), plain lines of go (`FAIL\t<pkg> [build failed]`),
#     {"Action":"foresight-stderr","Output":"..."} (go's stderr), {"Action":"foresight-exit","Dir":"pkg/x","Code":1}
#   {"Action":"foresight-end","Code":<exit>}
# parse-go.ts reads it. The run's log gets the tests' output and go's stderr as text.
# No test file existing is a successful run of zero tests (a report with no directory, exit 0).
# Exit: the highest exit code of the go tests (go test: 0 all passed, 1 a test or the package failed or
# its setup did, 2 it did not build); 90 clone failed or the report cannot be written, 91 checkout
# failed, 92 overlay failed, 93 no go command, 64 usage.
# Environment: GOFLAGS as the env gives it (go >= 1.14 uses vendor/ by itself when go.mod says so);
# GOPROXY=off unless set (nothing is downloaded: -mod=mod finds only what the module cache has);
# GOTOOLCHAIN=local (never another toolchain); GOENV=off (no `go env -w` file a previous run's tests
# wrote); CGO_ENABLED=0 unless set (the images have no C compiler); GOCACHE under /tmp unless set to a
# writable directory. FORESIGHT_GOCACHE_SEED: a warm build cache baked into the image (read-only),
# copied into GOCACHE once, so the standard library is not compiled at every state.
# FORESIGHT_GUARD=1 (grading an agent's patch): a fresh GOCACHE per run, from the seed, so nothing a
# previous run's tests wrote into the cache is linked into this one.
# FORESIGHT_SELECT: "<file>\t<test name>" lines (an empty name: the whole file) run those tests instead
# of the given files, those whose file exists now.
# FORESIGHT_SRC / FORESIGHT_TESTBED override /src and /tmp/testbed. <checkout_sha> "." (with overlay "-")
# runs in place on the work tree at $FORESIGHT_TESTBED as it is (grading, see checkout.sh).
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../state-args.sh"

. "$here/../checkout.sh"

# The test files that exist now, or with FORESIGHT_SELECT the selection's.
n=$#
for f do
  if [ -f "$f" ]; then set -- "$@" "$f"; fi
done
shift "$n"
if [ -n "${FORESIGHT_SELECT:-}" ]; then
  set --
  tab=$(printf '\t')
  while IFS= read -r line; do
    f=${line%%"$tab"*}
    [ -n "$f" ] && [ -f "$f" ] && set -- "$@" "$f"
  done <<EOF
$FORESIGHT_SELECT
EOF
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/foresight-go.XXXXXX") || die 90 "cannot make a scratch directory in /tmp"
trap 'rm -rf "$work"' EXIT
FORESIGHT_GO_FILES=$(printf '%s\n' "$@")
export FORESIGHT_GO_FILES
for f do set -- "$@" "./$f"; shift; done
# Not `awk ... "$@"` with no operand: awk would read its standard input.
if [ $# -eq 0 ]; then set -- /dev/null; fi
awk -f "$here/json.awk" -f "$here/tests.awk" "$@" >"$work/plan" || die 90 "cannot read the test files"

# Without go there is no report: the run is no evidence.
[ ! -s "$work/plan" ] || command -v go >/dev/null 2>&1 \
  || die 93 "no go command on PATH: the image has no Go toolchain (the recipe's Go, or Debian's golang-go)"
exec 4>"$report" || die 90 "cannot write $report"
# Only this shell writes the report (through fd 4); go and the tests never get fd 3 or 4.
exec 3>&-
printf '%s\n' '{"Action":"foresight-go","Version":1}' >&4 || die 90 "cannot write $report"

if [ ! -s "$work/plan" ]; then
  printf '%s\n' '{"Action":"foresight-end","Code":0}' >&4
  echo "run_state: none of the test files exists at this state: 0 tests"
  exit 0
fi

export GOTOOLCHAIN=local GOENV=off
export GOPROXY="${GOPROXY:-off}"
export CGO_ENABLED="${CGO_ENABLED:-0}"
export GOTELEMETRY="${GOTELEMETRY:-off}"
cache=${GOCACHE:-}
if [ -z "$cache" ] || ! mkdir -p "$cache" 2>/dev/null || [ ! -w "$cache" ]; then cache=/tmp/foresight-gocache; fi
if [ "${FORESIGHT_GUARD:-}" = 1 ]; then cache=$work/gocache; fi
mkdir -p "$cache" || die 90 "cannot make GOCACHE $cache"
seed=${FORESIGHT_GOCACHE_SEED:-}
if [ -n "$seed" ] && [ -d "$seed" ] && [ ! -e "$cache/.foresight-seeded" ]; then
  t0=$(date +%s)
  # A copy cut short (the disk is full) is still a valid cache: go rebuilds what is missing.
  if cp -R "$seed/." "$cache/" 2>/dev/null; then : >"$cache/.foresight-seeded"; fi
  echo "run_state: GOCACHE $cache seeded from $seed in $(($(date +%s) - t0)) s"
fi
export GOCACHE="$cache"
echo "run_state: $(go version 2>&1)"

overall=0
while IFS= read -r dir && IFS= read -r pattern && IFS= read -r marker && IFS= read -r jdir; do
  printf '%s\n' "$marker" >&4
  # go's exit code through a file: a pipeline's status is its last command's. The loop's input is the
  # plan: go gets none.
  { (cd "./$dir" && exec go test -json -count=1 -vet=off -run "$pattern" .) </dev/null 2>"$work/err" 4>&-; echo $? >"$work/rc"; } \
    | awk -f "$here/events.awk" 2>&1 >&4
  rc=$(cat "$work/rc" 2>/dev/null)
  awk -f "$here/json.awk" -f "$here/stderr.awk" "$work/err" >&4
  cat "$work/err" >&2
  printf '{"Action":"foresight-exit","Dir":%s,"Code":%d}\n' "$jdir" "${rc:-1}" >&4
  [ "${rc:-1}" -gt "$overall" ] && overall=${rc:-1}
done <"$work/plan"
# go leaves out a file whose //go:build line asks for a newer Go than it is, without a word: say so, last (the
# run's tail), so the caller can move to a newer toolchain (runners/evidence.ts outgrownEnvironment).
have=$(go version 2>/dev/null | sed -n 's/^go version go1\.\([0-9]*\).*/\1/p')
if [ -n "$have" ]; then
  for f do
    need=$(awk '/^package[ \t]/ { exit }
      /^\/\/go:build / && !/\|\|/ { for (i = 2; i <= NF; i++) { t = $i; gsub(/[()]/, "", t); if (t ~ /^go1\.[0-9]+$/ && substr(t, 5) + 0 > max) max = substr(t, 5) + 0 } }
      END { if (max) print max }' "$f")
    if [ -n "$need" ] && [ "$need" -gt "$have" ]; then echo "run_state: ${f#./} needs go1.$need (//go:build), the toolchain is go1.$have"; fi
  done
fi
printf '{"Action":"foresight-end","Code":%d}\n' "$overall" >&4
exit "$overall"
