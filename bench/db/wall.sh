#!/usr/bin/env bash
# Wall and CPU time of `ljpdb import` into a new database, for several
# builds side by side: runs interleaved, so a busy moment of a shared
# machine hits every build alike.  Prints, per build, the best and the
# median wall time and CPU time (user + sys) of RUNS runs.
#
#   bench/db/wall.sh RUNSTAT FILE LJPDB...      (RUNS=21, STDIN=1: the file
#                                               through a pipe as "-")
#
# RUNSTAT is bench/fold's runstat (built with -DLJP_BUILD_BENCH=ON).
set -u
RUNSTAT=${1:?usage: wall.sh RUNSTAT FILE LJPDB...}
FILE=${2:?usage: wall.sh RUNSTAT FILE LJPDB...}
shift 2
RUNS=${RUNS:-21}
WORK=${WORK:-/tmp/ljpdb-wall}
mkdir -p "$WORK"
cat "$FILE" > /dev/null
for ((r = 0; r < RUNS; r++)); do
  i=0
  for bin in "$@"; do
    rm -f "$WORK/w.db"
    if [ "${STDIN:-0}" = 1 ]; then
      line=$("$RUNSTAT" -e "$WORK/err" -i "$FILE" "$bin" import "$WORK/w.db" - 2>&1 >/dev/null | tail -n 1)
    else
      line=$("$RUNSTAT" -e "$WORK/err" "$bin" import "$WORK/w.db" "$FILE" 2>&1 >/dev/null | tail -n 1)
    fi
    echo "$i $line"
    i=$((i + 1))
  done
done > "$WORK/runs"
i=0
printf '%-44s %9s %9s %9s %9s\n' build "wall best" "median" "cpu best" "median"
for bin in "$@"; do
  awk -v i=$i '$1 == i { print $2, $3 + $4 }' "$WORK/runs" > "$WORK/one"
  wb=$(cut -d' ' -f1 "$WORK/one" | sort -g | head -n 1)
  wm=$(cut -d' ' -f1 "$WORK/one" | sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }')
  cb=$(cut -d' ' -f2 "$WORK/one" | sort -g | head -n 1)
  cm=$(cut -d' ' -f2 "$WORK/one" | sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }')
  printf '%-44s %9.4f %9.4f %9.4f %9.4f\n' "$bin" "$wb" "$wm" "$cb" "$cm"
  i=$((i + 1))
done
