#!/bin/sh
# Builds LuaJIT 2.1 without GC64 (the other layout of its objects and
# frames) from the source Debian builds, then the capture core and its
# tests against it, and runs the VM reader's, the attribution, the C API
# and the memory profiler's tests.
#
#   tests/capture/nogc64.sh [SRCDIR [BUILDDIR]]
# Needs: the Debian archive (apt-get source; a deb-src entry is added when
# missing), make, a C compiler, cmake, check.  Exit status 0 when they pass.
set -eu
src=$(cd "${1:-$(dirname "$0")/../..}" && pwd)
build=${2:-$(mktemp -d /tmp/ljp-nogc64.XXXXXX)}
mkdir -p "$build"
build=$(cd "$build" && pwd)
prefix="$build/luajit-nogc64"
if [ ! -f "$prefix/lib/pkgconfig/luajit.pc" ]; then
  if ! ls "$build"/luajit-*/src/lj_obj.h >/dev/null 2>&1; then
    if ! grep -rqs '^Types:.*deb-src' /etc/apt/sources.list.d/ &&
       ! grep -qs '^deb-src' /etc/apt/sources.list; then
      [ "$(id -u)" -eq 0 ] || { echo "nogc64.sh: need a deb-src entry (run as root)" >&2; exit 1; }
      sed -i 's/^Types: deb$/Types: deb deb-src/' /etc/apt/sources.list.d/debian.sources
      apt-get update -qq
    fi
    ( cd "$build" && apt-get source -qq luajit >/dev/null 2>&1 ) ||
      { echo "nogc64.sh: apt-get source luajit failed" >&2; exit 1; }
  fi
  lj=$(ls -d "$build"/luajit-*/ | head -1)
  make -C "$lj" -j2 -s XCFLAGS=-DLUAJIT_DISABLE_GC64 PREFIX="$prefix" >/dev/null
  make -C "$lj" -s install PREFIX="$prefix" >/dev/null
fi
# The build must really be non-GC64.
LD_LIBRARY_PATH="$prefix/lib" "$prefix/bin/luajit" -e \
  'assert(not require("ffi").abi("gc64"), "still a GC64 build")' 2>/dev/null ||
  LD_LIBRARY_PATH="$prefix/lib" "$(ls "$prefix"/bin/luajit-* | head -1)" -e \
  'assert(not require("ffi").abi("gc64"), "still a GC64 build")'
PKG_CONFIG_PATH="$prefix/lib/pkgconfig" cmake -S "$src" -B "$build/build" \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DLJP_WERROR=ON >/dev/null
cmake --build "$build/build" -j2 --target test_vm test_truth test_capture \
  test_memprof
export LD_LIBRARY_PATH="$prefix/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
ldd "$build/build/tests/capture/test_vm" | grep -q "$prefix/lib/libluajit" ||
  { echo "nogc64.sh: test_vm does not load the non-GC64 LuaJIT" >&2; exit 1; }
"$build/build/tests/capture/test_vm"
"$build/build/tests/capture/test_truth"
"$build/build/tests/capture/test_capture"
"$build/build/tests/capture/test_memprof"
