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
  [ -x "$tmp/prefix/bin/$tool" ]
  [ -f "$tmp/prefix/share/man/man1/$tool.1" ]
done
[ -f "$tmp/prefix/include/ljp.h" ]
echo "1 passed, 0 failed"
