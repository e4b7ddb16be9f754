-- ljp.autoprof: profile a whole, unmodified script with stock luajit.
--
--   luajit -l ljp.autoprof script.lua args...
--
-- Starts ljp.sysprof when loaded; the profile is completed when the state
-- closes (normal end, or an error in the script) or at os.exit().
-- Environment: LJP_SYSPROF_PATH (default sysprof.bin), LJP_SYSPROF_MODE
-- (C, L or D; default C), LJP_SYSPROF_INTERVAL (ms, default 10),
-- LJP_SYSPROF_TIMER (itimer, thread or wall; default itimer).
local sysprof = require "ljp.sysprof"
local ok, err = sysprof.start{
  mode = os.getenv("LJP_SYSPROF_MODE") or "C",
  interval = tonumber(os.getenv("LJP_SYSPROF_INTERVAL") or "10"),
  path = os.getenv("LJP_SYSPROF_PATH") or "sysprof.bin",
  timer = os.getenv("LJP_SYSPROF_TIMER"),
}
if not ok then
  io.stderr:write("ljp.autoprof: cannot start profiling: ", tostring(err), "\n")
end
return sysprof
