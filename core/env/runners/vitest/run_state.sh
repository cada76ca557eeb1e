#!/bin/sh
# In-container primitive of the vitest runner (POSIX sh; mounted read-only at /foresight).
#   run_state.sh <checkout_sha|.> <overlay_sha|-> <report_out> <test_files...>
# The work tree prepared as for every runner (../checkout.sh: checkout, clean, overlay; "." in place),
# node_modules and the runner as ../node-modules.sh finds them, then the repository's `vitest run` on the
# given test files that exist now, its json reporter (jest's format) writing to <report_out> (a pipe the
# grader holds, /dev/fd/3, in guarded grading: FORESIGHT_GUARD=1, see ../node-modules.sh).
# No test file existing is a successful run of zero tests (an empty report, exit 0).
# Exit: vitest's (0 passed, 1 tests or test files failed); 90 clone failed, 91 checkout failed, 92
# overlay failed, 93 no vitest installed, 64 usage. FORESIGHT_SRC / FORESIGHT_TESTBED override /src and
# /tmp/testbed.
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../state-args.sh"

. "$here/../checkout.sh"
tool=vitest
. "$here/../node-modules.sh"

[ $# -gt 0 ] || js_empty '{"numTotalTestSuites":0,"numTotalTests":0,"success":true,"testResults":[]}'
js_need_bin
# The results cache lives under node_modules, which is read-only here: vitest 1.3+ is told --no-cache. Older
# ones reject that flag (cac: "Unknown option `--cache`") and their failed write of node_modules/.vitest
# fails the run, so they get a node_modules of their own, links to the installed entries, where it can be
# made (checkout.sh's clean removes it at every state). The file arguments are path filters: a file they
# match beside the requested ones is dropped when the report is read.
version=$(sed -n 's/^[[:space:]]*"version":[[:space:]]*"\([0-9][0-9.]*\).*/\1/p' "${bin%/.bin/vitest}/vitest/package.json" 2>/dev/null | head -n 1)
case $version in
  0.* | 1.[012].*)
    if [ -L node_modules ] && [ -n "${FORESIGHT_NODE_MODULES:-}" ] && [ "$(readlink node_modules)" = "$FORESIGHT_NODE_MODULES" ]; then
      rm -f node_modules && mkdir node_modules \
        && find "$FORESIGHT_NODE_MODULES" -mindepth 1 -maxdepth 1 -exec ln -s -t node_modules {} + \
        || die 93 "cannot link the entries of $FORESIGHT_NODE_MODULES into node_modules"
    fi
    exec "$bin" run --reporter=json --outputFile="$report" "$@"
    ;;
esac
exec "$bin" run --no-cache --reporter=json --outputFile="$report" "$@"
