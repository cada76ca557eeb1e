#!/bin/sh
# In-container primitive of the jest runner (POSIX sh; mounted read-only at /foresight).
#   run_state.sh <checkout_sha|.> <overlay_sha|-> <report_out> <test_files...>
# The work tree prepared as for every runner (../checkout.sh: checkout, clean, overlay; "." in place),
# node_modules and the runner as ../node-modules.sh finds them, then the repository's jest on the given test
# files that exist now (by path, not as patterns), its --json report written to <report_out> (a pipe the
# grader holds, /dev/fd/3, in guarded grading: FORESIGHT_GUARD=1, see ../node-modules.sh).
# No test file existing is a successful run of zero tests (an empty report, exit 0).
# Exit: jest's (0 passed, 1 tests or test files failed); 90 clone failed, 91 checkout failed, 92 overlay
# failed, 93 no jest installed, 64 usage. FORESIGHT_SRC / FORESIGHT_TESTBED override /src and /tmp/testbed.
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../state-args.sh"

. "$here/../checkout.sh"
tool=jest
. "$here/../node-modules.sh"

[ $# -gt 0 ] || js_empty '{"numTotalTestSuites":0,"numTotalTests":0,"success":true,"testResults":[]}'
js_need_bin
# --ci: a missing snapshot fails instead of being written; no watchman (not in the image).
exec "$bin" --ci --json --outputFile="$report" --runTestsByPath --no-watchman "$@"
