#!/usr/bin/env bash
# Build an offline base image from Debian packages with debootstrap (no image registry needed):
# RELEASE minbase + python3 (with venv, pip and pytest) + git + ca-certificates. One image per era's
# Python: bullseye 3.9, bookworm 3.11 (the default), trixie 3.13. python3-wheel-whl puts Debian's wheel
# beside its setuptools in /usr/share/python-wheels: the build tools of that release, for projects that
# pin an old setuptools (`pip install --no-build-isolation` with them in the venv).
#
# The image is tagged foresight-base:<recipe> where <recipe> is the first 16 hex digits of the sha256 of
# this file followed by the line `release=RELEASE` (so editing the package list or the build steps
# builds new images), and ALIAS (default foresight-base:RELEASE, for bookworm $FORESIGHT_BASE_IMAGE when
# set) is pointed at it. Reused when the recipe tag is present. core/env/image/base.ts computes the same tag.
#
# Usage: build-base-image.sh [--release bullseye|bookworm|trixie] [ALIAS]
#        build-base-image.sh [--release R] --print-tag     # print foresight-base:<recipe> and exit
set -euo pipefail
self="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/$(basename "${BASH_SOURCE[0]}")"
release=bookworm
if [ "${1:-}" = "--release" ]; then release="${2:?--release needs a value}"; shift 2; fi
case "$release" in
  bullseye|bookworm|trixie) ;;
  *) echo "unknown release $release: use bullseye, bookworm or trixie" >&2; exit 2 ;;
esac
packages=python3,python3-venv,python3-pip,python3-pytest,python3-wheel-whl,git,ca-certificates
# bullseye has no python3-wheel-whl: its python-pip-whl (pulled by python3-pip) carries wheel already.
if [ "$release" = bullseye ]; then packages=${packages/python3-wheel-whl,/}; fi
recipe=$({ cat "$self"; echo "release=$release"; } | sha256sum | cut -c1-16)
tag="foresight-base:$recipe"
if [ "${1:-}" = "--print-tag" ]; then echo "$tag"; exit 0; fi
default_alias="foresight-base:$release"
if [ "$release" = bookworm ]; then default_alias="${FORESIGHT_BASE_IMAGE:-foresight-base:bookworm}"; fi
alias="${1:-$default_alias}"

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
echo "building base image $tag (Debian $release: $packages) from $mirror (about 90 s)"
debootstrap --variant=minbase --include="$packages" "$release" "$dir" "$mirror" >"$dir.log" 2>&1 \
  || { tail -n 20 "$dir.log" >&2; echo "debootstrap failed, see $dir.log" >&2; exit 1; }
rm -rf "$dir/var/cache/apt/archives/"*.deb "$dir/var/lib/apt/lists/"*
tar -C "$dir" -c . | docker import -c 'ENV LANG=C.UTF-8' -c "LABEL foresight.base.recipe=$recipe foresight.base.release=$release" - "$tag" >/dev/null
point_alias
rm -f "$dir.log"
echo "built base image $tag${alias:+ (alias $alias)}"
