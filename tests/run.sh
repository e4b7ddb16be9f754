#!/usr/bin/env bash
# Builds ljp and runs every test: the suite with gcc (ctest), then the
# same suite built with clang under AddressSanitizer + UndefinedBehavior-
# Sanitizer.  SANITIZE=0 skips the sanitizer build.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tests/deps.sh test
BUILD=${BUILD:-build}
jobs=$(nproc)
cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DLJP_WERROR=ON >/dev/null
cmake --build "$BUILD" -j"$jobs"
(cd "$BUILD" && ctest --output-on-failure -j"$jobs")
if [ "${SANITIZE:-1}" != 0 ]; then
  CC=clang cmake -S . -B "$BUILD-asan" -DCMAKE_BUILD_TYPE=Debug -DLJP_SANITIZE=ON \
    -DLJP_WERROR=ON >/dev/null
  cmake --build "$BUILD-asan" -j"$jobs"
  (cd "$BUILD-asan" && ASAN_OPTIONS=detect_leaks=1 ctest --output-on-failure -j"$jobs" -LE no-sanitize)
fi
