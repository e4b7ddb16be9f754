-- The content handler of the nginx capture test (tests/capture/nginx.sh).
-- Its hot work is known by construction: every /hot request spends almost
-- all of its Lua time in hot_score (string.format, table.concat and a loop);
-- /cheap returns at once.  The checks find hot_score by the line of its
-- definition (the profile names Lua functions chunk:firstline), so keep the
-- definition on a line of its own, introduced by "local function hot_score".
local M = {}

local concat, format = table.concat, string.format

local function hot_score(n)
  local parts = {}
  local sum = 0
  for i = 1, n do
    parts[#parts + 1] = format("%d:%x", i, i * 7919 % 65521)
    sum = (sum + i * i) % 1000003
  end
  return sum + #concat(parts, ",")
end

local function cheap()
  return "ok\n"
end

function M.handler()
  if ngx.var.uri == "/cheap" then
    ngx.print(cheap())
    return
  end
  ngx.print("score ", hot_score(2000), "\n")
end

return M
