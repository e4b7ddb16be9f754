-- Exercises ljp.sysprof under Debian's luajit: results, error values, report.
-- Prints "samples=N" of the C-mode run for the shell test to compare.
local out = assert(arg[1], "usage: module_api.lua OUTFILE")
local sysprof = require "ljp.sysprof"

local function eq(a, b, what)
  if a ~= b then error(("%s: expected %s, got %s"):format(what, tostring(b), tostring(a)), 2) end
end
local function fails(msg, errno, ...)
  local r, m, e = ...
  eq(r, nil, "result"); eq(m, msg, "message"); eq(e, errno, "errno")
end

-- Misuse, exactly as misc.sysprof.
fails("profiler misuse", 22, sysprof.start())
fails("profiler misuse", 22, sysprof.start("C"))
fails("profiler misuse", 22, sysprof.start{mode = "X"})
fails("profiler misuse", 22, sysprof.start{mode = "CC"})
fails("profiler misuse", 22, sysprof.start{mode = "C", interval = 0})
fails("profiler misuse", 22, sysprof.start{mode = "C", path = 42})
fails("profiler misuse", 22, sysprof.start{mode = "C", timer = "never"})
fails("profiler is not running", 22, sysprof.stop())
-- Unwritable path: strerror and errno, no path in the message.
fails("No such file or directory", 2,
      sysprof.start{mode = "C", path = "/nonexistent/dir/x.bin"})

local function fib(n) if n < 2 then return n end return fib(n - 1) + fib(n - 2) end

-- Mode D: counters only, nothing written.
os.remove(out .. ".d")
assert(sysprof.start{mode = "D", interval = 1, path = out .. ".d"})
local t0 = os.clock() while os.clock() - t0 < 0.2 do fib(20) end
assert(sysprof.stop())
assert(io.open(out .. ".d") == nil, "mode D must not create the file")
local r = sysprof.report()
assert(r.samples > 0, "mode D counts samples")

-- Mode C into the file.
assert(sysprof.start{mode = "C", interval = 1, path = out, timer = "wall"})
fails("profiler is running already", 22, sysprof.start{mode = "C", path = out .. ".x"})
assert(io.open(out .. ".x") == nil, "a refused start must not touch its path")
t0 = os.clock()
while os.clock() - t0 < 0.3 do
  fib(20)
  local t = {} for i = 1, 20000 do t[i] = (i * 7919) % 10007 end
  table.sort(t, function(a, b) return a > b end)
end
assert(sysprof.stop())
r = sysprof.report()
local sum = 0
for _, n in pairs(r.vmstate) do sum = sum + n end
eq(sum, r.samples, "vmstate sum")
assert(r.samples > 50, "samples")
eq(r.unpaired, 0, "unpaired")
eq(r.ticks, r.samples + r.dropped, "ticks")
assert(r.rate > 100, "rate")
for _, k in ipairs{"INTERP", "LFUNC", "FFUNC", "CFUNC", "GC", "EXIT",
                   "RECORD", "OPT", "ASM", "TRACE"} do
  assert(type(r.vmstate[k]) == "number", k)
end

-- A failing write: start succeeds (the header fits /dev/full's first
-- write? no: it fails at once), or stop reports ENOSPC.
local ok, msg, errno = sysprof.start{mode = "C", interval = 1, path = "/dev/full"}
if ok then
  t0 = os.clock() while os.clock() - t0 < 0.1 do fib(20) end
  ok, msg, errno = sysprof.stop()
end
eq(ok, nil, "/dev/full result"); eq(msg, "No space left on device", "/dev/full message")
eq(errno, 28, "/dev/full errno")

print(("samples=%d"):format(sysprof.report and r.samples))
