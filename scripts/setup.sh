#!/usr/bin/env bash
# Install what foresight needs on a Debian 12 + Node 20 machine (as root), start Docker, build the
# offline base image. Idempotent: a second run only checks.
set -euo pipefail
cd "$(dirname "$0")/.."

need=()
command -v git >/dev/null || need+=(git)
command -v dockerd >/dev/null || need+=(docker.io)
command -v debootstrap >/dev/null || need+=(debootstrap)
# The registry the push tests start on 127.0.0.1 (test/core/env/push.test.ts).
[ -x /usr/bin/docker-registry ] || need+=(docker-registry)
# redis-server: the work-queue tests start their own on 127.0.0.1 (test/helpers/redis.ts); no system service is used.
command -v redis-server >/dev/null || need+=(redis-server)
# The headless browser the report test opens the HTML report in (test/pipeline/report.test.ts).
[ -x /usr/bin/chromium ] || need+=(chromium)
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" != 0 ]; then echo "setup: missing ${need[*]}: run 'sudo apt-get install -y ${need[*]}'" >&2; exit 1; fi
  echo "setup: installing ${need[*]}"
  apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
fi

if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "setup: npm ci"
  npm ci --no-audit --no-fund --loglevel=error
fi

sock=/var/run/docker.sock
if ! docker version >/dev/null 2>&1; then
  if [ "$(id -u)" != 0 ]; then echo "setup: Docker is not running: start it (sudo dockerd &)" >&2; exit 1; fi
  echo "setup: starting dockerd (log: /var/log/dockerd.log)"
  nohup dockerd >/var/log/dockerd.log 2>&1 &
  for _ in $(seq 1 60); do docker version >/dev/null 2>&1 && break; sleep 1; done
  docker version >/dev/null 2>&1 || { echo "setup: dockerd did not come up, see /var/log/dockerd.log" >&2; exit 1; }
fi
[ -S "$sock" ] || { echo "setup: Docker answers but not on $sock: set DOCKER_HOST=unix://<socket>" >&2; }

bash core/env/image/build-base-image.sh "${FORESIGHT_IMAGE:-foresight-base:bookworm}"
