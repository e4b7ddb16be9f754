#!/usr/bin/env bash
# Read-path benchmark: every figure of "read at memory speed" as ratios
# against baselines measured in the same run, on the same files.  Rates and
# ratios only: it never fails because something is slow.
#
#   bench/read/run.sh BUILD_DIR [FLAMEGRAPH_PL]
#
# Inputs (bench/gen/ljpgen, deterministic):
#   issue.ljp  ~38 MB, the shape of a real capture: one function recursing
#              1..404 frames deep, host stacks of ~13 frames, 41 % TRACE
#              samples, 605 distinct stacks, trace and prototype churn
#   fold.ljp   bench/fold's sysprof shape: 1000 distinct 400-deep stacks
#   mem.ljm    bench/fold's memprof shape (decode-only and ljpfold rows)
# Baselines: `cat FILE >/dev/null` and `ljpdump --summary` (decode only);
# flamegraph.pl (when its path is given) for ljpsvg, on 20 k collapsed
# lines made by bench/svg/gen_folded.  CPU time (user + sys), best of
# REPEAT runs; peak RSS of that run.  INPUTS (default "issue.ljp fold.ljp
# mem.ljm") picks the inputs, e.g. INPUTS=mem.ljm for the memprof rows.
set -u
BUILD=$(cd "${1:?usage: run.sh BUILD_DIR [FLAMEGRAPH_PL]}" && pwd)
FG=${2:-}
WORK=${WORK:-/tmp/ljp-bench-read}
REPEAT=${REPEAT:-5}
mkdir -p "$WORK"
RUNSTAT=$BUILD/bench/fold/runstat
GEN=$BUILD/bench/gen/ljpgen
for t in "$RUNSTAT" "$GEN" "$BUILD/ljpdump/ljpdump" "$BUILD/ljpfold/ljpfold"; do
  [ -x "$t" ] || { echo "run.sh: $t is missing (configure BUILD_DIR with -DLJP_BUILD_BENCH=ON and build it)" >&2; exit 1; }
done

gen() { # gen NAME ljpgen-options...
  local f=$WORK/$1; shift
  [ -s "$f" ] && [ "$(cat "$f.opts" 2>/dev/null)" = "$* $(cksum < "$GEN")" ] && return
  "$GEN" -q -o "$f" "$@" && echo "$* $(cksum < "$GEN")" > "$f.opts"
}
INPUTS=${INPUTS:-issue.ljp fold.ljp mem.ljm}
case " $INPUTS " in *" issue.ljp "*)
gen issue.ljp --size=38M --depth=404 --host-depth=13 --unique=605 \
    --recursive=100 --trace-pct=41 --trace-churn=200 --proto-churn=127 ;; esac
case " $INPUTS " in *" fold.ljp "*)
gen fold.ljp --size=38M --depth=400 --unique=1000 ;; esac
case " $INPUTS " in *" mem.ljm "*)
gen mem.ljm --kind=memprof --size=38M --unique=1000 ;; esac

# best CMD...: prints "cpu_seconds peak_rss_kib wall_seconds": the CPU
# time and peak RSS of the run with the least CPU time, and the least wall
# time of the REPEAT runs (for tools that use the second core, where CPU
# time does not show the gain)
best() {
  local i
  for ((i = 0; i < REPEAT; i++)); do
    "$RUNSTAT" -e "$WORK/err" ${STDIN:+-i "$STDIN"} "$@" 2>&1 >/dev/null | tail -n 1
  done | awk '{ c = $2 + $3; if (!n++ || c < m) { m = c; r = $4 }
                if (n == 1 || $1 < w) w = $1 }
              END { printf "%.4f %d %.4f\n", m, r, w }'
}

samples() { "$BUILD/ljpdump/ljpdump" --summary "$1" | sed -n 's/^samples: *//p'; }

printf '%-28s %-10s %8s %9s %8s %8s %8s\n' command input "cpu s" "MB/s" \
  "RSS MiB" "x cat" "x decode"
for in in $INPUTS; do
  f=$WORK/$in
  bytes=$(stat -c %s "$f")
  cat "$f" > /dev/null
  read -r cat_s cat_k _ <<< "$(best cat "$f")"
  read -r dec_s dec_k _ <<< "$(best "$BUILD/ljpdump/ljpdump" --summary "$f")"
  row() { # row LABEL CPU RSS
    awk -v l="$1" -v i="$in" -v c="$2" -v k="$3" -v b="$bytes" -v a="$cat_s" -v d="$dec_s" 'BEGIN {
      printf "%-28s %-10s %8.4f %9.0f %8.1f %8.1f %8.2f\n", l, i, c, b / 1e6 / (c > 0 ? c : 1e-4),
             k / 1024, c / (a > 0 ? a : 1e-4), c / (d > 0 ? d : 1e-4) }'
  }
  row "cat" "$cat_s" "$cat_k"
  row "ljpdump --summary (decode)" "$dec_s" "$dec_k"
  case $in in
    *.ljm)
      read -r s k _ <<< "$(best "$BUILD/ljpfold/ljpfold" "$f")"; row "ljpfold (bytes)" "$s" "$k"
      awk -v d="$dec_s" -v b="$bytes" 'BEGIN { printf "  decode-only %.0f MB/s (target >= 1000)\n", b / 1e6 / (d > 0 ? d : 1e-4) }'
      continue ;;
  esac
  read -r s k _ <<< "$(best "$BUILD/ljpdump/ljpdump" "$f")"; row "ljpdump (sysprof report)" "$s" "$k"
  read -r s k foldw <<< "$(best "$BUILD/ljpfold/ljpfold" "$f")"; row "ljpfold" "$s" "$k"
  fold_s=$s
  if [ -x "$BUILD/ljpsvg/ljpsvg" ]; then
    read -r s k _ <<< "$(best "$BUILD/ljpsvg/ljpsvg" "$f")"; row "ljpsvg" "$s" "$k"
  fi
  if [ -x "$BUILD/ljpdb/ljpdb" ]; then
    db=$WORK/bench.db
    i=0 m=
    for ((i = 0; i < REPEAT; i++)); do
      rm -f "$db"
      "$RUNSTAT" -e "$WORK/err" "$BUILD/ljpdb/ljpdb" import "$db" "$f" 2>&1 >/dev/null | tail -n 1
    done | awk '{ c = $2 + $3; if (!n++ || c < m) { m = c; r = $4 }
                  if (!w || $1 < wm) { wm = $1; w = 1 } }
                END { printf "%.4f %d %.4f\n", m, r, wm }' > "$WORK/db.best"
    read -r s k dbw < "$WORK/db.best"
    row "ljpdb import" "$s" "$k"
    awk -v n="$(samples "$f")" -v c="$s" -v w="$dbw" -v fw="$foldw" 'BEGIN {
      printf "  ljpdb import: %.2f M samples/s (CPU); wall %.4f s vs ljpfold %.4f s = %.2fx (target <= 2)\n",
             n / 1e6 / (c > 0 ? c : 1e-4), w, fw, w / (fw > 0 ? fw : 1e-4) }'
  fi
  awk -v f="$fold_s" -v d="$dec_s" -v b="$bytes" 'BEGIN {
    printf "  decode-only %.0f MB/s (target >= 1000); ljpfold %.2fx decode-only (target <= 1.5)\n",
           b / 1e6 / (d > 0 ? d : 1e-4), f / (d > 0 ? d : 1e-4) }'
done

if [ -n "$FG" ] && [ -x "$BUILD/bench/svg/gen_folded" ] && [ -x "$BUILD/ljpsvg/ljpsvg" ]; then
  folded=$WORK/lines.folded
  [ -s "$folded" ] || "$BUILD/bench/svg/gen_folded" 20000 40 > "$folded"
  read -r s k _ <<< "$(best "$BUILD/ljpsvg/ljpsvg" "$folded")"
  # flamegraph.pl takes ~0.6 s a run: best of FG_REPEAT (default 3)
  read -r fs fk _ <<< "$(REPEAT=${FG_REPEAT:-3} best perl "$FG" "$folded")"
  # What each program holds before it reads anything (shared libraries,
  # the interpreter): the rest is what the graph costs.
  read -r _ k0 _ <<< "$(best "$BUILD/ljpsvg/ljpsvg" --version)"
  read -r _ fk0 _ <<< "$(best perl -e 1)"
  awk -v s="$s" -v k="$k" -v fs="$fs" -v fk="$fk" -v k0="$k0" -v fk0="$fk0" 'BEGIN {
    printf "ljpsvg vs flamegraph.pl, 20 k collapsed lines: %.3f s vs %.3f s = %.1fx faster (target >= 50); RSS %.1f vs %.1f MiB = 1/%.1f (target >= 10)\n",
           s, fs, fs / (s > 0 ? s : 1e-4), k / 1024, fk / 1024, fk / (k > 0 ? k : 1)
    printf "  at start (ljpsvg --version, perl -e 1): %.1f vs %.1f MiB; above it: %.1f vs %.1f MiB = 1/%.1f\n",
           k0 / 1024, fk0 / 1024, (k - k0) / 1024, (fk - fk0) / 1024, (fk - fk0) / (k - k0 > 0 ? k - k0 : 1) }'
fi
exit 0
