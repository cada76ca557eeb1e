#!/usr/bin/env bash
# Create (or reuse) the Python venv the tests use to read our Parquet output with the real
# Hugging Face `datasets` library.
#
#   FORESIGHT_PY_VENV   venv directory (default: .venv-test, relative to the repo root)
#   FORESIGHT_PYTHON    interpreter used to create the venv (default: python3)
#
# Idempotent: if the venv's python already imports `datasets` and `pyarrow`, it prints nothing
# and exits 0. Packages come from a plain `pip install`, so the machine's pip configuration
# (index, find-links, offline wheels, constraints) applies.
set -euo pipefail

SELF="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/$(basename "${BASH_SOURCE[0]}")"
cd "$(dirname "$SELF")/.."

VENV="${FORESIGHT_PY_VENV:-.venv-test}"
# An unreachable index in the pip configuration is retried 5 times per package by default (minutes
# on an offline machine); one try is enough to fall through to the local wheels. Override to retry.
export PIP_RETRIES="${PIP_RETRIES:-0}"
PY="${FORESIGHT_PYTHON:-python3}"
VPY="$VENV/bin/python"

fail() {
  echo "setup-python: error: $*" >&2
  exit 1
}

if [ -x "$VPY" ] && "$VPY" -c 'import datasets, pyarrow' >/dev/null 2>&1; then
  exit 0
fi

# Serialise concurrent runs (e.g. two test processes on a fresh clone) on this script's own file,
# then re-check: another run may have finished the venv while we waited.
if command -v flock >/dev/null 2>&1; then
  exec 9<"$SELF"
  flock 9
  if [ -x "$VPY" ] && "$VPY" -c 'import datasets, pyarrow' >/dev/null 2>&1; then
    exit 0
  fi
fi

command -v "$PY" >/dev/null 2>&1 || fail "'$PY' not found; install Python 3 (>= 3.9) or set FORESIGHT_PYTHON."

if [ -e "$VENV" ] && ! "$VPY" -c 'import sys' >/dev/null 2>&1; then
  # Only ever delete something that is recognisably a (broken) venv, e.g. its base python moved.
  [ -f "$VENV/pyvenv.cfg" ] || fail "$VENV exists but is not a Python venv; remove it or set FORESIGHT_PY_VENV to another path."
  echo "setup-python: $VENV is a broken venv (its python does not run); recreating it" >&2
  rm -rf "$VENV"
fi

if [ ! -e "$VENV" ]; then
  # Debian/Ubuntu system pythons ship venv/ensurepip in a separate package.
  if ! "$PY" -c 'import venv, ensurepip' >/dev/null 2>&1; then
    ver="$("$PY" -c 'import sys; print(f"{sys.version_info[0]}.{sys.version_info[1]}")' 2>/dev/null || echo 3)"
    fail "'$PY -m venv' is unavailable (no venv/ensurepip module); run: sudo apt-get install -y python3-venv python${ver}-venv"
  fi
  echo "setup-python: creating venv at $VENV" >&2
  if ! out="$("$PY" -m venv "$VENV" 2>&1)"; then
    echo "$out" >&2
    rm -rf "$VENV"
    if echo "$out" | grep -qi 'ensurepip\|python3-venv'; then
      fail "'$PY -m venv' failed; run: sudo apt-get install -y python3-venv"
    fi
    fail "'$PY -m venv $VENV' failed (output above)."
  fi
fi

echo "setup-python: installing datasets and pyarrow into $VENV (one-time; can take minutes)" >&2
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
if ! "$VPY" -m pip install --quiet datasets pyarrow >"$log" 2>&1; then
  tail -n 30 "$log" >&2
  fail "pip install datasets pyarrow failed in $VENV (pip output above; check network or pip configuration)."
fi

"$VPY" -c 'import datasets, pyarrow' >/dev/null 2>&1 ||
  fail "installed packages but '$VPY -c \"import datasets, pyarrow\"' still fails."
echo "setup-python: ready ($("$VPY" -c 'import datasets, pyarrow; print(f"datasets {datasets.__version__}, pyarrow {pyarrow.__version__}")'))" >&2
