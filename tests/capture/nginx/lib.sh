# Shell functions shared by tests/capture/nginx.sh and
# bench/capture/nginx_bench.sh: fetch Debian's nginx, lua-nginx-module and
# OpenResty's luajit2 without installing them, build ljp.sysprof against
# that luajit2, run an nginx whose every path lives in one run folder.
#
# Debian's libnginx-mod-http-lua needs libluajit2-5.1-2, which conflicts
# with libluajit-5.1-2 (stock LuaJIT, which the rest of the project builds
# against), so every package is fetched with `apt-get download` and
# unpacked with `dpkg -x`; nothing is installed and no root is needed
# (apt-get download works as any user).
#
# Callers set: ngx_src (source tree), ngx_build (scratch folder), before
# sourcing it.
# POSIX sh; the functions share state only through the ngx_* variables
# (_ngx_* are their scratch), NGINX and WRK.

ngx_debs="nginx libnginx-mod-http-lua libnginx-mod-http-ndk lua-resty-core
  lua-resty-lrucache wrk libluajit2-5.1-2 libluajit2-5.1-dev
  libluajit2-5.1-common"

ngx_die() { echo "nginx: $*" >&2; exit 1; }

# Sourcing this file arms the exit handling every caller needs: however
# the script ends, its nginx is stopped (ngx_kill) and its run folder
# removed; a signal ends the script with status 130.
ngx_master='' ngx_run=''
ngx_cleanup() {
  ngx_kill
  [ -z "$ngx_run" ] || rm -rf "$ngx_run"
}
trap ngx_cleanup EXIT
trap 'exit 130' HUP INT PIPE TERM

# Unpacks the packages into $ngx_build/nginx-root (once) and sets
# ngx_root, ngx_libdir (luajit2), NGINX, WRK, ngx_modules, ngx_resty.
ngx_unpack() {
  ngx_root=$ngx_build/nginx-root
  if [ ! -f "$ngx_root/.unpacked" ]; then
    mkdir -p "$ngx_root/debs"
    # apt warns when root downloads into a folder its sandbox user cannot
    # write; the messages are shown only when the download fails.
    # shellcheck disable=SC2086  # the list is split on purpose
    ( cd "$ngx_root/debs" && apt-get download $ngx_debs ) \
      >"$ngx_root/apt.log" 2>&1 ||
      { cat "$ngx_root/apt.log" >&2; ngx_die "apt-get download failed"; }
    for _ngx_deb in "$ngx_root"/debs/*.deb; do dpkg -x "$_ngx_deb" "$ngx_root"; done
    touch "$ngx_root/.unpacked"
  fi
  _ngx_arch=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null ||
              echo x86_64-linux-gnu)
  ngx_libdir=$ngx_root/usr/lib/$_ngx_arch
  NGINX=$ngx_root/usr/sbin/nginx
  WRK=$ngx_root/usr/bin/wrk
  ngx_modules=$ngx_root/usr/lib/nginx/modules
  ngx_resty=$ngx_root/usr/share/lua/5.1
  grep -q OPENRESTY_LUAJIT "$ngx_root/usr/include/luajit-2.1/luajit.h" ||
    ngx_die "the unpacked luajit.h is not OpenResty's"
  [ -x "$NGINX" ] && [ -x "$WRK" ] && [ -f "$ngx_modules/ngx_http_lua_module.so" ] ||
    ngx_die "incomplete unpack in $ngx_root"
}

# Builds ljp.sysprof and the tools (ljpfold, ljpdump, ljpsvg) against the
# unpacked luajit2 headers (so the stream says "OpenResty" and fast
# functions get luajit2's names), or takes them from $LJP_BUILD when that is
# set.  Sets ngx_tree.
ngx_build_tree() {
  if [ -n "${LJP_BUILD:-}" ]; then
    ngx_tree=$LJP_BUILD
  else
    ngx_tree=$ngx_build/build
    mkdir -p "$ngx_root/pkgconfig"
    sed "s|^prefix=.*|prefix=$ngx_root/usr|" "$ngx_libdir/pkgconfig/luajit.pc" \
      > "$ngx_root/pkgconfig/luajit.pc"
    PKG_CONFIG_PATH="$ngx_root/pkgconfig" cmake -S "$ngx_src" -B "$ngx_tree" \
      -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null || ngx_die "cmake failed"
    cmake --build "$ngx_tree" -j2 --target ljp_sysprof ljpfold ljpdump ljpsvg \
      >/dev/null || ngx_die "build failed"
  fi
  for _ngx_f in libljp/capture/lua/ljp/sysprof.so ljpfold/ljpfold \
                ljpdump/ljpdump ljpsvg/ljpsvg; do
    [ -f "$ngx_tree/$_ngx_f" ] || ngx_die "no $_ngx_f in $ngx_tree"
  done
}

# Makes a run folder readable by nginx's worker user: workers run as
# `nobody` when the master is root, and they load the Lua files and write
# the profiles after dropping privileges.  It lives under /tmp because the
# build folder's parents may be closed to that user.  Sets ngx_run,
# ngx_prof.
ngx_make_run() {
  ngx_run=$(mktemp -d /tmp/ljp-nginx.XXXXXX)
  chmod 755 "$ngx_run"
  ngx_prof=$ngx_run/prof
  mkdir -p "$ngx_run/lua/ljp" "$ngx_run/tmp" "$ngx_prof"
  cp "$ngx_tree/libljp/capture/lua/ljp/sysprof.so" "$ngx_run/lua/ljp/"
  cp "$ngx_src/tests/capture/nginx/handler.lua" "$ngx_run/lua/ljp_nginx_handler.lua"
  chmod -R a+rX "$ngx_run/lua"
  ngx_user=
  if [ "$(id -u)" = 0 ]; then
    ngx_user="user nobody $(id -gn nobody);"
    chown nobody "$ngx_prof"
  fi
}

# True while process $1 runs (a zombie that waits to be reaped does not).
ngx_alive() {
  [ -r "/proc/$1/stat" ] && ! grep -q "^[0-9]* (.*) Z" "/proc/$1/stat" 2>/dev/null
}

# Pids of the master's children (the workers), sorted, on one line.
ngx_workers() {
  awk -v p="$ngx_master" '$4 == p { print $1 }' /proc/[0-9]*/stat 2>/dev/null |
    sort -n | tr '\n' ' ' | sed 's/ $//'
}

ngx_count() { echo $#; }

# Starts nginx with profiler interval $1 ms (0: no profiler) and timer $2 on
# a free port of 127.0.0.1; returns when both workers run (and, with the
# profiler, have opened their files).  Sets ngx_master, ngx_port.
ngx_start() {
  _ngx_interval=$1 _ngx_timer=$2
  for _ngx_try in 1 2 3 4 5 6 7 8; do
    ngx_port=$(( 20000 + $(od -An -N2 -tu2 /dev/urandom) % 40000 ))
    sed -e "s|@USER@|$ngx_user|" -e "s|@RUN@|$ngx_run|g" \
        -e "s|@MODULES@|$ngx_modules|g" -e "s|@RESTY@|$ngx_resty|g" \
        -e "s|@PROF@|$ngx_prof|g" -e "s|@INTERVAL@|$_ngx_interval|g" \
        -e "s|@TIMER@|$_ngx_timer|g" -e "s|@PORT@|$ngx_port|g" \
        -e "s|@JIT@|${NGINX_JIT:-on}|g" \
        "$ngx_src/tests/capture/nginx/nginx.conf.in" > "$ngx_run/nginx.conf"
    : > "$ngx_run/error.log"
    LD_LIBRARY_PATH="$ngx_libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
      "$NGINX" -p "$ngx_run" -c "$ngx_run/nginx.conf" -e "$ngx_run/error.log" \
      >>"$ngx_run/stdout.log" 2>&1 &
    ngx_master=$!
    _ngx_i=0
    while [ $_ngx_i -lt 100 ]; do            # 10 s
      if ! ngx_alive "$ngx_master"; then
        break
      fi
      # shellcheck disable=SC2046
      if [ "$(ngx_count $(ngx_workers))" -ge 2 ]; then
        if [ "$_ngx_interval" = 0 ] ||
           [ "$(ls "$ngx_prof" | wc -l)" -ge "$(ngx_count $(ngx_workers))" ]; then
          return 0
        fi
      fi
      # A profiler that cannot start (say, a folder the worker user cannot
      # write) would only time out here; say why at once.
      if grep 'ljp.sysprof start failed' "$ngx_run/error.log" >&2; then
        ngx_die "the profiler did not start"
      fi
      sleep 0.1
      _ngx_i=$((_ngx_i + 1))
    done
    if ngx_alive "$ngx_master"; then
      cat "$ngx_run/error.log" >&2
      ngx_die "workers did not start within 10 s"
    fi
    wait "$ngx_master" 2>/dev/null || :
    ngx_master=
    grep -q 'Address already in use' "$ngx_run/error.log" "$ngx_run/stdout.log" ||
      { cat "$ngx_run/stdout.log" "$ngx_run/error.log" >&2; ngx_die "nginx did not start"; }
  done
  ngx_die "no free port found"
}

# `nginx -s quit` (graceful), or `nginx -s $1` (stop: fast), waiting at
# most 20 s for the master to exit; workers run exit_worker_by_lua either
# way.  Returns 1 when it had to be killed.
ngx_quit() {
  [ -n "$ngx_master" ] || return 0
  ngx_signal "${1:-quit}"
  _ngx_i=0
  while ngx_alive "$ngx_master" && [ $_ngx_i -lt 200 ]; do
    sleep 0.1
    _ngx_i=$((_ngx_i + 1))
  done
  if ngx_alive "$ngx_master"; then
    ngx_kill
    return 1
  fi
  wait "$ngx_master" 2>/dev/null || :
  ngx_master=
  return 0
}

# `nginx -s $1` for the running server (quit, stop, reload).
ngx_signal() {
  LD_LIBRARY_PATH="$ngx_libdir" "$NGINX" -p "$ngx_run" -c "$ngx_run/nginx.conf" \
    -e "$ngx_run/error.log" -s "$1" >>"$ngx_run/stdout.log" 2>&1
}

# Stops the master and its workers (exit trap and timeouts): SIGTERM
# first, so that the master reaps its workers (orphans would be left to an
# init that may not reap them), then SIGKILL by pid after 3 s.
ngx_kill() {
  [ -n "${ngx_master:-}" ] || return 0
  _ngx_w=$(ngx_workers)
  kill -TERM "$ngx_master" 2>/dev/null || :
  _ngx_i=0
  while ngx_alive "$ngx_master" && [ $_ngx_i -lt 30 ]; do
    sleep 0.1
    _ngx_i=$((_ngx_i + 1))
  done
  kill -KILL "$ngx_master" 2>/dev/null || :
  # shellcheck disable=SC2086
  [ -z "$_ngx_w" ] || kill -KILL $_ngx_w 2>/dev/null || :
  wait "$ngx_master" 2>/dev/null || :
  ngx_master=
}

# Runs wrk with the given options against the server, bounded in time;
# the output goes to file $1.
ngx_wrk() {
  _ngx_out=$1
  shift
  timeout 120 "$WRK" "$@" -s "$ngx_src/tests/capture/nginx/wrk.lua" \
    "http://127.0.0.1:$ngx_port/" > "$_ngx_out" 2>&1
}

# Fields of a wrk output file.
ngx_wrk_requests() { awk '/ requests in / { print $1 }' "$1"; }
ngx_wrk_rps() { awk '/^Requests\/sec:/ { print $2 }' "$1"; }
ngx_wrk_failed() {
  awk '/Non-2xx or 3xx responses:/ { n += $NF }
       /Socket errors:/ { gsub(/,/, ""); n += $4 + $6 + $8 + $10 }
       END { print n + 0 }' "$1"
}

# The "ljp.sysprof report:" fields that worker $1 logged at exit
# (nginx.conf.in), as "samples=N dropped=N handler_ns=N ...", or nothing.
ngx_report() {
  sed -n "s/^.*\[notice\] $1#.*ljp\.sysprof report: \([^,]*\).*$/\1/p" \
    "$ngx_run/error.log" | tail -1
}

# CPU seconds (user + system) that process $1 has used so far.
ngx_cpu() {
  awk -v hz="$(getconf CLK_TCK)" '{
    s = $0; sub(/^.*\) /, "", s); split(s, f, " ")
    printf "%.3f\n", (f[12] + f[13]) / hz }' "/proc/$1/stat"
}
