#!/usr/bin/env bash
# Installs the Debian packages ljp needs that are missing, when run as root
# (or through sudo when available).  Usage: tests/deps.sh [build|test]
#   build: what building and running the tools needs
#   test:  that plus the test tools (check, clang, chromium for the
#          flame-graph browser test)
set -euo pipefail
what=${1:-build}
pkgs=(cmake make gcc pkg-config libxml2-dev libsqlite3-dev luajit libluajit-5.1-dev libunwind-dev zlib1g-dev)
if [ "$what" = test ]; then
  pkgs+=(check clang libclang-rt-dev sqlite3 libxml2-utils chromium valgrind dpkg-dev golang-go python3-jsonschema)
  # npm: Debian's package only where no npm is installed already (a Node.js
  # from elsewhere brings its own, and Debian's npm would conflict with it).
  command -v npm >/dev/null 2>&1 || pkgs+=(npm)
fi
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "deps: installing ${missing[*]}" >&2
if [ "$(id -u)" -eq 0 ]; then
  sudo=()
elif command -v sudo >/dev/null 2>&1; then
  sudo=(sudo)
else
  echo "deps: missing packages (${missing[*]}) and not root: install them first" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
