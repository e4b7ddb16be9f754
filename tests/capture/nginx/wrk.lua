-- wrk script of tests/capture/nginx.sh: three /hot requests for every /cheap.
local n = 0
request = function()
  n = n + 1
  return wrk.format("GET", n % 4 == 0 and "/cheap" or "/hot")
end
