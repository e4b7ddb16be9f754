# Reads `ljpdump -e PROFILE` of one nginx worker and prints one line of
# counts for tests/capture/nginx.sh:
#
#   samples= trace= gc= nontrace= lua= hostok= badpc= badjit= badother=
#   hostonly= hot= hottop= toplua= topfn= topfn_samples=
#
#   trace     TRACE samples; nontrace = samples - trace
#   lua       non-trace samples with a non-empty Lua stack
#   hostok    of those, samples whose host stack holds `main` and, deeper,
#             an ngx_http_lua_* frame (the request went main -> nginx's
#             event loop -> lua-nginx-module -> the VM -> these Lua frames)
#   badpc, badjit, badother
#             the other samples of `lua`: host stack of the interrupted PC
#             alone; outermost host frame in JIT machine code (a raw
#             address: trace exits); anything else
#   hostonly  non-trace samples without Lua frames (GC included)
#   hot       samples with the hot function on the Lua stack, or in a trace
#             whose start function is the hot function
#   toplua    samples with a top Lua function (the innermost Lua frame;
#             builtins and C frames above it skipped; a trace's start
#             function for TRACE samples)
#   hottop    of those, samples whose top Lua function is the hot function
#   topfn     the most frequent top Lua function, topfn_samples its count
#
# Variable hot: the hot function's frame name, "@chunk:firstline".
# Sample lines look like (summary.c of ljpdump):
#   OFF sample    LFUNC lua=[outer;...;inner] host=[name:0xADDR;...]
#   OFF sample    TRACE TRACE [n] @chunk:line
# and symbol lines
#   OFF symbol    lfunc 0xID line L CHUNK ...
#   OFF symbol    trace N proto 0xID line L ...

function is_lua_fn(f) { return f ~ /^[@=].*:[0-9]+$/ }

# The frames of the bracketed list after key ("lua=[" / "host=[") into arr;
# returns their count.  Host frames lose their ":0xADDR" suffix.
function frames(line, key, arr,    s, e, body, n, i) {
  s = index(line, key)
  if (s == 0)
    return 0
  body = substr(line, s + length(key))
  e = index(body, "]")
  body = substr(body, 1, e - 1)
  if (body == "")
    return 0
  n = split(body, arr, ";")
  if (key == "host=[")
    for (i = 1; i <= n; i++)
      sub(/:0x[0-9a-f]+$/, "", arr[i])
  return n
}

$2 == "symbol" && $3 == "lfunc" {
  # The chunk name is everything after "line L " up to a " (" marker.
  name = $0
  sub(/^.* line [0-9]+ /, "", name)
  sub(/ \((mid-stream|repeat)\).*$/, "", name)
  fname[$4] = name ":" $6
  next
}
$2 == "symbol" && $3 == "trace" {
  tproto[$4] = $6
  next
}
$2 != "sample" { next }
{
  samples++
  top = ""
  onstack = 0
  if ($3 == "TRACE") {
    trace++
    if (match($0, /TRACE \[[0-9]+\]/)) {
      t = substr($0, RSTART + 7, RLENGTH - 8)
      if (t in tproto && tproto[t] in fname)
        top = fname[tproto[t]]
    }
    if (top == hot)
      onstack = 1
    # A stream that also records the trace's callers lists them as frames.
    nl = frames($0, "lua=[", lua)
    for (i = 1; i <= nl; i++)
      if (lua[i] == hot)
        onstack = 1
  } else {
    nl = frames($0, "lua=[", lua)
    nh = frames($0, "host=[", host)
    if ($3 == "GC")
      gc++
    if (nl == 0) {
      hostonly++
    } else {
      luan++
      seen_main = 0
      ok = 0
      for (i = 1; i <= nh; i++) {
        if (host[i] == "main")
          seen_main = 1
        else if (seen_main && host[i] ~ /^ngx_http_lua_/)
          ok = 1
      }
      if (ok)
        hostok++
      else if (nh <= 1)
        badpc++             # the interrupted PC alone: no unwinding
      else if (host[1] ~ /^0x/)
        badjit++            # the walk ended in JIT machine code
      else
        badother++
    }
    for (i = nl; i >= 1; i--) {
      if (lua[i] == hot)
        onstack = 1
      if (top == "" && is_lua_fn(lua[i]))
        top = lua[i]
    }
  }
  if (onstack)
    hotn++
  if (top != "") {
    toplua++
    topcount[top]++
    if (top == hot)
      hottop++
  }
}
END {
  best = ""
  for (f in topcount)
    if (best == "" || topcount[f] > topcount[best] ||
        (topcount[f] == topcount[best] && f < best))
      best = f
  printf "samples=%d trace=%d gc=%d nontrace=%d lua=%d hostok=%d " \
         "badpc=%d badjit=%d badother=%d " \
         "hostonly=%d hot=%d hottop=%d toplua=%d topfn=%s topfn_samples=%d\n",
         samples, trace, gc, samples - trace, luan, hostok, badpc, badjit,
         badother, hostonly, hotn, hottop, toplua,
         best == "" ? "-" : best, best == "" ? 0 : topcount[best]
}
