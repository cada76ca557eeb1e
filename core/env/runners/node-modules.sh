# Sourced (POSIX sh) by the JavaScript runners' run_state.sh after checkout.sh, in the work tree, with
# $tool (jest, vitest, mocha) and $report set, a `die <code> <message>` function defined and the test
# files as positional parameters. It links node_modules, keeps the test files that exist now and sets
# $bin, the runner; then `js_empty <json>` answers a run of no test file, `js_need_bin` checks the runner.
# The env image installs the repository's dependencies outside the work tree, read-only, in the folder
# $FORESIGHT_NODE_MODULES names: a work tree without its own node_modules gets a link to it (checkout.sh's
# clean removes the link at every state). The runner is the repository's own node_modules/.bin/$tool,
# never a global one; under FORESIGHT_GUARD=1 (guarded grading) the one in $FORESIGHT_NODE_MODULES itself,
# so a node_modules the patch put in the work tree cannot stand in for it.
# Exit through die: 93 no dependencies or no runner installed.
export CI=1
export HOME="${HOME:-/tmp}"

if [ ! -e node_modules ] && [ -n "${FORESIGHT_NODE_MODULES:-}" ]; then
  [ -d "$FORESIGHT_NODE_MODULES" ] || die 93 "FORESIGHT_NODE_MODULES=$FORESIGHT_NODE_MODULES is not a directory: the env image installs the dependencies there"
  # A dangling link (its target gone) is replaced.
  rm -f node_modules
  ln -s "$FORESIGHT_NODE_MODULES" node_modules || die 93 "cannot link node_modules to $FORESIGHT_NODE_MODULES"
fi

# Keep only the test files that exist now.
n=$#
for f do
  if [ -f "$f" ]; then set -- "$@" "$f"; fi
done
shift "$n"

bin=node_modules/.bin/$tool
if [ "${FORESIGHT_GUARD:-}" = 1 ] && [ -n "${FORESIGHT_NODE_MODULES:-}" ]; then bin=$FORESIGHT_NODE_MODULES/.bin/$tool; fi

js_empty() {
  printf '%s\n' "$1" >"$report" || die 90 "cannot write $report"
  echo "run_state: none of the test files exists at this state: 0 tests"
  exit 0
}

js_need_bin() {
  [ -x "$bin" ] || die 93 "no $bin in $PWD: the repository's dependencies (FORESIGHT_NODE_MODULES=${FORESIGHT_NODE_MODULES:-unset}) do not install $tool"
}
