#!/usr/bin/env bash
# The Debian package: builds it with cpack -G DEB (prefix /usr), installs it
# with apt-get, runs the installed tools, ljp-sysprof-run and the Lua
# modules from their installed paths (no LUA_CPATH or LUA_PATH: Debian's
# luajit must find the modules on its default paths), checks the package's
# dependencies and man pages, then removes it and checks its files are gone.
#   tests/package.sh [BUILD_DIR]   (default: a scratch folder)
# Needs root (it installs a package); skipped, and said so, without.
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
fail() { echo "FAIL: $*"; exit 1; }
if [ "$(id -u)" -ne 0 ]; then
  echo "package: skipped: installing the package needs root"
  exit 0
fi
for tool in cpack dpkg-deb dpkg-shlibdeps apt-get luajit; do
  command -v "$tool" >/dev/null || fail "$tool not found (tests/deps.sh test installs it)"
done
# Never replace or remove what this test did not install.
if dpkg-query -W -f='${Status}' ljp 2>/dev/null | grep -q "install ok installed"; then
  fail "a package ljp is installed already: remove it first (apt-get remove ljp)"
fi
for f in /usr/bin/ljpdump /usr/bin/ljp-sysprof-run /usr/include/ljp.h; do
  [ ! -e "$f" ] || fail "$f exists already and is not from the package ljp"
done

work=$(mktemp -d)
if [ $# -ge 1 ]; then
  build=$(realpath -m "$1")
else
  build=$work/build
fi
installed=0
cleanup() {
  if [ "$installed" = 1 ]; then
    DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq ljp >/dev/null 2>&1 || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT
pass=0
ok() { pass=$((pass + 1)); }

cmake -S "$src" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DLJP_WERROR=ON \
      -DLJP_BUILD_TESTS=OFF -DCMAKE_INSTALL_PREFIX=/usr >/dev/null
cmake --build "$build" -j"$(nproc)" >/dev/null
rm -f "$build"/ljp_*.deb
(cd "$build" && cpack -G DEB >"$work/cpack.log" 2>&1) ||
  fail "cpack failed: $(cat "$work/cpack.log")"
debs=("$build"/ljp_*.deb)
[ ${#debs[@]} -eq 1 ] && [ -f "${debs[0]}" ] || fail "no single ljp_*.deb in $build"
deb=${debs[0]}
version=$(sed -n 's/^project(ljp VERSION \([0-9.]*\).*/\1/p' "$src/CMakeLists.txt")
[ "$(dpkg-deb -f "$deb" Package)" = ljp ] || fail "package name is not ljp"
[ "$(dpkg-deb -f "$deb" Version)" = "$version" ] || fail "version is not $version"
[ -n "$(dpkg-deb -f "$deb" Maintainer)" ] || fail "no Maintainer field"
ok
# The libraries the binaries link, found by dpkg-shlibdeps.
depends=$(dpkg-deb -f "$deb" Depends)
for dep in libc6 libxml2 libsqlite3-0 zlib1g; do
  echo "$depends" | grep -q "\b$dep\b" || fail "Depends lacks $dep: $depends"
done
ok

# Installed the way a user installs a downloaded package.
(cd "$(dirname "$deb")" && DEBIAN_FRONTEND=noninteractive \
   apt-get install -y -qq "./$(basename "$deb")" >"$work/apt.log" 2>&1) ||
  fail "apt-get install failed: $(cat "$work/apt.log")"
installed=1
files=$(dpkg -L ljp)
for f in /usr/bin/ljpdump /usr/bin/ljpfold /usr/bin/ljpsvg /usr/bin/ljpdb \
         /usr/bin/ljp-sysprof-run /usr/include/ljp.h /usr/include/ljp_capture.h \
         /usr/lib/x86_64-linux-gnu/lua/5.1/ljp/sysprof.so \
         /usr/lib/x86_64-linux-gnu/lua/5.1/ljp/memprof.so \
         /usr/share/lua/5.1/ljp/autoprof.lua /usr/share/lua/5.1/ljp/automem.lua \
         /usr/lib/x86_64-linux-gnu/pkgconfig/ljp.pc; do
  echo "$files" | grep -qx "$f" || fail "the package does not install $f"
  [ -e "$f" ] || fail "$f is missing after the install"
done
ok

unset LUA_CPATH LUA_PATH LUAJIT LJP_SYSPROF_PATH LJP_SYSPROF_MODE \
      LJP_SYSPROF_INTERVAL LJP_SYSPROF_TIMER LJP_SYSPROF_FORMAT
cd "$work"
hash -r
[ "$(command -v ljpdump)" = /usr/bin/ljpdump ] || fail "ljpdump on PATH is $(command -v ljpdump)"
ljpdump --version | grep -qx "ljpdump (ljp) $version" || fail "ljpdump --version: $(ljpdump --version)"
ok
cap=$src/testdata/captures/sp_c_fib_jitoff_1ms.bin
ljpfold "$cap" > fib.folded || fail "installed ljpfold failed"
cmp -s fib.folded "$src/testdata/golden/sp_c_fib_jitoff_1ms.folded" ||
  fail "installed ljpfold's output differs from testdata/golden"
ljpsvg "$cap" > fib.svg || fail "installed ljpsvg failed"
grep -q "<svg" fib.svg || fail "installed ljpsvg wrote no SVG"
ljpdb import prof.db "$cap" >/dev/null || fail "installed ljpdb import failed"
ok

# A real capture from the installed runner and modules.
cat > spin.lua <<'LUA'
local function spin(n) local x = 0 for i = 1, n do x = x + i % 7 end return x end
local t0 = os.clock() while os.clock() - t0 < 0.3 do spin(1e5) end
LUA
ljp-sysprof-run -o "$work/run.bin" spin.lua >run.log 2>&1 ||
  fail "ljp-sysprof-run failed: $(cat run.log)"
ljpdump --summary run.bin > run.summary || fail "ljpdump cannot read the runner's capture"
samples=$(sed -n 's/^samples: *//p' run.summary | awk '{print $1}')
[ "${samples:-0}" -gt 0 ] || fail "no samples in the runner's capture: $(cat run.summary)"
ljpfold run.bin | grep -q "spin" || fail "the runner's capture does not show spin"
ok
# Debian's luajit finds the modules on its own default paths.
where=$(luajit -e 'print(package.searchpath("ljp.sysprof", package.cpath))')
[ "$where" = /usr/lib/x86_64-linux-gnu/lua/5.1/ljp/sysprof.so ] ||
  fail "luajit finds ljp.sysprof at '$where'"
LJP_SYSPROF_PATH=$work/auto.bin luajit -l ljp.autoprof spin.lua >/dev/null 2>&1 ||
  fail "luajit -l ljp.autoprof failed"
ljpdump --summary auto.bin | grep -q "samples" || fail "ljp.autoprof wrote no profile"
luajit -e 'assert(require("ljp.memprof"))' || fail "luajit cannot load ljp.memprof"
where=$(luajit -e 'print(package.searchpath("ljp.automem", package.path))')
[ "$where" = /usr/share/lua/5.1/ljp/automem.lua ] || fail "luajit finds ljp.automem at '$where'"
ok

# Man pages, the pkg-config file and a program built against the library.
man -w ljpfold | grep -q "^/usr/share/man/man1/ljpfold.1" || fail "man -w ljpfold: $(man -w ljpfold 2>&1)"
man -w 3 ljp_capture >/dev/null 2>&1 || fail "no man page ljp_capture(3)"
[ "$(pkg-config --modversion ljp)" = "$version" ] || fail "pkg-config --modversion ljp"
cat > use.c <<'C'
#include <stdio.h>
#include <ljp.h>
int main(void) { puts(ljp_version()); return 0; }
C
cc use.c -o use $(pkg-config --cflags --libs ljp) || fail "cannot build against the installed libljp"
[ "$(./use)" = "$version" ] || fail "ljp_version() says $(./use)"
ok

DEBIAN_FRONTEND=noninteractive apt-get remove -y -qq ljp >"$work/apt.log" 2>&1 ||
  fail "apt-get remove failed: $(cat "$work/apt.log")"
! dpkg-query -W -f='${Status}' ljp 2>/dev/null | grep -q "install ok installed" ||
  fail "ljp is still installed"
for f in $files; do
  [ -d "$f" ] && continue
  [ ! -e "$f" ] || fail "$f is still there after the removal"
done
# What remove keeps (the record of its ldconfig script) goes too.
dpkg --purge ljp >/dev/null 2>&1 || fail "dpkg --purge ljp failed"
installed=0
! dpkg-query -W ljp >/dev/null 2>&1 || fail "dpkg still knows the package ljp"
ok
echo "$pass passed, 0 failed"
