#!/usr/bin/env bash
# Builds ljp and runs every test: the suite with gcc (ctest), the capture
# core's tests against OpenResty's luajit2 (unpacked from its Debian
# packages), then the suite built with clang under AddressSanitizer +
# UndefinedBehaviorSanitizer.  SANITIZE=0 / OPENRESTY=0 skip those parts.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tests/deps.sh test
BUILD=${BUILD:-build}
jobs=$(nproc)
cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DLJP_WERROR=ON >/dev/null
cmake --build "$BUILD" -j"$jobs"
(cd "$BUILD" && ctest --output-on-failure -j"$jobs")
if [ "${OPENRESTY:-1}" != 0 ]; then
  case "$BUILD" in /*) ordir=$BUILD-openresty ;; *) ordir=$(pwd)/$BUILD-openresty ;; esac
  sh tests/capture/openresty.sh . "$ordir"
fi
if [ "${SANITIZE:-1}" != 0 ]; then
  CC=clang cmake -S . -B "$BUILD-asan" -DCMAKE_BUILD_TYPE=Debug -DLJP_SANITIZE=ON \
    -DLJP_WERROR=ON >/dev/null
  cmake --build "$BUILD-asan" -j"$jobs"
  (cd "$BUILD-asan" && ASAN_OPTIONS=detect_leaks=1 ctest --output-on-failure -j"$jobs" -LE no-sanitize)
fi
