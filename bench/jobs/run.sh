#!/usr/bin/env bash
# Folding many files at once (ljpfold --jobs): a fleet's day is many
# profiles, one per process and period.  Wall and CPU time of -j1 against
# -jN on the same files, as ratios measured in the same run; the outputs
# are compared byte for byte.  Ratios only: it never fails for slowness.
#
#   bench/jobs/run.sh BUILD_DIR [FILES [SIZE]]
#
# FILES (default 16) sysprof streams of SIZE (default 4M) each, from
# bench/gen/ljpgen with different seeds (the issue's shape: deep
# recursion, host stacks, trace churn).  REPEAT runs (default 5), best
# wall time of each; JOBS (default "2 0") the -j values compared with -j1.
set -u
BUILD=$(cd "${1:?usage: run.sh BUILD_DIR [FILES [SIZE]]}" && pwd)
NFILES=${2:-16}
SIZE=${3:-4M}
WORK=${WORK:-/tmp/ljp-bench-jobs}
REPEAT=${REPEAT:-5}
JOBS=${JOBS:-"2 0"}
RUNSTAT=$BUILD/bench/fold/runstat
GEN=$BUILD/bench/gen/ljpgen
FOLD=$BUILD/ljpfold/ljpfold
for t in "$RUNSTAT" "$GEN" "$FOLD"; do
  [ -x "$t" ] || { echo "run.sh: $t is missing (configure BUILD_DIR with -DLJP_BUILD_BENCH=ON and build it)" >&2; exit 1; }
done
mkdir -p "$WORK"
files=()
for ((i = 1; i <= NFILES; i++)); do
  f=$WORK/p$i.ljp
  opts="--size=$SIZE --depth=404 --host-depth=13 --unique=605 --recursive=100 --trace-pct=41 --trace-churn=200 --proto-churn=127 --seed=$i"
  if ! [ -s "$f" ] || [ "$(cat "$f.opts" 2>/dev/null)" != "$opts $(cksum < "$GEN")" ]; then
    # shellcheck disable=SC2086
    "$GEN" -q -o "$f" $opts && echo "$opts $(cksum < "$GEN")" > "$f.opts"
  fi
  files+=("$f")
  cat "$f" > /dev/null
done
bytes=$(cat "${files[@]}" | wc -c)

# best ARGS...: "wall cpu rss" of the run with the least wall time
best() {
  local i
  for ((i = 0; i < REPEAT; i++)); do
    "$RUNSTAT" -e "$WORK/err" "$FOLD" "$@" "${files[@]}" 2>&1 >/dev/null | tail -n 1
  done | awk '{ if (!n++ || $1 < w) { w = $1; c = $2 + $3; r = $4 } }
              END { printf "%.4f %.4f %d\n", w, c, r }'
}

"$FOLD" -j1 "${files[@]}" > "$WORK/j1.folded"
read -r w1 c1 r1 <<< "$(best -j1)"
printf '%d files, %.1f MB; %s processors online\n' "$NFILES" "$(awk -v b="$bytes" 'BEGIN { print b / 1e6 }')" "$(getconf _NPROCESSORS_ONLN)"
printf '%-8s %9s %9s %9s %8s %10s\n' jobs "wall s" "cpu s" "MB/s" "RSS MiB" "x -j1 wall"
row() { awk -v l="$1" -v w="$2" -v c="$3" -v r="$4" -v b="$bytes" -v w1="$w1" 'BEGIN {
  printf "%-8s %9.4f %9.4f %9.0f %8.1f %10.2f\n", l, w, c, b / 1e6 / w, r / 1024, w1 / w }'; }
row "-j1" "$w1" "$c1" "$r1"
for j in $JOBS; do
  "$FOLD" -j"$j" "${files[@]}" > "$WORK/j.folded"
  cmp -s "$WORK/j1.folded" "$WORK/j.folded" || echo "  -j$j: OUTPUT DIFFERS from -j1"
  read -r w c r <<< "$(best -j"$j")"
  row "-j$j" "$w" "$c" "$r"
done
exit 0
