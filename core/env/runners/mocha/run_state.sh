#!/bin/sh
# In-container primitive of the mocha runner (POSIX sh; mounted read-only at /foresight).
#   run_state.sh <checkout_sha|.> <overlay_sha|-> <report_out> <test_files...>
# The work tree prepared as for every runner (../checkout.sh: checkout, clean, overlay; "." in place),
# node_modules and the runner as ../node-modules.sh finds them, then the repository's mocha on the given test
# files that exist now, reporting through foresight-json.cjs (mocha's json reporter; one line of JSON per
# mocha process) to <report_out> (a pipe the grader holds, /dev/fd/3, in guarded grading:
# FORESIGHT_GUARD=1, see ../node-modules.sh).
# mocha loads every file before it runs any test, and one file that cannot be loaded ends the whole
# run: when the joint run ends before it started, each file runs on its own, and a file that cannot be
# loaded alone is reported as such ({"loadError": "<file>"}), the other files' results kept.
# No test file existing is a successful run of zero tests (an empty report, exit 0).
# Exit: 0 every test passed, 1 a test failed or a file could not be loaded (mocha's own code is its
# failure count); 90 clone failed, 91 checkout failed, 92 overlay failed, 93 no mocha installed, 64
# usage. FORESIGHT_SRC / FORESIGHT_TESTBED override /src and /tmp/testbed.
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../state-args.sh"

. "$here/../checkout.sh"
tool=mocha
. "$here/../node-modules.sh"

[ $# -gt 0 ] || js_empty '{"stats":{"tests":0},"tests":[],"pending":[],"failures":[],"passes":[]}'
js_need_bin

# The reporter creates this file when mocha starts running tests: every file given has loaded.
started=$testbed.mocha-started
export FORESIGHT_MOCHA_REPORT="$report" FORESIGHT_MOCHA_STARTED="$started"
run_mocha() {
  rm -f "$started" || die 90 "cannot remove $started"
  "$bin" --reporter "$here/foresight-json.cjs" "$@"
}
load_error() {
  node -e 'process.stdout.write(JSON.stringify({ loadError: process.argv[1] }) + "\n")' "$1" >>"$report" || die 90 "cannot write $report"
}

run_mocha "$@"
rc=$?
if [ -f "$started" ]; then
  [ "$rc" -eq 0 ] && exit 0
  exit 1
fi
if [ $# -eq 1 ]; then
  echo "run_state: mocha could not load $1 (exit $rc)" >&2
  load_error "$1"
  exit 1
fi
echo "run_state: mocha could not load the test files together (exit $rc): each runs on its own" >&2
status=0
for f do
  run_mocha "$f"
  rc=$?
  if [ -f "$started" ]; then
    [ "$rc" -eq 0 ] || status=1
  else
    echo "run_state: mocha could not load $f (exit $rc)" >&2
    load_error "$f"
    status=1
  fi
done
exit $status
