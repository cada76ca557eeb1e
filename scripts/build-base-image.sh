#!/usr/bin/env bash
# Build the offline base image (Debian bookworm + python3 + pytest + git) when no registry is reachable.
# Reused when present. Usage: scripts/build-base-image.sh [IMAGE_NAME]
set -euo pipefail
name="${1:-${FORESIGHT_BASE_IMAGE:-foresight-base:bookworm}}"
if docker image inspect "$name" >/dev/null 2>&1; then
  echo "base image $name present, reusing"
  exit 0
fi
command -v debootstrap >/dev/null || { echo "debootstrap missing: run 'apt-get install -y debootstrap'" >&2; exit 1; }
src=/etc/apt/sources.list.d/debian.sources
mirror=$(awk '/^URIs:/ {print $2; exit}' "$src" 2>/dev/null || true)
[ -n "$mirror" ] || mirror=$(awk '/^deb / {print $2; exit}' /etc/apt/sources.list 2>/dev/null || true)
[ -n "$mirror" ] || { echo "no Debian mirror found in $src or /etc/apt/sources.list: set one there" >&2; exit 1; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
echo "building base image $name from $mirror (about 80 s)"
debootstrap --variant=minbase --include=python3,python3-pytest,git bookworm "$dir" "$mirror" >"$dir.log" 2>&1 \
  || { echo "debootstrap failed, see $dir.log" >&2; exit 1; }
rm -rf "$dir/var/cache/apt/archives/"*.deb "$dir/var/lib/apt/lists/"*
tar -C "$dir" -c . | docker import -c 'ENV LANG=C.UTF-8' - "$name" >/dev/null
rm -f "$dir.log"
echo "built base image $name"
