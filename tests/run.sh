#!/usr/bin/env bash
# Builds ljp and runs every test: the suite with gcc (ctest), a build that
# pretends the check library is absent (tests/build_nocheck.sh), the capture
# core's tests against OpenResty's luajit2 (unpacked from its Debian
# packages), nginx + lua-nginx-module under wrk, the capture tests on a
# non-GC64 LuaJIT built from Debian's source, then the suite built with
# clang under AddressSanitizer + UndefinedBehaviorSanitizer.
# The Debian package (cpack) is built, installed, used and removed
# (tests/package.sh, as root).
# OPENRESTY=0 / NGINX=0 / NOGC64=0 / SANITIZE=0 / PACKAGE=0 skip those parts.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tests/deps.sh test
BUILD=${BUILD:-build}
jobs=$(nproc)
cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DLJP_WERROR=ON >/dev/null
cmake --build "$BUILD" -j"$jobs"
(cd "$BUILD" && ctest --output-on-failure -j"$jobs")
# A machine without check still builds the library and the tools.
bash tests/build_nocheck.sh "$BUILD-nocheck"
# The Debian package, installed and removed again.
if [ "${PACKAGE:-1}" != 0 ]; then
  bash tests/package.sh "$BUILD-package"
fi
if [ "${OPENRESTY:-1}" != 0 ]; then
  case "$BUILD" in /*) ordir=$BUILD-openresty ;; *) ordir=$(pwd)/$BUILD-openresty ;; esac
  sh tests/capture/openresty.sh . "$ordir"
fi
# A real server: nginx + lua-nginx-module (on luajit2) under wrk, the
# profiler started per worker; the thresholds of the real-server test.
if [ "${NGINX:-1}" != 0 ]; then
  case "$BUILD" in /*) ngdir=$BUILD-nginx ;; *) ngdir=$(pwd)/$BUILD-nginx ;; esac
  NGINX_STRICT=1 sh tests/capture/nginx.sh . "$ngdir"
  # The memory profiler per worker: a handler's leak found by its line.
  sh tests/capture/nginx_memprof.sh . "$ngdir"
fi
# LuaJIT's other object layout: a non-GC64 build from Debian's source.
if [ "${NOGC64:-1}" != 0 ]; then
  case "$BUILD" in /*) nodir=$BUILD-nogc64 ;; *) nodir=$(pwd)/$BUILD-nogc64 ;; esac
  sh tests/capture/nogc64.sh . "$nodir"
fi
if [ "${SANITIZE:-1}" != 0 ]; then
  CC=clang cmake -S . -B "$BUILD-asan" -DCMAKE_BUILD_TYPE=Debug -DLJP_SANITIZE=ON \
    -DLJP_WERROR=ON >/dev/null
  cmake --build "$BUILD-asan" -j"$jobs"
  (cd "$BUILD-asan" && ASAN_OPTIONS=detect_leaks=1 ctest --output-on-failure -j"$jobs" -LE no-sanitize)
fi
