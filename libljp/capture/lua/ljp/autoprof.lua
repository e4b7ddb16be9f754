-- ljp.autoprof: profile a whole, unmodified script with stock luajit.
--
--   luajit -l ljp.autoprof script.lua args...
--
-- Starts ljp.sysprof when loaded; the profile is completed when the state
-- closes (normal end, or an error in the script) or at os.exit(), and one
-- line then tells what was written:
--   ljp: wrote N samples to FILE, X Hz achieved, D dropped
-- Environment: LJP_SYSPROF_PATH (default sysprof.bin), LJP_SYSPROF_MODE
-- (C, L or D; default C), LJP_SYSPROF_INTERVAL (ms, default 10),
-- LJP_SYSPROF_TIMER (itimer, thread or wall; default itimer),
-- LJP_SYSPROF_FORMAT (2: Tarantool's ljp 2 stream; x1 or 0: ljp's
-- extended stream, the default).
--
-- A bad value is a usage error (exit status 2) before the script runs: a
-- script run unprofiled when a profile was asked for wastes the run, and
-- the user learns it only after the fact.  Likewise a script that cannot
-- be read stops here, before the profile file is created.
local sysprof = require "ljp.sysprof"

local function die(status, ...)
  io.stderr:write("ljp.autoprof: ", ...)
  io.stderr:write("\n")
  io.stderr:flush()
  os.exit(status)
end

local function env(name, default)
  local v = os.getenv(name)
  if v == nil or v == "" then return default end
  return v
end

local mode = env("LJP_SYSPROF_MODE", "C")
if mode ~= "C" and mode ~= "L" and mode ~= "D" then
  die(2, "LJP_SYSPROF_MODE=", mode, ": the mode must be C, L or D")
end
local interval_s = env("LJP_SYSPROF_INTERVAL", "10")
-- Whole milliseconds, as the module takes them; "1e1" or "0x10" would be
-- accepted by tonumber but are surely typos.
local interval = interval_s:match("^%d+$") and tonumber(interval_s)
if not interval or interval < 1 or interval > 3600000 then
  die(2, "LJP_SYSPROF_INTERVAL=", interval_s,
      ": the interval must be a whole number of milliseconds, 1 to 3600000")
end
local timer = env("LJP_SYSPROF_TIMER", "itimer")
if timer ~= "itimer" and timer ~= "thread" and timer ~= "wall" then
  die(2, "LJP_SYSPROF_TIMER=", timer, ": the timer must be itimer, thread or wall")
end
local format_s = env("LJP_SYSPROF_FORMAT", "x1")
local format = ({["x1"] = 0, ["0"] = 0, ["2"] = 2})[format_s]
if not format then
  die(2, "LJP_SYSPROF_FORMAT=", format_s,
      ": the format must be 2 (Tarantool's ljp 2) or x1 (ljp's extended stream)")
end
local path = env("LJP_SYSPROF_PATH", "sysprof.bin")

-- luajit has set arg[0] to the script before running -l: a missing script
-- would make luajit fail after the profile file was created.
local script = arg and arg[0]
if script and script ~= "-" then
  local f, err = io.open(script, "rb")
  if not f then die(1, "cannot read the script: ", err) end
  f:close()
end

local ok, err = sysprof.start{
  mode = mode, interval = interval, path = path, timer = timer, format = format,
}
if not ok then
  die(1, "cannot start profiling (", path, "): ", tostring(err))
end
local r = sysprof.report()
if r.reader ~= "signal" then
  io.stderr:write("ljp.autoprof: this LuaJIT's layout was not recognised (",
                  tostring(r.reader_error), "); Lua stacks are taken at ",
                  "the next safe point and can be skewed\n")
end

-- Stops the profiler (if the module's own finaliser has not done it yet)
-- and says once what was written.
local said = false
local function finish()
  if said then return end
  said = true
  pcall(sysprof.stop)
  local c = sysprof.report()
  local what = mode == "D"
    and string.format("counted %d samples (mode D writes no file)", c.samples)
    or string.format("wrote %d samples to %s", c.samples, path)
  io.stderr:write(string.format("ljp: %s, %.1f Hz achieved, %d dropped\n",
                                what, c.rate, c.dropped))
  io.stderr:flush()
end

-- Runs when the state closes, after the script ended or raised an error.
local sentinel = newproxy(true)
getmetatable(sentinel).__gc = finish
debug.getregistry()["ljp.autoprof"] = sentinel

-- os.exit() ends the process without closing the state.
local exit = os.exit
os.exit = function(...) -- luacheck: ignore 122
  finish()
  return exit(...)
end

return sysprof
