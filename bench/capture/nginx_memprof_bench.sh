#!/bin/sh
# What the memory profiler costs an nginx + lua-nginx-module server:
# requests per second under wrk with and without ljp.memprof in every
# worker, in paired runs; prints each pair's ratio (profiled / plain), the
# median, and the events each profiled run recorded.  Not part of CI.
#
#   bench/capture/nginx_memprof_bench.sh [SRCDIR [BUILDDIR]]
#
# The server, handler and configuration are those of
# tests/capture/nginx_memprof.sh (tests/capture/nginx/memprof.conf.in,
# memprof_handler.lua: about 200 small strings and a growing table per
# request, one string kept); the unpacking is nginx/lib.sh's.  Each run
# starts a fresh nginx (2 workers), warms it up for 1 s, then measures;
# the two runs of a pair alternate their order.
# Knobs: BENCH_PAIRS (3), BENCH_SECONDS (5), BENCH_WRK ("-t2 -c8"),
# LJP_BUILD (take the modules from that tree).
set -eu
ngx_src=$(cd "${1:-$(dirname "$0")/../..}" && pwd)
ngx_build=${2:-$(mktemp -d /tmp/ljp-nginx-bench.XXXXXX)}
mkdir -p "$ngx_build"
ngx_build=$(cd "$ngx_build" && pwd)
pairs=${BENCH_PAIRS:-3}
seconds=${BENCH_SECONDS:-5}
wrkopts=${BENCH_WRK:--t2 -c8}
here=$ngx_src/tests/capture/nginx

# shellcheck source=../../tests/capture/nginx/lib.sh
. "$here/lib.sh"

ngx_unpack
ngx_build_tree
if [ -z "${LJP_BUILD:-}" ]; then
  cmake --build "$ngx_tree" -j2 --target ljp_memprof >/dev/null ||
    ngx_die "build of ljp_memprof failed"
fi
ngx_make_run
cp "$ngx_tree/libljp/capture/lua/ljp/memprof.so" "$ngx_run/lua/ljp/"
cp "$here/memprof_handler.lua" "$ngx_run/lua/ljp_memprof_handler.lua"
chmod -R a+rX "$ngx_run/lua"
# The memprof configuration through a source folder of its own, as in
# tests/capture/nginx_memprof.sh.
mkdir -p "$ngx_run/src/tests/capture/nginx"
cp "$here/memprof.conf.in" "$ngx_run/src/tests/capture/nginx/nginx.conf.in"
cp "$here/wrk.lua" "$ngx_run/src/tests/capture/nginx/wrk.lua"
ngx_src=$ngx_run/src

# One measured run, memprof on ($1 = 1) or off (0); prints requests/s and
# the events the workers recorded.
run() {
  rm -f "$ngx_prof"/*.bin
  ngx_start "$1" wall
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
  ev=0
  for w in $workers; do
    n=$(sed -n "s/^.*\[notice\] $w#.*ljp\.memprof report: events=\([0-9]*\).*$/\1/p" \
      "$ngx_run/error.log" | tail -1)
    ev=$((ev + ${n:-0}))
  done
  req=$(ngx_wrk_requests "$ngx_run/wrk.txt")
  warm=$(ngx_wrk_requests "$ngx_run/warm.txt")
  # The workers' CPU time per request (warm-up included): what the
  # profiler adds to each request, whatever else runs on the machine.
  echo "$(ngx_wrk_rps "$ngx_run/wrk.txt") $ev" \
    "$(awk -v c="$cpu" -v n="$((req + warm))" 'BEGIN { printf "%.1f", 1e6 * c / n }')"
}

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

echo "nginx + lua-nginx-module, 2 workers, wrk $wrkopts ${seconds}s, ljp.memprof"
printf '%4s %12s %12s %8s %10s %10s %10s\n' pair "plain req/s" "memprof req/s" \
  ratio events "plain us/r" "memprof us/r"
: > "$ngx_run/ratios"
: > "$ngx_run/cpuratios"
p=1
while [ $p -le "$pairs" ]; do
  if [ $((p % 2)) = 1 ]; then
    plain=$(run 0); prof=$(run 1)
  else
    prof=$(run 1); plain=$(run 0)
  fi
  set -- $plain
  plain_rps=$1 plain_us=$3
  set -- $prof
  ratio=$(awk -v a="$1" -v b="$plain_rps" 'BEGIN { printf "%.3f", a / b }')
  echo "$ratio" >> "$ngx_run/ratios"
  # A run whose workers could not be read (they were gone) has no CPU
  # figure (0.0): left out.
  awk -v a="$3" -v b="$plain_us" 'BEGIN { if (a > 0 && b > 0) printf "%.3f\n", a / b }' \
    >> "$ngx_run/cpuratios"
  printf '%4d %12s %12s %8s %10s %10s %10s\n' "$p" "$plain_rps" "$1" "$ratio" \
    "$2" "$plain_us" "$3"
  p=$((p + 1))
done
echo "req/s: median ratio $(median < "$ngx_run/ratios")" \
  "[$(sort -n "$ngx_run/ratios" | head -1)..$(sort -n "$ngx_run/ratios" | tail -1)];" \
  "worker CPU per request: median ratio $(median < "$ngx_run/cpuratios")" \
  "[$(sort -n "$ngx_run/cpuratios" | head -1)..$(sort -n "$ngx_run/cpuratios" | tail -1)]"
