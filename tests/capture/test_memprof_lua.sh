#!/bin/sh
# The Lua module ljp.memprof and ljp.automem under a real luajit: errors as
# misc.memprof gives them (running twice, stop while idle, an unwritable
# path, /dev/full), and a whole script profiled with luajit -l
# ljp.automem whose leaks ljpdump --leak-only shows at their lines.
#   test_memprof_lua.sh LUAJIT LJPDUMP LUA_CPATH LUA_PATH
set -eu
luajit=$1 ljpdump=$2
LUA_CPATH="$3;;" LUA_PATH="$4;;"
export LUA_CPATH LUA_PATH
dir=$(mktemp -d /tmp/ljp-memprof.XXXXXX)
trap 'rm -rf "$dir"' EXIT INT TERM HUP PIPE
cd "$dir"

"$luajit" - <<'LUA'
local m = require "ljp.memprof"
local function expect(want, ...)
  local got = select(2, ...)
  assert(select(1, ...) == nil, "expected a failure")
  assert(got:find(want, 1, true), "got: " .. tostring(got))
end
expect("profiler is not running", m.stop())
expect("profiler misuse", m.start())
expect("/nonexistent/dir/x.bin: No such file or directory",
       m.start("/nonexistent/dir/x.bin"))
assert(not m.running())
-- /dev/full: the first write fails, start reports it.
expect("/dev/full: No space left on device", m.start("/dev/full"))
assert(not m.running())
assert(m.start("a.bin"))
expect("profiler is running already", m.start("b.bin"))
local t = {}
for i = 1, 100 do t[i] = {} end
assert(m.stop())
local r = m.report()
assert(r.reader == "vm", tostring(r.reader_error))
assert(r.allocs >= 100 and r.dropped == 0)
expect("profiler is not running", m.stop())
LUA
"$ljpdump" a.bin >/dev/null

cat > leak.lua <<'LUA'
jit.off()  -- attributed by line (a JIT loop would be its trace's)
local cache = {}
local function handler(i)
  local tmp = {}                                    -- line 4: freed
  cache[#cache + 1] = string.format("%032d", i)     -- line 5: kept
  return tmp
end
for i = 1, 2000 do handler(i) end
collectgarbage() collectgarbage()
LUA
LJP_MEMPROF_PATH=leak.bin "$luajit" -l ljp.automem leak.lua 2> err.txt
grep -q "^ljp: wrote [0-9]* memory events to leak.bin" err.txt
"$ljpdump" --leak-only leak.bin > leak.txt
# The kept strings lead the heap summary; the freed tables are not in it.
sed -n 2p leak.txt | grep -q "^@leak.lua:5 holds "
! grep -q "^@leak.lua:4 holds" leak.txt
echo "memprof Lua module: ok"
