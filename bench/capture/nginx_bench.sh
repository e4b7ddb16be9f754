#!/bin/sh
# What the capture core costs an nginx + lua-nginx-module server: requests
# per second under wrk with no profiler and with ljp.sysprof (mode C) at
# 10 ms and at 1 ms, in paired runs; prints each pair's ratio
# (profiled / plain) and the median per setting, with the profiler's own
# CPU time (report().handler_ns + safepoint_ns, logged by each worker at
# exit) as a share of the workers' CPU time, which does not depend on how
# busy the machine is.  Not part of CI.
#
#   bench/capture/nginx_bench.sh [SRCDIR [BUILDDIR]]
#
# The server, the handler and the unpacking are those of
# tests/capture/nginx.sh (tests/capture/nginx/lib.sh).  Each run starts a
# fresh nginx (2 workers), warms it up for 1 s (the JIT compiles the
# handler), then measures.  The two runs of a pair alternate their order
# (plain first, then profiled first) so that a drift of the machine does
# not always favour one side.
# Knobs: BENCH_PAIRS (3), BENCH_SECONDS (5), BENCH_TIMER (wall: a true
# 1 kHz at 1 ms; itimer and thread are capped at CONFIG_HZ), BENCH_WRK
# (wrk options, "-t2 -c8"), LJP_BUILD (take the module from that tree).
set -eu
ngx_src=$(cd "${1:-$(dirname "$0")/../..}" && pwd)
ngx_build=${2:-$(mktemp -d /tmp/ljp-nginx-bench.XXXXXX)}
mkdir -p "$ngx_build"
ngx_build=$(cd "$ngx_build" && pwd)
pairs=${BENCH_PAIRS:-3}
seconds=${BENCH_SECONDS:-5}
timer=${BENCH_TIMER:-wall}
wrkopts=${BENCH_WRK:--t2 -c8}

# shellcheck source=../../tests/capture/nginx/lib.sh
. "$ngx_src/tests/capture/nginx/lib.sh"

ngx_unpack
ngx_build_tree
ngx_make_run

# One measured run at interval $1 (0: no profiler); prints requests/s, the
# samples written, and the profiler's in-process cost (signal handler plus
# safe points) as a share of the workers' CPU time.
run() {
  rm -f "$ngx_prof"/*.bin
  ngx_start "$1" "$timer"
  # shellcheck disable=SC2086  # the options are split on purpose
  ngx_wrk "$ngx_run/warm.txt" $wrkopts -d1s || ngx_die "wrk failed"
  # shellcheck disable=SC2086
  ngx_wrk "$ngx_run/wrk.txt" $wrkopts "-d${seconds}s" || ngx_die "wrk failed"
  [ "$(ngx_wrk_failed "$ngx_run/wrk.txt")" = 0 ] || ngx_die "failed requests"
  workers=$(ngx_workers)
  cpu=0
  for w in $workers; do
    cpu=$(awk -v a="$cpu" -v b="$(ngx_cpu "$w")" 'BEGIN { print a + b }')
  done
  ngx_quit || ngx_die "nginx did not quit"
  n=0 ns=0
  for w in $workers; do
    rep=$(ngx_report "$w")
    [ -n "$rep" ] || continue
    set -- $rep
    for kv in "$@"; do
      case $kv in
        samples=*) n=$((n + ${kv#samples=})) ;;
        handler_ns=*|safepoint_ns=*) ns=$((ns + ${kv#*=})) ;;
      esac
    done
  done
  echo "$(ngx_wrk_rps "$ngx_run/wrk.txt") $n" \
    "$(awk -v ns="$ns" -v c="$cpu" 'BEGIN { printf "%.2f", c ? 100 * ns / (c * 1e9) : 0 }')"
}

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

echo "nginx + lua-nginx-module, 2 workers, wrk $wrkopts ${seconds}s," \
  "ljp.sysprof mode C, $timer timer"
printf '%-8s %4s %12s %12s %8s %9s %10s\n' setting pair "plain req/s" \
  "prof req/s" ratio samples "prof CPU %"
for ms in 10 1; do
  : > "$ngx_run/ratios"
  : > "$ngx_run/shares"
  p=1
  while [ $p -le "$pairs" ]; do
    if [ $((p % 2)) = 1 ]; then
      plain=$(run 0); prof=$(run "$ms")
    else
      prof=$(run "$ms"); plain=$(run 0)
    fi
    set -- $plain
    plain_rps=$1
    set -- $prof
    ratio=$(awk -v a="$1" -v b="$plain_rps" 'BEGIN { printf "%.3f", a / b }')
    echo "$ratio" >> "$ngx_run/ratios"
    echo "$3" >> "$ngx_run/shares"
    printf '%-8s %4d %12s %12s %8s %9s %10s\n' "${ms} ms" "$p" "$plain_rps" \
      "$1" "$ratio" "$2" "$3"
    p=$((p + 1))
  done
  echo "${ms} ms: median ratio $(median < "$ngx_run/ratios")" \
    "[$(sort -n "$ngx_run/ratios" | head -1)..$(sort -n "$ngx_run/ratios" | tail -1)]," \
    "median profiler CPU $(median < "$ngx_run/shares") %"
done
