#!/usr/bin/env bash
# ljpdump --format=json carries the report, the same rows as the text
# report (which the golden tests pin): top functions, traces, depths for
# sysprof; allocations and the heap summary for memprof.  Each kind has its
# own keys only.  --events --format=json is JSON Lines, one per event.
#   test_dump_json.sh LJPDUMP TESTDATA
set -uo pipefail
dump=$1 data=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 failed=0
check() { if [ "$2" = 0 ]; then pass=$((pass + 1)); else failed=$((failed + 1)); echo "FAIL: $1"; fi; }
# Valid JSON, where a parser is at hand.
valid() {
  if command -v python3 > /dev/null; then
    python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$1"
  fi
}
valid_lines() {
  if command -v python3 > /dev/null; then
    python3 -c '
import json, sys
for line in open(sys.argv[1]):
    json.loads(line)' "$1"
  fi
}

# The rows of a JSON array (one object per line) as "a b c" text.
section() {  # section FILE KEY: the lines of the array KEY
  sed -n "/^    \"$2\": \\[\$/,/^    \\]/p" "$1" | sed '1d;$d'
}

# 1. sysprof: the report's rows equal the text report's.
for cap in sp_c_fib_jitoff_1ms sp_c_jiton_flush_1ms sp_c_deeprec_jitoff_1ms; do
  bin=$data/captures/$cap.bin
  "$dump" --format=json "$bin" > "$tmp/j"; check "$cap: json exit status" $?
  "$dump" "$bin" > "$tmp/t"
  valid "$tmp/j"; check "$cap: valid JSON" $?
  ! grep -q '"events":\|"sources":\|"heap_summary":\|"allocations":' "$tmp/j"
  check "$cap: no memprof keys" $?
  grep -q '^  "report": {$' "$tmp/j"; check "$cap: a report" $?
  for by in self total; do
    key=top_$by
    title="TOP FUNCTIONS BY $(echo $by | tr a-z A-Z) SAMPLES"
    # text: "%10 n %7.2f%%  name"; JSON: {"function": "name", "self": a, "total": b}
    sed -n "/^$title\$/,/^\$/p" "$tmp/t" | sed '1,2d;/^$/d;/^(/d' |
      sed 's/^ *\([0-9]*\) *[0-9.]*%  \(.*\)$/\1 \2/' > "$tmp/want"
    section "$tmp/j" "$key" |
      sed 's/^ *{"function": "\(.*\)", "self": \([0-9]*\), "total": \([0-9]*\)},\{0,1\}$/\2 \3 \1/' |
      if [ $by = self ]; then awk '{ n = $1; $1 = ""; $2 = ""; sub(/^  /, ""); print n, $0 }'
      else awk '{ n = $2; $1 = ""; $2 = ""; sub(/^  /, ""); print n, $0 }'; fi > "$tmp/got"
    [ -s "$tmp/want" ] && cmp -s "$tmp/want" "$tmp/got"
    check "$cap: $key rows equal the text report's" $?
  done
  # traces: text "%10 n %7.2f%% %7 no  start"
  sed -n '/^TRACES$/,/^$/p' "$tmp/t" | sed '1,2d;/^$/d' |
    sed 's/^ *\([0-9]*\) *[0-9.]*% *\([0-9]*\)  \(.*\)$/\2 \1 \3/' > "$tmp/want"
  section "$tmp/j" traces |
    sed 's/^ *{"trace": \([0-9]*\), "start": "\(.*\)", "samples": \([0-9]*\)},\{0,1\}$/\1 \3 \2/' > "$tmp/got"
  cmp -s "$tmp/want" "$tmp/got"; check "$cap: traces equal the text report's" $?
  # depths: every sample once in each histogram
  samples=$(sed -n 's/^  "samples": \([0-9]*\),$/\1/p' "$tmp/j")
  lua=$(section "$tmp/j" depths | sed 's/.*"lua": \([0-9]*\).*/\1/' | awk '{ s += $1 } END { print s }')
  host=$(section "$tmp/j" depths | sed 's/.*"host": \([0-9]*\).*/\1/' | awk '{ s += $1 } END { print s }')
  [ -n "$samples" ] && [ "$lua" = "$samples" ] && [ "$host" = "$samples" ]
  check "$cap: depth histograms count every sample ($samples, $lua, $host)" $?
done
# The flush capture has traces: the check above compared real rows.
"$dump" --format=json "$data/captures/sp_c_jiton_flush_1ms.bin" | grep -q '{"trace": [0-9]*, "start": '
check "traces present in JSON" $?
# -n limits the function rows as in the text
"$dump" --format=json -n 2 "$data/captures/sp_c_fib_jitoff_1ms.bin" > "$tmp/j"
[ "$(section "$tmp/j" top_self | wc -l)" = 2 ] && grep -q '"functions_with_self": 6,' "$tmp/j"
check "-n 2: two rows, the count of all" $?

# 2. memprof: the report's rows equal the text report's (sizes in bytes).
for cap in mp_leak_global_jitoff mp_basic_jitoff mp_traces_flush_jiton; do
  bin=$data/captures/$cap.bin
  "$dump" --format=json "$bin" > "$tmp/j"; check "$cap: json exit status" $?
  "$dump" --report-era=bytes "$bin" > "$tmp/t"
  valid "$tmp/j"; check "$cap: valid JSON" $?
  ! grep -q '"samples":\|"vmstates":\|"top_self":\|"max_lua_depth":' "$tmp/j"
  check "$cap: no sysprof keys" $?
  for sec in ALLOCATIONS REALLOCATIONS DEALLOCATIONS; do
    key=$(echo $sec | tr A-Z a-z)
    # text rows "name: n events<TAB>+a bytes<TAB>-f bytes", each maybe
    # followed by "<TAB>Overrides:" and "<TAB><TAB>name" lines
    awk -v sec="$sec" '
      /^(ALLOCATIONS|REALLOCATIONS|DEALLOCATIONS|HEAP SUMMARY:)$/ { on = ($0 == sec); next }
      !on { next }
      /^\t\t/ { sub(/^\t\t/, ""); ov = ov (ov == "" ? "" : ";") $0; next }
      /: [0-9]+ events\t/ { if (row != "") print row " [" ov "]"; ov = ""
        match($0, /: [0-9]+ events\t/); name = substr($0, 1, RSTART - 1)
        split(substr($0, RSTART + 2), f, /[ \t+-]+/)
        row = f[1] " " f[3] " " f[5] " " name }
      END { if (row != "") print row " [" ov "]" }' "$tmp/t" > "$tmp/want"
    section "$tmp/j" "$key" |
      sed 's/^ *{"location": "\(.*\)", "events": \([0-9]*\), "allocated": \([0-9]*\), "freed": \([0-9]*\)\(, "overrides": \[\(.*\)\]\)\{0,1\}},\{0,1\}$/\2 \3 \4 \1 [\6]/' |
      sed 's/\[\(.*\)\]$/[\1]/; s/", "/;/g; s/\["/[/; s/"\]$/]/' > "$tmp/got"
    [ -s "$tmp/want" ] && cmp -s "$tmp/want" "$tmp/got"
    check "$cap: $key rows and overrides equal the text report's" $?
  done
  sed -n '/^HEAP SUMMARY:$/,/^$/p' "$tmp/t" | sed '1d;/^$/d' |
    sed 's/^\(.*\) holds \([0-9]*\) bytes: \([0-9]*\) allocs, \([0-9]*\) frees$/\2 \3 \4 \1/' > "$tmp/want"
  section "$tmp/j" heap_summary |
    sed 's/^ *{"location": "\(.*\)", "holds": \([0-9]*\), "allocs": \([0-9]*\), "frees": \([0-9]*\)},\{0,1\}$/\2 \3 \4 \1/' > "$tmp/got"
  [ -s "$tmp/want" ] && cmp -s "$tmp/want" "$tmp/got"
  check "$cap: heap_summary rows equal the text report's" $?
done
"$dump" --format=json --leak-only "$data/captures/mp_leak_global_jitoff.bin" > "$tmp/j"
grep -q '"heap_summary": \[' "$tmp/j" && ! grep -q '"allocations":' "$tmp/j"
check "--leak-only: the heap summary only" $?

# 3. --events --format=json: JSON Lines, one object per event, the same
# events as the text listing, nothing else.
for cap in sp_c_fib_jitoff_1ms mp_basic_jitoff; do
  bin=$data/captures/$cap.bin
  "$dump" --events --format=json "$bin" > "$tmp/jl"; check "$cap: events json exit status" $?
  "$dump" --events "$bin" > "$tmp/tl"
  valid_lines "$tmp/jl"; check "$cap: every line is a JSON object" $?
  ! grep -qv '^{"offset": [0-9]*, "event": .*}$' "$tmp/jl"; check "$cap: one object per line" $?
  awk '{ print $1 }' "$tmp/tl" > "$tmp/want"
  sed 's/^{"offset": \([0-9]*\),.*/\1/' "$tmp/jl" > "$tmp/got"
  cmp -s "$tmp/want" "$tmp/got"; check "$cap: the text listing's events, in order" $?
done
"$dump" --events --format=json "$data/captures/sp_c_fib_jitoff_1ms.bin" | grep -c '"event": "sample"' > "$tmp/n"
[ "$(cat "$tmp/n")" = 150 ]; check "150 sample lines" $?
"$dump" --events --format=json "$data/x1/x1_rich.bin" |
  grep -q '"event": "sample", "vmstate": "TRACE", "time_ns": [0-9]*, "coro": [0-9]*, "lua_incomplete": false, "host_incomplete": false, "trace": "TRACE \[[0-9]*\] @app.lua:[0-9]*", "lua": \["@app.lua:0"'
check "x1 trace sample: time, coroutine, trace and its callers" $?

echo "$pass passed, $failed failed"
[ "$failed" = 0 ]
