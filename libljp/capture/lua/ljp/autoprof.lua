-- ljp.autoprof: profile a whole, unmodified script with stock luajit.
--
--   luajit -l ljp.autoprof script.lua args...
--
-- Starts ljp.sysprof when loaded; the profile is completed when the state
-- closes (normal end, or an error in the script) or at os.exit().
-- Environment: LJP_SYSPROF_PATH (default sysprof.bin), LJP_SYSPROF_MODE
-- (C, L or D; default C), LJP_SYSPROF_INTERVAL (ms, default 10),
-- LJP_SYSPROF_TIMER (itimer, thread or wall; default itimer),
-- LJP_SYSPROF_FORMAT (2: Tarantool's ljp 2 stream; default ljp x1).
local sysprof = require "ljp.sysprof"
local ok, err = sysprof.start{
  mode = os.getenv("LJP_SYSPROF_MODE") or "C",
  interval = tonumber(os.getenv("LJP_SYSPROF_INTERVAL") or "10"),
  path = os.getenv("LJP_SYSPROF_PATH") or "sysprof.bin",
  timer = os.getenv("LJP_SYSPROF_TIMER"),
  format = tonumber(os.getenv("LJP_SYSPROF_FORMAT") or "0"),
}
if not ok then
  io.stderr:write("ljp.autoprof: cannot start profiling: ", tostring(err), "\n")
else
  local r = sysprof.report()
  if r.reader ~= "signal" then
    io.stderr:write("ljp.autoprof: this LuaJIT's layout was not recognised (",
                    tostring(r.reader_error), "); Lua stacks are taken at ",
                    "the next safe point and can be skewed\n")
  end
end
return sysprof
