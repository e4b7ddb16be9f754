-- ljp.automem: record the allocations of a whole, unmodified script with
-- stock luajit (or OpenResty's).
--
--   luajit -l ljp.automem script.lua args...
--
-- Starts ljp.memprof when loaded; the profile is completed when the state
-- closes (normal end, or an error in the script) or at os.exit(), and one
-- line then tells what was written:
--   ljp: wrote N memory events to FILE (+A bytes, -F bytes), D dropped
-- Environment: LJP_MEMPROF_PATH (default memprof.bin).
-- Read the file with ljpdump (report, --leak-only), ljpfold --weight=live
-- or ljpsvg.
local memprof = require "ljp.memprof"

local path = os.getenv("LJP_MEMPROF_PATH")
if path == nil or path == "" then path = "memprof.bin" end

local function die(status, ...)
  io.stderr:write("ljp.automem: ", ...)
  io.stderr:write("\n")
  io.stderr:flush()
  os.exit(status)
end

-- luajit has set arg[0] to the script before running -l: a missing script
-- would make luajit fail after the profile file was created.
local script = arg and arg[0]
if script and script ~= "-" then
  local f, err = io.open(script, "rb")
  if not f then die(1, "cannot read the script: ", err) end
  f:close()
end

local ok, err = memprof.start(path)
if not ok then die(1, "cannot start memory profiling: ", tostring(err)) end
local r = memprof.report()
if r.reader ~= "vm" then
  io.stderr:write("ljp.automem: this LuaJIT's layout was not recognised (",
                  tostring(r.reader_error), "); every event is INTERNAL\n")
end

local said = false
local function finish()
  if said then return end
  said = true
  local stopped, serr = true, nil
  if memprof.running() then stopped, serr = memprof.stop() end
  local c = memprof.report()
  io.stderr:write(string.format(
    "ljp: wrote %d memory events to %s (+%d bytes, -%d bytes), %d dropped%s\n",
    c.events, path, c.bytes_allocated, c.bytes_freed, c.dropped,
    stopped and "" or ("; " .. tostring(serr))))
  io.stderr:flush()
end

-- Runs when the state closes, after the script ended or raised an error.
local sentinel = newproxy(true)
getmetatable(sentinel).__gc = finish
debug.getregistry()["ljp.automem"] = sentinel

-- os.exit() ends the process without closing the state.
local exit = os.exit
os.exit = function(...) -- luacheck: ignore 122
  finish()
  return exit(...)
end

return memprof
