#!/bin/sh
# The capture core inside a real server: Debian's nginx with
# lua-nginx-module (on OpenResty's luajit2), the ljp.sysprof module started
# per worker in init_worker_by_lua and stopped in exit_worker_by_lua, wrk
# load on 127.0.0.1.  Then a reload (new workers, new files), a worker
# killed as in a crash (the master starts a new one) and a graceful quit;
# the profile of every worker that exited normally must be complete.
#
#   tests/capture/nginx.sh [SRCDIR [BUILDDIR]]
#
# The packages are fetched with `apt-get download` and unpacked into
# BUILDDIR/nginx-root (see nginx/lib.sh); ljp.sysprof, ljpdump and ljpfold
# are built against the unpacked luajit2 in BUILDDIR/build, or taken from
# the build tree $LJP_BUILD.  Profiles and logs are kept in
# BUILDDIR/nginx-result.  Needs: network access to the Debian archive on
# the first run (apt lists updated), cmake, a C compiler; nginx and wrk
# come from the archive.
#
# Always checked: no failed request, the same workers before and after the
# load, every profile complete and decoded by ljpdump and ljpfold, at least
# one sample per worker, no error in nginx's log.  Printed, and enforced
# with NGINX_STRICT=1: >= 95 % of the non-trace samples with Lua frames
# have a host stack from main through ngx_http_lua_*; the hot function
# (hot_score in nginx/handler.lua) is every worker's most frequent top Lua
# function.
# Knobs: NGINX_DURATION (wrk seconds, 5), NGINX_INTERVAL (ms, 1),
# NGINX_TIMER (wall), NGINX_SHUTDOWN (quit or stop), NGINX_JIT (on, or off:
# the workers run jit.off()).  Exit status 0 when
# every enforced check passes.
set -eu
ngx_src=$(cd "${1:-$(dirname "$0")/../..}" && pwd)
ngx_build=${2:-$(mktemp -d /tmp/ljp-nginx-build.XXXXXX)}
mkdir -p "$ngx_build"
ngx_build=$(cd "$ngx_build" && pwd)
duration=${NGINX_DURATION:-5}
interval=${NGINX_INTERVAL:-1}
timer=${NGINX_TIMER:-wall}
strict=${NGINX_STRICT:-0}
shutdown=${NGINX_SHUTDOWN:-quit}
here=$ngx_src/tests/capture/nginx
t0=$(date +%s)

# shellcheck source=nginx/lib.sh
. "$here/lib.sh"

failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
# The value of KEY ($1) in a line of KEY=VALUE fields ($2).
field() { echo "$2" | tr ' ' '\n' | sed -n "s/^$1=//p"; }
pct() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b ? 100 * a / b : 0 }'; }

ngx_unpack
ngx_build_tree
ngx_make_run
out=$ngx_build/nginx-result
rm -rf "$out"
mkdir -p "$out"

# 1. Load.
ngx_start "$interval" "$timer"
gen1=$(ngx_workers)
echo "nginx: master $ngx_master, workers $gen1, port $ngx_port," \
  "profiler ${interval} ms $timer"
ngx_wrk "$out/wrk.txt" -t2 -c8 "-d${duration}s" || fail "wrk failed"
after=$(ngx_workers)
[ "$after" = "$gen1" ] || fail "workers changed under load: $gen1 -> $after"
requests=$(ngx_wrk_requests "$out/wrk.txt")
failed=$(ngx_wrk_failed "$out/wrk.txt")
echo "wrk: ${requests:-0} requests, $(ngx_wrk_rps "$out/wrk.txt") req/s," \
  "$failed failed"
[ "${requests:-0}" -gt 0 ] || fail "no request completed"
[ "$failed" = 0 ] || fail "$failed failed requests"
for p in $gen1; do echo "$p $(ngx_cpu "$p")"; done > "$out/cpu.txt"

# Waits (10 s at most) until two workers run, none of them in $1, and the
# profile folder holds $2 files; sets `now` to the workers.
await_workers() {
  i=0
  while [ $i -lt 100 ]; do
    now=$(ngx_workers)
    # shellcheck disable=SC2046,SC2012
    if [ "$(ngx_count $now)" = 2 ] && [ "$(ls "$ngx_prof" | wc -l)" -ge "$2" ]; then
      stale=0
      for p in $1; do case " $now " in *" $p "*) stale=1 ;; esac; done
      [ $stale = 1 ] || return 0
    fi
    sleep 0.1
    i=$((i + 1))
  done
  return 1
}

# 2. Reload: the old workers stop their profilers in exit_worker_by_lua,
# the new ones start their own files.
ngx_signal reload || fail "nginx -s reload"
await_workers "$gen1" 4 || fail "reload: workers $gen1 -> $now after 10 s"
gen2=$now
ngx_wrk "$out/wrk-reload.txt" -t1 -c2 -d1s || fail "wrk after reload failed"
failed=$(ngx_wrk_failed "$out/wrk-reload.txt")
[ "$failed" = 0 ] || fail "$failed failed requests after reload"

# 3. A worker killed by SIGKILL (as in a crash) keeps only what was flushed
# of its file; the master starts a new worker, which starts its own file.
victim=${gen2%% *}
kill -KILL "$victim"
await_workers "$victim" 5 || fail "no new worker after a crash: $now"
respawned=
for p in $now; do case " $gen2 " in *" $p "*) ;; *) respawned=$p ;; esac; done
survivor=${gen2#* }
ngx_wrk "$out/wrk-respawn.txt" -t1 -c2 -d1s || fail "wrk after the crash failed"
failed=$(ngx_wrk_failed "$out/wrk-respawn.txt")
[ "$failed" = 0 ] || fail "$failed failed requests after the crash"

# 4. Shutdown: graceful (quit, default) or fast (NGINX_SHUTDOWN=stop); the
# workers run exit_worker_by_lua either way.
ngx_quit "$shutdown" || fail "nginx did not $shutdown within 20 s"
cp "$ngx_run/error.log" "$ngx_run/nginx.conf" "$out/"
cp "$ngx_prof"/*.bin "$out/" 2>/dev/null || :
if grep -E '\[(error|crit|alert|emerg)\]' "$ngx_run/error.log" |
   grep -v "worker process $victim exited on signal 9"; then
  fail "errors in nginx's log"
fi

# The killed worker's file: present, read without a crash, not complete.
f=$out/prof-$victim.bin
if [ -f "$f" ]; then
  "$ngx_tree/ljpdump/ljpdump" -s "$f" > "$f.summary" 2>&1 || :
  if grep -q '^complete: *no' "$f.summary"; then
    echo "worker $victim (killed): profile not complete, as expected;" \
      "$(awk '/^samples:/ { print $2 }' "$f.summary") samples were flushed"
  else
    fail "the killed worker's profile: $(cat "$f.summary")"
  fi
else
  fail "no profile from the killed worker $victim"
fi

# 5. Profiles: one per worker that exited normally, complete, decoded.
tree=$ngx_tree
hotline=$(grep -n '^local function hot_score' "$here/handler.lua" | cut -d: -f1)
hot="@$ngx_run/lua/ljp_nginx_handler.lua:$hotline"
tot_lua=0 tot_ok=0 tot_s=0 tot_hot=0
for p in $gen1 $survivor $respawned; do
  f=$out/prof-$p.bin
  if [ ! -f "$f" ]; then
    fail "no profile from worker $p"
    continue
  fi
  "$tree/ljpdump/ljpdump" -s "$f" > "$f.summary" 2>&1 ||
    fail "ljpdump: $f: $(tail -1 "$f.summary")"
  grep -q '^complete: *yes' "$f.summary" || fail "$f is not complete"
  "$tree/ljpfold/ljpfold" "$f" > "$f.folded" 2>"$f.fold-err" ||
    fail "ljpfold: $f: $(cat "$f.fold-err")"
  "$tree/ljpdump/ljpdump" -e "$f" > "$f.events" ||
    fail "ljpdump -e: $f"
  r=$(awk -v hot="$hot" -f "$here/analyze.awk" "$f.events")
  echo "$r" > "$f.counts"
  c_samples=$(field samples "$r") c_trace=$(field trace "$r")
  c_gc=$(field gc "$r") c_nontrace=$(field nontrace "$r")
  c_lua=$(field lua "$r") c_hostok=$(field hostok "$r")
  c_badpc=$(field badpc "$r") c_badjit=$(field badjit "$r")
  c_badother=$(field badother "$r")
  c_hot=$(field hot "$r") c_hottop=$(field hottop "$r")
  c_toplua=$(field toplua "$r") c_topfn=$(field topfn "$r")
  c_topfn_samples=$(field topfn_samples "$r")
  [ "$c_samples" -ge 1 ] || fail "worker $p: no sample"
  # The stream against the counters the worker logged after stop().
  rep=$(ngx_report "$p")
  r_samples=$(field samples "$rep")
  [ "$r_samples" = "$c_samples" ] ||
    fail "worker $p: report() says ${r_samples:-nothing}, the file $c_samples samples"
  case " $gen1 " in *" $p "*) ;; *)
    echo "worker $p (after reload or crash): $c_samples samples, complete"
    continue ;;
  esac
  echo "worker $p: $c_samples samples ($c_trace trace, $c_gc GC)"
  echo "  non-trace samples with Lua frames: $c_lua of $c_nontrace;" \
    "host stack main -> ngx_http_lua_* -> Lua: $c_hostok ($(pct "$c_hostok" "$c_lua") %)"
  echo "  the others: $c_badpc the interrupted PC alone, $c_badjit ending in" \
    "JIT code, $c_badother other"
  echo "  hot_score on the Lua stack: $c_hot ($(pct "$c_hot" "$c_samples") % of all samples)"
  echo "  hot_score as top Lua function: $c_hottop of $c_toplua ($(pct "$c_hottop" "$c_toplua") %);" \
    "most frequent top: $c_topfn ($c_topfn_samples)"
  echo "$rep" "cpu=$(awk -v p="$p" '$1 == p { print $2 }' "$out/cpu.txt")" |
    tr ' ' '\n' | awk -F= '{ v[$1] = $2 } END {
      c = v["handler_ns"] + v["safepoint_ns"]
      printf "  profiler: %d samples at %.0f Hz, %d dropped, %.1f us per sample," \
        " %.2f %% of the worker'"'"'s %.2f CPU s under load\n", v["samples"],
        v["rate"], v["dropped"], v["samples"] ? c / v["samples"] / 1e3 : 0,
        v["cpu"] ? 100 * c / (v["cpu"] * 1e9) : 0, v["cpu"] }'
  tot_lua=$((tot_lua + c_lua)) tot_ok=$((tot_ok + c_hostok))
  tot_s=$((tot_s + c_samples)) tot_hot=$((tot_hot + c_hot))
  if [ "$strict" = 1 ]; then
    awk -v a="$c_hostok" -v b="$c_lua" 'BEGIN { exit !(b > 0 && a >= 0.95 * b) }' ||
      fail "worker $p: host stacks through ngx_http_lua_* $(pct "$c_hostok" "$c_lua") % < 95 %"
    [ "$c_topfn" = "$hot" ] ||
      fail "worker $p: the top Lua function is $c_topfn, not hot_score"
  fi
done
# All load-run workers merged into one flame graph.
# shellcheck disable=SC2046
(cd "$out" && "$ngx_tree/ljpsvg/ljpsvg" --title "nginx + ljp.sysprof" \
  $(for p in $gen1; do echo "prof-$p.bin"; done) > nginx.svg) ||
  fail "ljpsvg failed"
grep -q 'ljp_nginx_handler.lua' "$out/nginx.svg" ||
  fail "nginx.svg has no frame of the handler"
echo "total: host stacks main -> ngx_http_lua_* -> Lua $(pct $tot_ok $tot_lua) %," \
  "hot_score on the stack $(pct $tot_hot $tot_s) %" \
  "(NGINX_STRICT=$strict)"
echo "nginx.sh: $(($(date +%s) - t0)) s, profiles in $out"
if [ $failures = 0 ]; then
  echo "1 passed, 0 failed"
else
  echo "0 passed, 1 failed ($failures checks)"
  exit 1
fi
