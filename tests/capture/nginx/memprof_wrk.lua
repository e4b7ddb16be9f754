-- wrk script of tests/capture/nginx_memprof.sh: three /hot requests (each
-- keeps a string) for every /cheap one, as nginx/wrk.lua, and 1 ms between
-- the requests of a connection.  The pause bounds the requests, and so the
-- profiles (~225 allocator calls, ~2 KB of profile per request), however
-- fast the machine: at most ~1000 requests per second per connection.
local n = 0
request = function()
  n = n + 1
  return wrk.format("GET", n % 4 == 0 and "/cheap" or "/hot")
end
delay = function()
  return 1
end
