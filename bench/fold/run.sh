#!/usr/bin/env bash
# Reader benchmark: times ljpfold and ljpdump on large generated sysprof and
# memprof streams and prints one table.  Rates and ratios only: it never
# fails because something is slow.
#
#   bench/fold/run.sh [BUILD_DIR]
#
# Without BUILD_DIR it configures and builds a Release tree of its own
# (under $WORK).  Environment knobs:
#   WORK=DIR     where inputs and the default build go (default /tmp/ljp-bench)
#   SIZE=38M     size of the base inputs (ljpgen --size)
#   DEPTH=400    Lua stack depth of the sysprof inputs
#   UNIQUE=1000  distinct stacks / allocation sites
#   SCALE=10     the large inputs are SCALE x SIZE with the same unique stacks
#   REPEAT=3     runs per measurement; the run with least CPU time counts
#   QUICK=1      skip the SCALE x inputs
#
# Columns: wall time and CPU time (user+sys) of the best run, input MiB and
# records (samples or memory events) per CPU second, peak RSS (getrusage,
# via bench/fold/runstat or /usr/bin/time -f %M), and the CPU time as a
# multiple of two baselines measured here on the same file, so figures
# compare across machines: `cat FILE >/dev/null` (reading the bytes) and
# `ljpdump --summary` (decoding every record, no names, no tree).  CPU time
# rather than wall time because the machine may be shared: on an idle
# machine the two agree (the tools are single-threaded).
set -u

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
WORK=${WORK:-/tmp/ljp-bench}
SIZE=${SIZE:-38M}
DEPTH=${DEPTH:-400}
UNIQUE=${UNIQUE:-1000}
SCALE=${SCALE:-10}
REPEAT=${REPEAT:-3}
QUICK=${QUICK:-0}
mkdir -p "$WORK"

if [ $# -ge 1 ]; then
  BUILD=$(cd "$1" && pwd)
else
  BUILD=$WORK/build
  echo "building Release in $BUILD ..." >&2
  cmake -S "$root" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release \
        -DLJP_BUILD_TESTS=OFF -DLJP_BUILD_CAPTURE=OFF -DLJP_BUILD_BENCH=ON >/dev/null &&
    cmake --build "$BUILD" -j"$(nproc)" --target ljpfold ljpdump ljpgen runstat \
        >/dev/null || { echo "run.sh: build failed" >&2; exit 1; }
fi
FOLD=$BUILD/ljpfold/ljpfold
DUMP=$BUILD/ljpdump/ljpdump
GEN=$BUILD/bench/gen/ljpgen
for t in "$FOLD" "$DUMP" "$GEN"; do
  [ -x "$t" ] || { echo "run.sh: $t is missing (build it first)" >&2; exit 1; }
done
# runstat (bench/fold/runstat.c) gives microsecond CPU times and peak RSS;
# /usr/bin/time (10 ms steps) is the fallback.
RUNSTAT=$BUILD/bench/fold/runstat
TIME=/usr/bin/time
if [ ! -x "$RUNSTAT" ] && [ ! -x "$TIME" ]; then
  echo "run.sh: neither $RUNSTAT nor /usr/bin/time (apt-get install time)" >&2
  exit 1
fi

# ---- inputs -------------------------------------------------------------

declare -A RECORDS BYTES
# gen NAME ljpgen-options...: writes $WORK/NAME once per set of options.
gen() {
  local name=$1; shift
  local f=$WORK/$name stamp=$WORK/$name.opts key
  key="$* $(cksum < "$GEN")" # regenerate when the options or ljpgen change
  if [ ! -s "$f" ] || [ "$(cat "$stamp" 2>/dev/null)" != "$key" ]; then
    echo "generating $name ($*) ..." >&2
    "$GEN" -o "$f" "$@" 2> "$WORK/$name.facts" ||
      { echo "run.sh: ljpgen failed: $(cat "$WORK/$name.facts")" >&2; exit 1; }
    echo "$key" > "$stamp"
  fi
  RECORDS[$name]=$(sed -n 's/.*records=\([0-9]*\).*/\1/p' "$WORK/$name.facts")
  BYTES[$name]=$(stat -c %s "$f")
}

big=$(( ${SIZE%[KkMmGg]} * SCALE ))${SIZE##*[0-9]}
gen sys.ljp  --size="$SIZE" --depth="$DEPTH" --unique="$UNIQUE"
gen mem.ljm  --kind=memprof --size="$SIZE" --unique="$UNIQUE"
if [ "$QUICK" = 0 ]; then
  gen sysx.ljp --size="$big" --depth="$DEPTH" --unique="$UNIQUE"
  gen memx.ljm --kind=memprof --size="$big" --unique="$UNIQUE"
fi

# ---- measuring ----------------------------------------------------------

# measure CMD...: sets WALL CPU RSS(KiB) of the run with the least CPU
# time out of $REPEAT (the machine may be shared: CPU time is what stays
# comparable), and RC.
measure() {
  local best= i line w u s m
  RC=0 WALL=? CPU=? RSS=?
  for ((i = 0; i < REPEAT; i++)); do
    if [ -x "$RUNSTAT" ]; then
      "$RUNSTAT" -e "$WORK/err.out" ${STDIN:+-i "$STDIN"} "$@" 2> "$WORK/stat.out"
      RC=$?
      line=$(tail -n 1 "$WORK/stat.out")
    else
      local t0=$EPOCHREALTIME
      "$TIME" -f "%U %S %M" -o "$WORK/time.out" "$@" > /dev/null 2> "$WORK/err.out"
      RC=$?
      line="$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.6f", b - a }') $(tail -n 1 "$WORK/time.out")"
    fi
    read -r w u s m <<< "$line"
    local c
    c=$(awk -v u="$u" -v s="$s" 'BEGIN { printf "%.4f", u + s }')
    if [ -z "$best" ] || awk -v a="$c" -v b="$best" 'BEGIN { exit !(a < b) }'; then
      best=$c
      WALL=$(awk -v w="$w" 'BEGIN { printf "%.4f", w }') CPU=$c RSS=$m
    fi
  done
}

declare -A BASE_CAT BASE_SUM RSSOF
printf '%-34s %-9s %8s %7s %8s %12s %9s %7s %7s\n' \
  command input "wall s" "cpu s" "MiB/s" "records/s" "RSS MiB" "x cat" "x summ"
echo "(rates and ratios per CPU second: user+sys of the best of $REPEAT runs)"

# Rows ending in "(pipe)" read the input from a pipe (STDIN=file), so the
# reader cannot map it and peak RSS is the tool's own memory; the others
# map the file, and its pages count in RSS.
pipe_row() { # pipe_row LABEL INPUT CMD... (the command reads "-")
  [ -x "$RUNSTAT" ] || return 0
  STDIN=$WORK/$2
  row "$@"
  STDIN=
}
STDIN=

row() { # row LABEL INPUT CMD...
  local label=$1 in=$2; shift 2
  measure "$@"
  local f=$WORK/$in mib rate rss xc xs note=
  [ "$RC" = 0 ] || note=" (exit $RC: $(head -c 80 "$WORK/err.out"))"
  mib=$(awk -v b="${BYTES[$in]}" -v w="$CPU" 'BEGIN { printf "%.0f", b / 1048576 / (w > 0 ? w : 1e-4) }')
  rate=$(awk -v n="${RECORDS[$in]}" -v w="$CPU" 'BEGIN { printf "%.3g", n / (w > 0 ? w : 1e-4) }')
  rss=$(awk -v k="$RSS" 'BEGIN { if (k == "?") print "?"; else printf "%.1f", k / 1024 }')
  xc=$(awk -v a="$CPU" -v b="${BASE_CAT[$in]:-0}" 'BEGIN { if (b > 0) printf "%.1f", a / b; else print "-" }')
  xs=$(awk -v a="$CPU" -v b="${BASE_SUM[$in]:-0}" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }')
  printf '%-34s %-9s %8s %7s %8s %12s %9s %7s %7s%s\n' \
    "$label" "$in" "$WALL" "$CPU" "$mib" "$rate" "$rss" "$xc" "$xs" "$note"
  RSSOF["$label|$in"]=$RSS
  LAST=$CPU LASTWALL=$WALL
}

baselines() { # baselines INPUT
  local in=$1 f=$WORK/$1
  cat "$f" > /dev/null # into the page cache
  row "cat (read baseline)" "$in" cat "$f"
  BASE_CAT[$in]=$LAST
  row "ljpdump --summary (decode base)" "$in" "$DUMP" --summary "$f"
  BASE_SUM[$in]=$LAST
}

sysrows() { # sysrows INPUT
  local f=$WORK/$1
  baselines "$1"
  row "ljpfold" "$1" "$FOLD" "$f"
  FOLD_CPU[$1]=$LAST FOLD_WALL[$1]=$LASTWALL
  row "ljpfold --format=tarantool" "$1" "$FOLD" --format=tarantool "$f"
  row "ljpfold --stack=lua" "$1" "$FOLD" --stack=lua "$f"
  row "ljpdump (sysprof report)" "$1" "$DUMP" "$f"
  pipe_row "ljpdump --summary (pipe)" "$1" "$DUMP" --summary -
  pipe_row "ljpfold (pipe)" "$1" "$FOLD" -
  pipe_row "ljpfold --format=tarantool (pipe)" "$1" "$FOLD" --format=tarantool -
}

memrows() { # memrows INPUT
  local f=$WORK/$1
  baselines "$1"
  row "ljpdump (memprof report)" "$1" "$DUMP" "$f"
  row "ljpfold (memprof, bytes)" "$1" "$FOLD" "$f"
  row "ljpfold --weight=live" "$1" "$FOLD" --weight=live "$f"
  pipe_row "ljpdump (memprof report, pipe)" "$1" "$DUMP" -
  pipe_row "ljpfold --weight=live (pipe)" "$1" "$FOLD" --weight=live -
}

declare -A FOLD_WALL FOLD_CPU
sysrows sys.ljp
[ "$QUICK" = 0 ] && sysrows sysx.ljp
memrows mem.ljm
[ "$QUICK" = 0 ] && memrows memx.ljm

# ---- summary --------------------------------------------------------------

echo
echo "inputs: sys.ljp ${BYTES[sys.ljp]} bytes, ${RECORDS[sys.ljp]} samples," \
     "Lua depth ~$DEPTH, $UNIQUE distinct stacks (C mode);" \
     "mem.ljm ${BYTES[mem.ljm]} bytes, ${RECORDS[mem.ljm]} events"
awk -v w="${FOLD_WALL[sys.ljp]}" -v c="${FOLD_CPU[sys.ljp]}" -v s="$SIZE" -v d="$DEPTH" 'BEGIN {
  printf "target: ljpfold of a %s C-mode capture with %s-deep Lua stacks in well under 0.1 s: %s (%.3f s CPU, %.3f s wall)\n",
         s, d, c < 0.1 ? "met" : "missed", c, w }'
if [ "$QUICK" = 0 ]; then
  echo "RSS flatness (${SCALE}x input, same unique stacks/sites): peak RSS large / small"
  echo "(mapped inputs count in RSS: the (pipe) rows show the tools' own memory)"
  for key in "${!RSSOF[@]}"; do
    label=${key%|*} in=${key#*|}
    case $in in
      sys.ljp) bigin=sysx.ljp ;;
      mem.ljm) bigin=memx.ljm ;;
      *) continue ;;
    esac
    a=${RSSOF[$key]} b=${RSSOF["$label|$bigin"]:-?}
    awk -v l="$label" -v i="$in" -v a="$a" -v b="$b" 'BEGIN {
      if (a == "?" || b == "?") { printf "  %-34s %-8s ?\n", l, i; exit }
      printf "  %-34s %-8s %7.1f -> %7.1f MiB  x%.2f%s\n", l, i, a / 1024, b / 1024, b / a,
             b / a > 1.5 ? "  NOT FLAT" : "" }'
  done | sort
fi
exit 0
