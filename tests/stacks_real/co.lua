-- A coroutine resumed from Lua, a pcall, and a C function (table.sort)
-- that calls Lua back: the boundaries a merged stack must get right.
jit.off()
local function work(n)
  local s = 0
  for i = 1, n do s = s + math.sin(i) * math.cos(i) end
  return s
end
local function co_body()
  for k = 1, 1e9 do
    work(20000)
    coroutine.yield(k)
  end
end
local function sorter()
  local t = {}
  for i = 1, 3000 do t[i] = (i * 7919) % 3001 end
  table.sort(t, function(a, b) return a < b end)
end
local function main()
  local co = coroutine.create(co_body)
  for i = 1, 400 do
    coroutine.resume(co)
    pcall(sorter)
  end
end
main()
