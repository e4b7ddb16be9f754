#!/bin/sh
# The ljp.sysprof module under Debian's luajit and the one-command wrapper.
#   test_lua_module.sh LUAJIT CAPCHECK LUA_CPATH LUA_PATH RUNNER SRCDIR
set -eu
LUAJIT=$1 CAPCHECK=$2 CPATH=$3 LPATH=$4 RUNNER=$5 SRC=$6
export LUAJIT   # the wrapper runs the same luajit
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export LUA_CPATH="$CPATH;;" LUA_PATH="$LPATH;;"
fail() { echo "FAIL: $*"; exit 1; }

# 1. API, errors, report; the file's samples equal report().samples.
got=$("$LUAJIT" "$SRC/module_api.lua" "$tmp/api.bin") || fail "module_api.lua"
want=$(echo "$got" | sed -n 's/^samples=//p')
sum=$("$CAPCHECK" "$tmp/api.bin")
echo "$sum" | grep -q "samples=$want complete=1 status=1 flavor=[12] ljs=3 ljp=129 undefined=0 " ||
  fail "api.bin: want samples=$want complete, got: $sum"
"$CAPCHECK" -v "$tmp/api.bin" | grep -q 'table.sort' || fail "no table.sort frame"
"$CAPCHECK" -v "$tmp/api.bin" | grep -q ';main;' || fail "host stacks do not reach main"

# 1b. This luajit's layout is recognised: stacks are read at the signal
# (a statically linked /usr/bin/luajit, or OpenResty's luajit2).
reader=$("$LUAJIT" -e 'local sp = require "ljp.sysprof"
assert(sp.start{mode = "C", path = arg[1] or "'"$tmp"'/r.bin"})
local r = sp.report() sp.stop()
io.write(r.reader, " ", tostring(r.reader_error))') || fail "reader check"
[ "${reader%% *}" = signal ] || fail "Lua stacks not read at the signal: $reader"

# 1c. format = 2 writes Tarantool's ljp 2.
printf 'local x=0 local t0=os.clock() while os.clock()-t0<0.2 do x=x+1 end\n' > "$tmp/spin.lua"
LJP_SYSPROF_PATH="$tmp/f2.bin" LJP_SYSPROF_FORMAT=2 LJP_SYSPROF_INTERVAL=1 \
  "$LUAJIT" -l ljp.autoprof "$tmp/spin.lua" || fail "format 2 run"
"$CAPCHECK" "$tmp/f2.bin" | grep -q "complete=1 status=1 flavor=[12] ljs=3 ljp=2 " ||
  fail "f2.bin is not ljp 2: $("$CAPCHECK" "$tmp/f2.bin")"

# 2. One command, unmodified script that raises: the file is still complete.
cat > "$tmp/boom.lua" <<'LUA'
local function fib(n) if n < 2 then return n end return fib(n-1) + fib(n-2) end
local t0 = os.clock() while os.clock() - t0 < 0.3 do fib(20) end
error("boom")
LUA
if "$RUNNER" -o "$tmp/boom.bin" -i 1 "$tmp/boom.lua" 2>"$tmp/err"; then
  fail "the script's error must reach the exit status"
fi
grep -q boom "$tmp/err" || fail "the script's error message is lost"
sum=$("$CAPCHECK" "$tmp/boom.bin")
echo "$sum" | grep -q "complete=1 status=1" || fail "boom.bin incomplete: $sum"
echo "$sum" | grep -q "samples=0 " && fail "boom.bin has no samples"

# 3. os.exit() without closing the state: completed at exit.
printf 'local x=0 local t0=os.clock() while os.clock()-t0<0.2 do x=x+1 end os.exit(3)\n' > "$tmp/exit.lua"
LJP_SYSPROF_PATH="$tmp/exit.bin" LJP_SYSPROF_INTERVAL=1 "$LUAJIT" -l ljp.autoprof "$tmp/exit.lua" && fail "exit status"
sum=$("$CAPCHECK" "$tmp/exit.bin")
echo "$sum" | grep -q "complete=1 status=1" || fail "exit.bin incomplete: $sum"

# 4. Wrapper usage errors exit 2.
set +e
"$RUNNER" -m >/dev/null 2>&1; rc=$?
set -e
[ "$rc" = 2 ] || fail "wrapper usage exit $rc"
echo "1 passed, 0 failed"
