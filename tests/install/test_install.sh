#!/usr/bin/env bash
# Installs the build tree into a scratch prefix, then builds consumer.c
# against it with pkg-config (shared and static) and with find_package(ljp).
# Usage: test_install.sh BUILD_DIR SOURCE_DIR TESTDATA
set -eu
build=$1 src=$2 data=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
capture=$data/captures/sp_c_fib_jitoff_1ms.bin
export PKG_CONFIG_PATH=$tmp/prefix/lib/pkgconfig
cc -o "$tmp/shared" "$src/consumer.c" $(pkg-config --cflags --libs ljp)
LD_LIBRARY_PATH=$tmp/prefix/lib "$tmp/shared" "$capture" | grep -qx '0.1.0 150'
cc -o "$tmp/static" "$src/consumer.c" $(pkg-config --cflags ljp) "$tmp/prefix/lib/libljp.a"
"$tmp/static" "$capture" | grep -qx '0.1.0 150'
mkdir "$tmp/proj"
cp "$src/consumer.c" "$tmp/proj/"
cat > "$tmp/proj/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.16)
project(consumer C)
find_package(ljp 0.1 REQUIRED)
add_executable(consumer consumer.c)
target_link_libraries(consumer PRIVATE ljp::ljp_static)
CM
cmake -S "$tmp/proj" -B "$tmp/proj/build" -DCMAKE_PREFIX_PATH="$tmp/prefix" >/dev/null
cmake --build "$tmp/proj/build" >/dev/null
"$tmp/proj/build/consumer" "$capture" | grep -qx '0.1.0 150'
for tool in ljpdump ljpfold ljpsvg ljpdb; do
  # ljpsvg and ljpdb are optional (LJP_BUILD_SVG, LJP_BUILD_DB).
  [ -x "$build/$tool/$tool" ] || continue
  [ -x "$tmp/prefix/bin/$tool" ]
  [ -f "$tmp/prefix/share/man/man1/$tool.1" ]
done
[ -f "$tmp/prefix/include/ljp.h" ]
# The installed runner finds ljp.autoprof and ljp/sysprof.so relative to
# itself: it works from the prefix, through a symlink, and after the whole
# tree was moved elsewhere.
if [ -f "$build/libljp/capture/install/ljp-sysprof-run" ]; then
  run=ljp-sysprof-run
  [ -x "$tmp/prefix/bin/$run" ] && [ -f "$tmp/prefix/share/man/man1/$run.1" ]
  printf 'local x=0 local t0=os.clock() while os.clock()-t0<0.2 do x=x+1 end\n' > "$tmp/spin.lua"
  runs() {  # runs PREFIX RUNNER OUT: the profile is complete, the line agrees
    (cd "$tmp" && env -u LUA_PATH -u LUA_CPATH "$2" -o "$3" -i 1 spin.lua 2> "$tmp/err")
    n=$(sed -n "s/^ljp: wrote \([0-9]*\) samples to $3,.*/\1/p" "$tmp/err")
    [ -n "$n" ] && [ "$n" -gt 0 ] || { cat "$tmp/err"; exit 1; }
    "$1/bin/ljpdump" --summary "$tmp/$3" | grep -Eq "^samples: +$n\$" ||
      { "$1/bin/ljpdump" --summary "$tmp/$3"; exit 1; }
  }
  runs "$tmp/prefix" "$tmp/prefix/bin/$run" a.bin
  mkdir "$tmp/links" && ln -s "$tmp/prefix/bin/$run" "$tmp/links/$run"
  runs "$tmp/prefix" "$tmp/links/$run" b.bin
  mv "$tmp/prefix" "$tmp/moved"
  PATH="$tmp/moved/bin:$PATH" runs "$tmp/moved" "$run" c.bin
fi
echo "1 passed, 0 failed"
