#!/usr/bin/env bash
# Memory benchmark: peak RSS of every reading tool at 1x and SCALE x the
# input, the longer stream repeating exactly the same distinct stacks
# (sysprof) or allocation sites (memprof), so a tool whose memory follows
# what it has to show, not how long the profile ran, prints a ratio near 1.
# Reports, never fails because something grows.
#
#   bench/mem/run.sh BUILD_DIR
#
# BUILD_DIR needs -DLJP_BUILD_BENCH=ON (ljpgen, runstat).  Environment:
#   WORK=DIR    inputs and scratch files (default /tmp/ljp-bench-mem)
#   SIZE=16M    size of the 1x inputs (ljpgen --size); SCALE x that for
#   SCALE=10    the long ones
#   TOOLS=...   a subset of the rows: fold svg dump db (default all)
#
# Every command reads standard input from a pipe (runstat -i), so the peak
# RSS (getrusage of the child) is the tool's own memory, never pages of a
# mapped input.  Columns: KiB at 1x, KiB at SCALE x, their ratio.
set -u
BUILD=$(cd "${1:?usage: run.sh BUILD_DIR}" && pwd)
WORK=${WORK:-/tmp/ljp-bench-mem}
SIZE=${SIZE:-16M}
SCALE=${SCALE:-10}
TOOLS=${TOOLS:-fold svg dump db}
mkdir -p "$WORK"
RUNSTAT=$BUILD/bench/fold/runstat
GEN=$BUILD/bench/gen/ljpgen
for t in "$RUNSTAT" "$GEN"; do
  [ -x "$t" ] || { echo "run.sh: $t is missing (configure BUILD_DIR with -DLJP_BUILD_BENCH=ON and build it)" >&2; exit 1; }
done

# The byte count of SIZE times n, for ljpgen --size.
bytes() {
  local s=$1 n=$2 m=1
  case $s in
    *K) m=1024; s=${s%K} ;;
    *M) m=$((1024 * 1024)); s=${s%M} ;;
    *G) m=$((1024 * 1024 * 1024)); s=${s%G} ;;
  esac
  echo $((s * m * n))
}

gen() { # gen NAME ljpgen-options...: once per set of options and ljpgen
  local f=$WORK/$1; shift
  local key="$* $(cksum < "$GEN")"
  [ -s "$f" ] && [ "$(cat "$f.opts" 2>/dev/null)" = "$key" ] && return
  echo "generating $(basename "$f") ..." >&2
  "$GEN" -q -o "$f" "$@" && echo "$key" > "$f.opts"
}
gen sys1.ljp --size="$(bytes "$SIZE" 1)"
gen sysN.ljp --size="$(bytes "$SIZE" "$SCALE")"
gen mem1.ljm --kind=memprof --size="$(bytes "$SIZE" 1)"
gen memN.ljm --kind=memprof --size="$(bytes "$SIZE" "$SCALE")"

# peak FILE CMD...: peak RSS in KiB of CMD reading FILE from a pipe
peak() {
  local f=$1; shift
  "$RUNSTAT" -e "$WORK/err" -i "$f" "$@" 2>&1 >/dev/null | tail -n 1 |
    awk '{ print $4 }'
}

printf '%-34s %10s %10s %7s\n' "command (input from a pipe)" "1x KiB" "${SCALE}x KiB" ratio
row() { # row LABEL KIND CMD... (KIND: sys or mem; "-" stands for the input)
  local label=$1 kind=$2; shift 2
  local a b
  a=$(peak "$WORK/${kind}1.$([ "$kind" = sys ] && echo ljp || echo ljm)" "$@")
  b=$(peak "$WORK/${kind}N.$([ "$kind" = sys ] && echo ljp || echo ljm)" "$@")
  awk -v l="$label" -v a="$a" -v b="$b" 'BEGIN {
    printf "%-34s %10d %10d %7.2f\n", l, a, b, (a > 0 ? b / a : 0) }'
}

for tool in $TOOLS; do
  case $tool in
    fold)
      F=$BUILD/ljpfold/ljpfold
      row "ljpfold sysprof (samples)" sys "$F" -
      for w in bytes events live; do
        row "ljpfold memprof --weight=$w" mem "$F" --weight=$w -
      done ;;
    svg)
      S=$BUILD/ljpsvg/ljpsvg
      row "ljpsvg sysprof (samples)" sys "$S" -
      for w in bytes events live; do
        row "ljpsvg memprof --weight=$w" mem "$S" --weight=$w -
      done ;;
    dump)
      D=$BUILD/ljpdump/ljpdump
      row "ljpdump --summary sysprof" sys "$D" --summary -
      row "ljpdump sysprof report" sys "$D" -
      row "ljpdump --summary memprof" mem "$D" --summary -
      row "ljpdump memprof report" mem "$D" -
      ;;
    db)
      # A fresh database per run: import appends.
      DB=$BUILD/ljpdb/ljpdb
      dbrow() {
        local label=$1 kind=$2 ext=$3 a b
        rm -f "$WORK/mem.db"
        a=$(peak "$WORK/${kind}1.$ext" "$DB" import --no-progress "$WORK/mem.db" -)
        rm -f "$WORK/mem.db"
        b=$(peak "$WORK/${kind}N.$ext" "$DB" import --no-progress "$WORK/mem.db" -)
        rm -f "$WORK/mem.db"
        awk -v l="$label" -v a="$a" -v b="$b" 'BEGIN {
          printf "%-34s %10d %10d %7.2f\n", l, a, b, (a > 0 ? b / a : 0) }'
      }
      dbrow "ljpdb import sysprof" sys ljp
      dbrow "ljpdb import memprof" mem ljm ;;
  esac
done
exit 0
