#!/bin/sh
# Builds the capture core and its tests against OpenResty's luajit2 and runs
# them.  Debian's libluajit2-5.1-dev conflicts with libluajit-5.1-dev, so the
# packages are fetched with `apt-get download` and unpacked with `dpkg -x`
# into a scratch folder; pkg-config and the loader are pointed there.
#
#   tests/capture/openresty.sh [SRCDIR [BUILDDIR]]
# Needs: network access to the Debian archive (apt-get download), cmake,
# check, a C compiler.  Exit status: 0 when every capture test passes.
set -eu
src=$(cd "${1:-$(dirname "$0")/../..}" && pwd)
build=${2:-$(mktemp -d /tmp/ljp-openresty.XXXXXX)}
root="$build/luajit2-root"
mkdir -p "$root/debs"
( cd "$root/debs" &&
  apt-get download libluajit2-5.1-2 libluajit2-5.1-dev libluajit2-5.1-common luajit2 )
for deb in "$root"/debs/*.deb; do dpkg -x "$deb" "$root"; done
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || echo x86_64-linux-gnu)
libdir="$root/usr/lib/$multiarch"
grep -q OPENRESTY_LUAJIT "$root/usr/include/luajit-2.1/luajit.h" ||
  { echo "openresty.sh: the unpacked luajit.h is not OpenResty's" >&2; exit 1; }
# Relocate the .pc file into the scratch root.
mkdir -p "$root/pkgconfig"
sed "s|^prefix=.*|prefix=$root/usr|" "$libdir/pkgconfig/luajit.pc" > "$root/pkgconfig/luajit.pc"
PKG_CONFIG_PATH="$root/pkgconfig" cmake -S "$src" -B "$build/build" \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build/build" -j2 --target test_capture test_truth test_vm \
  test_names test_unwind test_memprof capcheck ljp_sysprof ljp_malloc_shim
export LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
# The test binary must run on luajit2, not on the system's libluajit.
ldd "$build/build/tests/capture/test_capture" | grep -q "$libdir/libluajit-5.1.so" ||
  { echo "openresty.sh: test_capture does not load the unpacked luajit2" >&2; exit 1; }
"$build/build/tests/capture/test_capture"
# The VM reader, attribution by construction, names and the unwinder on
# luajit2.
"$build/build/tests/capture/test_vm"
"$build/build/tests/capture/test_truth"
"$build/build/tests/capture/test_names"
"$build/build/tests/capture/test_unwind"
"$build/build/tests/capture/test_memprof"
# Again with the shim that aborts when a SIGPROF handler allocates.
LD_PRELOAD="$build/build/tests/capture/libljp_malloc_shim.so" \
  "$build/build/tests/capture/test_capture"
# The Lua module under OpenResty's standalone luajit.
sh "$src/tests/capture/test_lua_module.sh" "$root/usr/bin/luajit" \
  "$build/build/tests/capture/capcheck" \
  "$build/build/libljp/capture/lua/?.so" "$build/build/libljp/capture/lua/?.lua" \
  "$build/build/libljp/capture/ljp-sysprof-run" "$src/tests/capture"
