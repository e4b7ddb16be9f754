#!/usr/bin/env bash
# The main job on bundled data: builds ljp, then renders a flame graph and a
# dump of bundled captures into out/ (override with OUT=dir).
set -euo pipefail
cd "$(dirname "$0")/.."
bash tests/deps.sh build
BUILD=${BUILD:-build}
OUT=${OUT:-out}
cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DLJP_BUILD_TESTS=OFF >/dev/null
cmake --build "$BUILD" -j"$(nproc)" >/dev/null
mkdir -p "$OUT"
sp=testdata/captures/sp_c_sandwich_jitoff_1ms.bin
mp=testdata/captures/mp_leak_global_jitoff.bin
"$BUILD/ljpsvg/ljpsvg" --title "sp_c_sandwich_jitoff_1ms" "$sp" > "$OUT/flamegraph.svg"
"$BUILD/ljpdump/ljpdump" "$sp" > "$OUT/sysprof-report.txt"
"$BUILD/ljpfold/ljpfold" "$sp" > "$OUT/sysprof.folded"
"$BUILD/ljpdump/ljpdump" "$mp" > "$OUT/memprof-report.txt"
"$BUILD/ljpsvg/ljpsvg" --weight=live --title "live heap: mp_leak_global_jitoff" "$mp" > "$OUT/memprof-live.svg"
echo "wrote $OUT/flamegraph.svg $OUT/memprof-live.svg $OUT/sysprof-report.txt $OUT/sysprof.folded $OUT/memprof-report.txt"
head -n 30 "$OUT/sysprof-report.txt"
