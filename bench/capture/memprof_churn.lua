-- table and string churn: most objects die young, a few are kept
local keep = {}
local n = tonumber(arg and arg[1]) or 2000000
for i = 1, n do
  local t = {i, tostring(i), {x = i}}
  if i % 100 == 0 then keep[#keep + 1] = t[2] .. "k" end
  if #keep > 10000 then keep = {} end
end
