# Sourced first by the go, jest, vitest and mocha run_state.sh (POSIX sh; a dot script shares the caller's
# arguments): checks and takes `<checkout_sha|.> <overlay_sha|-> <report_out>`, leaving the test files as
# "$@"; sets $checkout $overlay $report $src $testbed (FORESIGHT_SRC / FORESIGHT_TESTBED override /src and
# /tmp/testbed), HOME (default /tmp) and GIT_TERMINAL_PROMPT=0; removes a stale report file (a pipe the
# grader holds, /dev/fd/N, is written, never removed); defines `die <code> <message>`.
if [ $# -lt 3 ]; then
  echo "usage: run_state.sh <checkout_sha|.> <overlay_sha|-> <report_out> <test_files...>" >&2
  exit 64
fi
checkout=$1 overlay=$2 report=$3
shift 3
src=${FORESIGHT_SRC:-/src}
testbed=${FORESIGHT_TESTBED:-/tmp/testbed}
export HOME="${HOME:-/tmp}"
export GIT_TERMINAL_PROMPT=0
case $report in /dev/fd/*) ;; *) rm -f "$report" ;; esac

die() { code=$1; shift; echo "run_state: $*" >&2; exit "$code"; }
