#!/usr/bin/env bash
# A machine without the check library: configure and build must still pass
# (library, tools, capture core), and configure must say the tests are
# skipped.  Pretends check is absent by naming a pkg-config module that does
# not exist, so it runs where check is installed too.
#   tests/build_nocheck.sh [BUILD_DIR]   (default: a scratch folder)
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
if [ $# -ge 1 ]; then
  build=$1
else
  build=$(mktemp -d)
  trap 'rm -rf "$build"' EXIT
fi
fail() { echo "FAIL: $*"; exit 1; }
log=$(cmake -S "$src" -B "$build" -DLJP_WERROR=ON \
        -DLJP_CHECK_MODULE=ljp-pretend-check-is-absent 2>&1) ||
  fail "configure without check failed: $log"
echo "$log" | grep -q "tests skipped: the check library" ||
  fail "configure does not say that the tests are skipped: $log"
[ ! -e "$build/tests" ] || fail "the tests were configured without check"
cmake --build "$build" -j"$(nproc)" >/dev/null || fail "build without check failed"
for tool in ljpdump/ljpdump ljpfold/ljpfold ljpsvg/ljpsvg ljpdb/ljpdb; do
  [ -x "$build/$tool" ] || fail "$tool was not built"
done
"$build/ljpdump/ljpdump" --summary "$src/testdata/captures/sp_c_fib_jitoff_1ms.bin" |
  grep -q sysprof || fail "the built ljpdump does not work"
echo "1 passed, 0 failed"
