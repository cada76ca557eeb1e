#!/usr/bin/env bash
# Build the offline base image from Debian packages with debootstrap (no image registry needed):
# bookworm minbase + python3 (with venv, pip and pytest) + git + ca-certificates. python3-wheel-whl puts
# wheel 0.38 beside setuptools 66 in /usr/share/python-wheels: the build tools of 2023, for projects
# that pin an old setuptools (`pip install --no-build-isolation` with them in the venv).
#
# The image is tagged foresight-base:<recipe> where <recipe> is the first 16 hex digits of this
# file's sha256 (so editing the package list or the build steps builds a new image), and ALIAS
# (default $FORESIGHT_BASE_IMAGE or foresight-base:bookworm) is pointed at it. Reused when the
# recipe tag is present. stages/validate/env/images.ts computes the same tag from this file.
#
# Usage: scripts/build-base-image.sh [ALIAS]
#        scripts/build-base-image.sh --print-tag     # print foresight-base:<recipe> and exit
set -euo pipefail
self="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/$(basename "${BASH_SOURCE[0]}")"
packages=python3,python3-venv,python3-pip,python3-pytest,python3-wheel-whl,git,ca-certificates
recipe=$(sha256sum "$self" | cut -c1-16)
tag="foresight-base:$recipe"
if [ "${1:-}" = "--print-tag" ]; then echo "$tag"; exit 0; fi
alias="${1:-${FORESIGHT_BASE_IMAGE:-foresight-base:bookworm}}"

present() { docker image inspect "$1" >/dev/null 2>&1; }
point_alias() {
  if [ "$alias" != "$tag" ]; then docker tag "$tag" "$alias"; fi
}

if present "$tag"; then
  point_alias
  echo "base image $tag present, reusing${alias:+ (alias $alias)}"
  exit 0
fi

# One build at a time on this host (two processes starting at once): wait, then look again.
if command -v flock >/dev/null 2>&1; then
  exec 9<"$self"
  flock 9
  if present "$tag"; then
    point_alias
    echo "base image $tag built by another process, reusing"
    exit 0
  fi
fi

command -v debootstrap >/dev/null || { echo "debootstrap missing: run 'apt-get install -y debootstrap'" >&2; exit 1; }
src=/etc/apt/sources.list.d/debian.sources
mirror=$(awk '/^URIs:/ {print $2; exit}' "$src" 2>/dev/null || true)
[ -n "$mirror" ] || mirror=$(awk '/^deb / {print $2; exit}' /etc/apt/sources.list 2>/dev/null || true)
[ -n "$mirror" ] || { echo "no Debian mirror found in $src or /etc/apt/sources.list: set one there" >&2; exit 1; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
echo "building base image $tag ($packages) from $mirror (about 90 s)"
debootstrap --variant=minbase --include="$packages" bookworm "$dir" "$mirror" >"$dir.log" 2>&1 \
  || { tail -n 20 "$dir.log" >&2; echo "debootstrap failed, see $dir.log" >&2; exit 1; }
rm -rf "$dir/var/cache/apt/archives/"*.deb "$dir/var/lib/apt/lists/"*
tar -C "$dir" -c . | docker import -c 'ENV LANG=C.UTF-8' -c "LABEL foresight.base.recipe=$recipe" - "$tag" >/dev/null
point_alias
rm -f "$dir.log"
echo "built base image $tag${alias:+ (alias $alias)}"
