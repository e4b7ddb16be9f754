#!/bin/sh
# The memory profiler inside a real server: Debian's nginx with
# lua-nginx-module (on OpenResty's luajit2), ljp.memprof started per
# worker in init_worker_by_lua (one file per worker) and stopped in
# exit_worker_by_lua after a full collection, under wrk load on 127.0.0.1.
# The handler (nginx/memprof_handler.lua) makes short-lived garbage on
# every request and keeps one string per request in a module-level table
# at the line marked "LEAK HERE".
#
#   tests/capture/nginx_memprof.sh [SRCDIR [BUILDDIR]]
#
# Unpacking and building as tests/capture/nginx.sh (nginx/lib.sh; the same
# BUILDDIR can serve both, the packages are unpacked once); the profiles
# and logs are kept in BUILDDIR/nginx-memprof-result.
#
# Checked: no failed request, the same workers before and after the load,
# no error in nginx's log; for every worker: its file decodes (ljpdump
# report and --leak-only, ljpfold --weight=live), its counters (logged at
# exit) equal the events in the file, the live-heap fold has the leaking
# line as its heaviest stack, holding at least the strings the worker
# kept, and `ljpdump --leak-only` lists that line first (the leak checks
# skip a worker that no /hot request reached; one at least must be
# checked).  The wrk script (nginx/memprof_wrk.lua) pauses 1 ms between
# a connection's requests, which bounds the profiles' size.
# Knobs: NGINX_DURATION (wrk seconds, 3).  Exit status 0 when every check
# passes.
set -eu
ngx_src=$(cd "${1:-$(dirname "$0")/../..}" && pwd)
ngx_build=${2:-$(mktemp -d /tmp/ljp-nginx-build.XXXXXX)}
mkdir -p "$ngx_build"
ngx_build=$(cd "$ngx_build" && pwd)
duration=${NGINX_DURATION:-3}
here=$ngx_src/tests/capture/nginx
t0=$(date +%s)

# shellcheck source=nginx/lib.sh
. "$here/lib.sh"

failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
field() { echo "$2" | tr ' ' '\n' | sed -n "s/^$1=//p"; }

ngx_unpack
ngx_build_tree
if [ -z "${LJP_BUILD:-}" ]; then
  cmake --build "$ngx_tree" -j2 --target ljp_memprof >/dev/null ||
    ngx_die "build of ljp_memprof failed"
fi
[ -f "$ngx_tree/libljp/capture/lua/ljp/memprof.so" ] ||
  ngx_die "no ljp/memprof.so in $ngx_tree"
ngx_make_run
cp "$ngx_tree/libljp/capture/lua/ljp/memprof.so" "$ngx_run/lua/ljp/"
cp "$here/memprof_handler.lua" "$ngx_run/lua/ljp_memprof_handler.lua"
chmod -R a+rX "$ngx_run/lua"
# ngx_start and ngx_wrk read nginx.conf.in and wrk.lua under
# $ngx_src/tests/capture/nginx: a source folder of their own gives them
# the memprof configuration and a wrk script whose pauses bound the size
# of the profiles.
mp_src=$ngx_run/src
mkdir -p "$mp_src/tests/capture/nginx"
cp "$here/memprof.conf.in" "$mp_src/tests/capture/nginx/nginx.conf.in"
cp "$here/memprof_wrk.lua" "$mp_src/tests/capture/nginx/wrk.lua"
ngx_src=$mp_src
out=$ngx_build/nginx-memprof-result
rm -rf "$out"
mkdir -p "$out"

ngx_start 1 wall
workers=$(ngx_workers)
echo "nginx: master $ngx_master, workers $workers, port $ngx_port, memprof on"
ngx_wrk "$out/wrk.txt" -t2 -c8 "-d${duration}s" || fail "wrk failed"
after=$(ngx_workers)
[ "$after" = "$workers" ] || fail "workers changed under load: $workers -> $after"
for p in $workers; do ngx_alive "$p" || fail "worker $p died"; done
requests=$(ngx_wrk_requests "$out/wrk.txt")
failed=$(ngx_wrk_failed "$out/wrk.txt")
echo "wrk: ${requests:-0} requests, $(ngx_wrk_rps "$out/wrk.txt") req/s," \
  "$failed failed"
[ "${requests:-0}" -gt 0 ] || fail "no request completed"
[ "$failed" = 0 ] || fail "$failed failed requests"

ngx_quit quit || fail "nginx did not quit within 20 s"
cp "$ngx_run/error.log" "$ngx_run/nginx.conf" "$out/"
cp "$ngx_prof"/*.bin "$out/" 2>/dev/null || :
if grep -E '\[(error|crit|alert|emerg)\]' "$ngx_run/error.log"; then
  fail "errors in nginx's log"
fi

leakline=$(grep -n -- '-- LEAK HERE$' "$here/memprof_handler.lua" | cut -d: -f1)
chunk="@$ngx_run/lua/ljp_memprof_handler.lua"
tree=$ngx_tree
leakers=0
for p in $workers; do
  f=$out/mem-$p.bin
  if [ ! -f "$f" ]; then
    fail "no profile from worker $p"
    continue
  fi
  rep=$(sed -n "s/^.*\[notice\] $p#.*ljp\.memprof report: \([^,]*\).*$/\1/p" \
    "$out/error.log" | tail -1)
  [ -n "$rep" ] || { fail "worker $p logged no report"; continue; }
  "$tree/ljpdump/ljpdump" "$f" > "$f.report" 2>"$f.err" ||
    fail "ljpdump: $f: $(cat "$f.err")"
  "$tree/ljpdump/ljpdump" --leak-only "$f" > "$f.leaks" 2>"$f.err" ||
    fail "ljpdump --leak-only: $f: $(cat "$f.err")"
  "$tree/ljpfold/ljpfold" --weight=live "$f" > "$f.live" 2>"$f.err" ||
    fail "ljpfold --weight=live: $f: $(cat "$f.err")"
  "$tree/ljpdump/ljpdump" -s "$f" > "$f.summary" 2>"$f.err" ||
    fail "ljpdump -s: $f: $(cat "$f.err")"
  grep -q '^complete: *yes' "$f.summary" || fail "$f is not complete"
  # Every event of the file, against the counters the worker logged.
  nev=$(awk '$1 == "events:" { print $2 }' "$f.summary")
  [ "$nev" = "$(field events "$rep")" ] ||
    fail "worker $p: report() says $(field events "$rep") events, the file $nev"
  [ "$(field dropped "$rep")" = 0 ] || fail "worker $p: $(field dropped "$rep") dropped"
  kept=$(field kept "$rep")
  # The kernel may hand every connection to the other worker.
  if [ "${kept:-0}" = 0 ]; then
    echo "worker $p: $(field events "$rep") events, no /hot request reached it"
    continue
  fi
  leakers=$((leakers + 1))
  # The heaviest live stack: the leaking line of the handler.
  top=$(awk '$NF + 0 > w { w = $NF + 0; s = $0; sub(/ [0-9]+$/, "", s) }
    END { print w " " s }' "$f.live")
  case $top in
    *"$chunk"*";line $leakline") ;;
    *) fail "worker $p: the heaviest live stack is not line $leakline: $top" ;;
  esac
  live=${top%% *}
  # A kept string ("/hot-N-" and 160 x, ~172 bytes) takes about 200
  # bytes (a 24-byte header, the length rounded up), plus its share of the
  # kept table's array (8 to 16 bytes a slot, the array doubles).
  [ "$live" -ge $((kept * 192)) ] && [ "$live" -le $((kept * 256 + 4096)) ] ||
    fail "worker $p: $live live bytes at the leak for $kept kept strings"
  first=$(sed -n '2p' "$f.leaks")
  case $first in
    "$chunk:$leakline holds "*) ;;
    *) fail "worker $p: --leak-only lists first: $first" ;;
  esac
  echo "worker $p: $(field events "$rep") events, $kept strings kept;" \
    "live at line $leakline: $live bytes; --leak-only: ${first#"$chunk":}"
done
[ $leakers -gt 0 ] || fail "no worker kept a string"
echo "nginx_memprof.sh: $(($(date +%s) - t0)) s, profiles in $out"
if [ $failures = 0 ]; then
  echo "1 passed, 0 failed"
else
  echo "0 passed, 1 failed ($failures checks)"
  exit 1
fi
