#!/usr/bin/env bash
# Runs the test suite under valgrind memcheck, then the four tools on every
# bundled capture: no invalid read or write, no use of uninitialised
# memory, no leak (definite or indirect), in a build without sanitizers.
#
#   bash tests/valgrind.sh [CTEST-ARGS...]    e.g.  -R fuzz_replay
#
# Every test whose command is one of our executables runs under valgrind
# (CMAKE_CROSSCOMPILING_EMULATOR); script tests run their tools natively,
# so the tools get their own pass over the captures below.  Slow: run it
# before a release, or on a part of the suite.  Builds in $BUILD
# (default build-valgrind).
set -euo pipefail
cd "$(dirname "$0")/.."
command -v valgrind >/dev/null || { echo "valgrind is not installed" >&2; exit 2; }
BUILD=${BUILD:-build-valgrind}
vg=(valgrind --quiet --error-exitcode=99 --leak-check=full
    --errors-for-leak-kinds=definite,indirect --show-leak-kinds=definite,indirect
    --track-origins=yes "--suppressions=$PWD/tests/valgrind.supp")
emu=$(IFS=';'; echo "${vg[*]}")
cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DLJP_SANITIZE=OFF \
  "-DCMAKE_CROSSCOMPILING_EMULATOR=$emu" >/dev/null
cmake --build "$BUILD" -j"$(nproc)"
# check's fork per test would double the reports; run tests in-process.
(cd "$BUILD" && CK_FORK=no CK_DEFAULT_TIMEOUT=600 ctest --output-on-failure \
   -j"$(nproc)" --timeout 1800 -LE no-sanitize "$@")

# The tools on every capture (one input each, all their output modes).
fail=0
run() { # command...; valgrind exits 99 on any error or leak
  local rc=0
  "${vg[@]}" "$@" >/dev/null 2>"$BUILD/vg.err" || rc=$?
  if [ "$rc" = 99 ]; then
    echo "valgrind: $*"
    cat "$BUILD/vg.err"
    fail=1
  fi
}
db=$BUILD/valgrind.db
rm -f "$db"
for f in testdata/captures/*.bin testdata/captures/old/*.bin; do
  run "$BUILD/ljpfold/ljpfold" "$f"
  run "$BUILD/ljpfold/ljpfold" --format=tarantool "$f"
  run "$BUILD/ljpdump/ljpdump" "$f"
  run "$BUILD/ljpdump/ljpdump" --events "$f"
  run "$BUILD/ljpsvg/ljpsvg" "$f"
  run "$BUILD/ljpdb/ljpdb" import "$db" "$f"
done
run "$BUILD/ljpdb/ljpdb" top "$db"
run "$BUILD/ljpdb/ljpdb" leaks "$db"
run "$BUILD/ljpsvg/ljpsvg" testdata/captures/sp_c_fib_jitoff_1ms.fold.txt
if [ "$fail" = 0 ]; then echo "valgrind: tools clean on every capture"; fi
exit "$fail"
