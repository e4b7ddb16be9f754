-- The content handler of the nginx memprof test (tests/capture/nginx_memprof.sh).
-- Every request makes short-lived garbage (churn: tables and strings that
-- die with the request); every request but /cheap also keeps one string
-- forever in the module-level table `kept`, at the line that carries the
-- marker "LEAK HERE".  The test finds that line by its marker, so keep the
-- marker on the leaking line alone.
local M = {}

local concat, format = table.concat, string.format

-- Never emptied: lives as long as the worker's Lua state.
local kept = {}
local nkept = 0

-- n strings no other request has made (interned strings are shared:
-- without the request's number most would be found, not allocated), a
-- table that grows, and their concatenation: all garbage at return.
local seq = 0
local function churn(n)
  local parts = {}
  seq = seq + 1
  for i = 1, n do
    parts[i] = format("%d:%x", seq, i)
  end
  return #concat(parts, ",")
end

-- memprof attributes an allocation made by compiled code to its trace
-- ("TRACE [n] started at chunk:line"), as Tarantool's memprof does; this
-- function stays interpreted so that the leak is reported at its line,
-- which is what jit.off(fn) gives someone hunting a leak.
local function leak(tag)
  nkept = nkept + 1
  kept[nkept] = format("%s-%d-%s", tag, nkept, string.rep("x", 160)) -- LEAK HERE
end
jit.off(leak)

function M.handler()
  local uri = ngx.var.uri
  local size = churn(100)
  if uri ~= "/cheap" then
    leak(uri)
  end
  ngx.print("ok ", size, "\n")
end

-- How many strings were kept (logged at exit by nginx_memprof.conf.in).
function M.kept()
  return nkept
end

return M
