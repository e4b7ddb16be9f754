#!/bin/sh
# Times ljpsvg on large generated folded inputs and, when a flamegraph.pl
# path is given, flamegraph.pl on the same input; reports the speed ratio
# and peak memory.  Ratios, not assertions.
#   bench/svg/run.sh BUILD_DIR [FLAMEGRAPH_PL] [LINES] [DEPTH]
set -eu
BUILD=$1
FG=${2:-}
LINES=${3:-200000}
DEPTH=${4:-40}
LJPSVG=$BUILD/ljpsvg/ljpsvg
GEN=$BUILD/bench/svg/gen_folded
WORK=$BUILD/bench/svg/work
for t in "$LJPSVG" "$GEN"; do
  [ -x "$t" ] || { echo "run.sh: $t is missing (configure BUILD_DIR with -DLJP_BUILD_BENCH=ON and build it)" >&2; exit 1; }
done
mkdir -p "$WORK"
"$GEN" "$LINES" "$DEPTH" > "$WORK/big.folded"
echo "input: $LINES stacks, depth <= $DEPTH, $(wc -c < "$WORK/big.folded") bytes"

# "elapsed cpu peak_kib" of a command (cpu = user + sys: the machine may be
# shared, and CPU time is what the ratio should compare), stdout to out.svg
measure() {
  /usr/bin/time -f "%e %U %S %M" -o "$WORK/time" "$@" > "$WORK/out.svg" 2>/dev/null || true
  awk '{ printf "%s %.2f %s\n", $1, $2 + $3, $4 }' "$WORK/time"
}

set -- $(measure "$LJPSVG" "$WORK/big.folded")
ljp_cpu=$2 ljp_kb=$3
echo "ljpsvg:        ${1}s elapsed, ${2}s CPU, ${3} KiB peak, $(wc -c < "$WORK/out.svg") bytes of SVG"
set -- $(measure "$LJPSVG" --maxframes 0 --minwidth 0 "$WORK/big.folded")
echo "ljpsvg (all frames, no pruning): ${1}s elapsed, ${2}s CPU, ${3} KiB peak, $(wc -c < "$WORK/out.svg") bytes"

if [ -n "$FG" ]; then
  set -- $(measure perl "$FG" --hash "$WORK/big.folded")
  echo "flamegraph.pl: ${1}s elapsed, ${2}s CPU, ${3} KiB peak, $(wc -c < "$WORK/out.svg") bytes of SVG"
  awk -v a="$2" -v b="$ljp_cpu" -v m="$3" -v n="$ljp_kb" 'BEGIN {
    if (b <= 0) b = 0.01;
    printf "ratio: %.1fx less CPU time, %.1fx less memory than flamegraph.pl\n", a / b, m / n }'
fi
