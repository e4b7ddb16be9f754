#!/usr/bin/env bash
# Stacks of real captures of a stripped luajit (Debian's /usr/bin/luajit):
# a coroutine under its resumer, Lua -> C -> Lua in order, every stack from
# its root, leaf-mode stacks with their Lua root, traces folded away.
# Properties of every folded line, so the sampling's luck does not matter.
# Usage: test_real.sh LJP-SYSPROF-RUN LJPFOLD LJPDUMP
set -u
run=$1 fold=$2 dump=$3
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
check() { # name, status
  if [ "$2" -eq 0 ]; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: $1"; fi
}
cp "$here/co.lua" "$tmp/co.lua"
cd "$tmp"
"$run" -i 1 -o x1.bin co.lua 2>/dev/null; check "x1 capture" $?
LJP_SYSPROF_FORMAT=2 "$run" -i 1 -o v2.bin co.lua 2>/dev/null; check "ljp 2 capture" $?
"$run" -m L -i 1 -o leaf.bin co.lua 2>/dev/null; check "leaf capture" $?

for f in x1 v2; do
  "$fold" --no-source $f.bin > $f.folded; check "$f folds" $?
  [ "$(awk '{s += $NF} END {print s}' $f.folded)" = \
    "$("$dump" $f.bin | sed -n 's/^SAMPLES: //p')" ]; check "$f: every sample folded" $?
  # every stack starts at the process's root: nothing upside down
  ! grep -v '^_start;' $f.folded | grep -q .; check "$f: every stack from _start" $?
  ! grep -q 'host stack incomplete' $f.folded; check "$f: complete stacks, no mark" $?
  # the coroutine's frames stand under coroutine.resume, under main
  grep -q '@co.lua:9' $f.folded; check "$f: coroutine sampled" $?
  ! grep '@co.lua:9' $f.folded | grep -vq 'lua_pcall;.*@co.lua:20;coroutine\.resume;.*@co.lua:9'
  check "$f: coroutine under its resumer" $?
  # (before: "@co.lua:20;lj_vm_interpreter;lj_vm_interpreter;
  # coroutine.resume;__sin_fma;@co.lua:9;@co.lua:4;math.sin")
  ! grep '@co.lua:9' $f.folded | grep -vq '@co.lua:20;coroutine\.resume;'
  check "$f: coroutine.resume right under its caller" $?
  ! grep -qE '(^|;)[^;@.]*(sin|cos)[^;]*;.*@co\.lua:4' $f.folded
  check "$f: libm's frames above the Lua that called them" $?
  # Lua -> C -> Lua: the comparator under table.sort under sorter
  ! grep '@co.lua:18;' $f.folded | grep -vq '@co.lua:15;table\.sort;.*@co.lua:18'
  check "$f: comparator under table.sort" $?
  ! grep -q 'lua_cpcall;[^;]*;@co' $f.folded; check "$f: no Lua frame right under lua_cpcall" $?
  # names from the source, and none with --no-source
  "$fold" $f.bin | grep -q 'co_body @co.lua:9'; check "$f: function names" $?
  ! grep -q 'co_body' $f.folded; check "$f: --no-source" $?
done

# leaf mode: the PC alone; each stack starts with its Lua frame
"$fold" --no-source leaf.bin > leaf.folded; check "leaf folds" $?
! grep -q '^lj_vm_interpreter\|^luajit+\|^\[host stack incomplete\];lj_vm' leaf.folded
check "leaf: no host frame at the root" $?
grep -q ';\[host stack incomplete\];' leaf.folded; check "leaf: marked" $?
"$dump" leaf.bin | grep -q '^host  *[1-9]'; check "leaf: counted in the report" $?

# traces folded into their functions leave no trace frame
sed 's/^jit.off()$//' co.lua > jit.lua
"$run" -i 1 -o jit.bin jit.lua 2>/dev/null; check "jit capture" $?
"$fold" jit.bin | grep -q ';TRACE \['; check "jit: traces under their functions" $?
! "$fold" --traces=function jit.bin | grep -q 'TRACE'; check "jit: --traces=function" $?

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
