#!/usr/bin/env bash
# Command-line behaviour of ljpfold and ljpdump: exit codes, diagnostics,
# stdin, filters, output errors.  Usage: test_cli.sh LJPFOLD LJPDUMP TESTDATA
set -u
fold=$1 dump=$2 data=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
check() { # name, condition already evaluated as $?
  if [ "$2" -eq 0 ]; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: $1"; fi
}
sp=$data/captures/sp_c_sandwich_jitoff_1ms.bin
mp=$data/captures/mp_basic_jitoff.bin

"$fold" --help >/dev/null; check "--help exits 0" $?
"$fold" --version | grep -q '^ljpfold (ljp) '; check "--version" $?
"$fold" --bogus "$sp" >/dev/null 2>"$tmp/err"; [ $? -eq 2 ] && grep -q "Try 'ljpfold --help'" "$tmp/err"; check "unknown option exits 2" $?
"$fold" >/dev/null 2>&1; [ $? -eq 2 ]; check "no input exits 2" $?
"$fold" --stack=sideways "$sp" >/dev/null 2>&1; [ $? -eq 2 ]; check "bad --stack exits 2" $?
# --stack takes what ljpsvg's takes: reference merges as --format=tarantool.
"$fold" --stack=reference "$sp" | awk '{ print $NF }' | sort -n > "$tmp/ref"
"$fold" --format=tarantool "$sp" | awk '{ print $NF }' | sort -n | cmp -s - "$tmp/ref" && [ "$(wc -l < "$tmp/ref")" -gt 1 ]; check "--stack=reference" $?
"$fold" --weight=heavy "$mp" >/dev/null 2>&1; [ $? -eq 2 ]; check "bad --weight exits 2" $?
"$fold" --flavor=bogus "$sp" >/dev/null 2>&1; [ $? -eq 2 ]; check "bad --flavor exits 2" $?
"$dump" --flavor=bogus "$sp" >/dev/null 2>&1; [ $? -eq 2 ]; check "ljpdump bad --flavor exits 2" $?
"$fold" --flavor=luajit "$sp" >/dev/null; check "--flavor=luajit" $?

"$fold" "$sp" > "$tmp/full"; check "fold exits 0" $?
"$fold" - < "$sp" > "$tmp/stdin"; cmp -s "$tmp/full" "$tmp/stdin"; check "stdin gives the same output" $?
cat "$sp" | "$fold" - > "$tmp/pipe"; cmp -s "$tmp/full" "$tmp/pipe"; check "pipe gives the same output" $?
"$fold" "$sp" > "$tmp/again"; cmp -s "$tmp/full" "$tmp/again"; check "deterministic output" $?
! grep -q ';$\|;;\| $' "$tmp/full"; check "no trailing or empty frames" $?
LC_ALL=C sort -c "$tmp/full"; check "lines sorted" $?
! grep -q ':0x' "$tmp/full"; check "no addresses by default" $?
"$fold" --addresses "$sp" | grep -q 'lua_pcall:0x'; check "--addresses" $?

# a truncated file: partial output, a message with the offset, exit 1
size=$(stat -c %s "$sp")
head -c $((size - 500)) "$sp" > "$tmp/cut.bin"
"$fold" "$tmp/cut.bin" > "$tmp/cut.out" 2> "$tmp/cut.err"; rc=$?
[ $rc -eq 1 ]; check "truncated input exits 1" $?
grep -q "^ljpfold: $tmp/cut.bin: offset [0-9]*: truncated" "$tmp/cut.err"; check "truncation message names file and offset" $?
[ -s "$tmp/cut.out" ]; check "partial output kept" $?
"$fold" "$tmp/nonexistent.bin" >/dev/null 2>"$tmp/err"; [ $? -eq 1 ] && grep -q "nonexistent.bin: cannot open" "$tmp/err"; check "missing file" $?
printf 'hello world' > "$tmp/text.bin"
"$fold" "$tmp/text.bin" >/dev/null 2>"$tmp/err"; [ $? -eq 1 ] && grep -q 'offset 0: not a LuaJIT profile' "$tmp/err"; check "not a profile" $?
# a profile whose start was zeroed (a profiler restarted on the same path)
{ head -c 4096 /dev/zero; tail -c 2000 "$sp"; } > "$tmp/holed.bin"
"$fold" "$tmp/holed.bin" >/dev/null 2>"$tmp/err"; [ $? -eq 1 ] && grep -q 'offset 0: not a LuaJIT profile: it starts with zero bytes' "$tmp/err"; check "zero-filled start" $?
cat "$tmp/holed.bin" | "$fold" - >/dev/null 2>"$tmp/err"; [ $? -eq 1 ] && grep -q '^ljpfold: <stdin>: offset 0: not a LuaJIT profile: it starts with zero bytes' "$tmp/err"; check "zero-filled start from a pipe" $?
# unsupported version: patch the ljp version byte
off=$(grep -obUaP 'ljp\x02' "$sp" | head -1 | cut -d: -f1)
cp "$sp" "$tmp/v3.bin"; printf '\x03' | dd of="$tmp/v3.bin" bs=1 seek=$((off + 3)) conv=notrunc 2>/dev/null
"$fold" "$tmp/v3.bin" >/dev/null 2>"$tmp/err"; [ $? -eq 1 ] && grep -q 'unsupported ljp version 3; this build reads 1–2' "$tmp/err"; check "unsupported version message" $?

# golden folded output of every bundled capture (regenerate deliberately with
#   for f in testdata/captures/*.bin testdata/captures/old/*.bin; do
#     ljpfold "$f" > testdata/golden/$(basename "${f%.bin}").folded; done)
for g in "$data"/golden/*.folded; do
  name=$(basename "${g%.folded}")
  src=$data/captures/$name.bin
  [ -f "$src" ] || src=$data/captures/old/$name.bin
  "$fold" "$src" | cmp -s - "$g"; check "golden $name" $?
done

# filters
"$fold" --include='string\.gsub' "$sp" > "$tmp/inc"; [ -s "$tmp/inc" ] && ! grep -v 'string\.gsub' "$tmp/inc" | grep -q .; check "--include" $?
"$fold" --exclude='string\.gsub' "$sp" > "$tmp/exc"; ! grep -q 'string\.gsub' "$tmp/exc"; check "--exclude" $?
"$fold" --base=lua_pcall "$sp" > "$tmp/base"; [ -s "$tmp/base" ] && ! grep -v '^lua_pcall' "$tmp/base" | grep -q .; check "--base" $?
"$fold" --min-count=5 "$sp" > "$tmp/min"; ! awk '{ if ($NF < 5) exit 1 }' "$tmp/min" || true
awk '{ if ($NF < 5) bad = 1 } END { exit bad }' "$tmp/min"; check "--min-count" $?
"$fold" --include='(' "$sp" >/dev/null 2>&1; [ $? -eq 2 ]; check "bad regex exits 2" $?

# several inputs merge
"$fold" "$sp" "$sp" > "$tmp/two"
sum1=$(awk '{ s += $NF } END { print s }' "$tmp/full"); sum2=$(awk '{ s += $NF } END { print s }' "$tmp/two")
[ "$sum2" -eq $((2 * sum1)) ] && [ "$(wc -l < "$tmp/two")" -eq "$(wc -l < "$tmp/full")" ]; check "two inputs merge" $?

# memprof weights
"$fold" --weight=live "$mp" > "$tmp/live"; check "memprof live" $?
"$fold" --weight=events "$mp" > "$tmp/events"
[ "$(awk '{ s += $NF } END { print s }' "$tmp/events")" -eq 11072 ]; check "memprof events = alloc + realloc" $?

# output errors are reported, never silent
if [ -w /dev/full ]; then
  "$fold" "$sp" > /dev/full 2>"$tmp/err"; [ $? -eq 1 ] && grep -q 'write error' "$tmp/err"; check "/dev/full" $?
fi
# more output than a pipe buffer holds, to a reader that reads 10 bytes
"$fold" --addresses "$data/captures/sp_c_deeprec_jitoff_1ms.bin" 2>"$tmp/err" | head -c 10 >/dev/null
[ "${PIPESTATUS[0]}" -eq 0 ] && [ ! -s "$tmp/err" ]; check "closed pipe: a quiet end, exit 0" $?

# ljpdump
"$dump" --format=json "$sp" > "$tmp/json"; check "ljpdump json exits 0" $?
for key in kind versions complete samples vmstates symbols symbol_events report top_self top_total traces depths; do
  grep -q "\"$key\":" "$tmp/json"; check "json key $key" $?
done
# a sysprof profile's JSON has no memprof keys
! grep -q '"events":\|"sources":\|"heap_summary":' "$tmp/json"; check "sysprof json: no memprof keys" $?
grep -q '"versions": {"ljs": 3, "ljp": 2}' "$tmp/json"; check "json versions" $?
"$dump" --format=json "$tmp/cut.bin" > "$tmp/cutjson" 2>/dev/null; [ $? -eq 1 ] && grep -q '"complete": false' "$tmp/cutjson"; check "json of a cut file" $?
"$dump" "$mp" | head -1 | grep -q '^ALLOCATIONS$'; check "memprof report by default" $?
"$dump" --events "$sp" | grep -c ' sample ' >/dev/null; check "events listing" $?
[ "$("$dump" --events "$sp" | grep -c '^[0-9]* *sample ')" -eq 189 ]; check "every sample listed" $?
"$dump" -s "$sp" | grep -q '^samples: *189$'; check "summary" $?

# ljp x1 (testdata/x1/x1_rich.bin, written by the encoder; tests/core/test_x1.c
# keeps it current).  Golden outputs, regenerated deliberately with
#   cd testdata/x1 && ljpfold x1_rich.bin > x1_rich.folded &&
#   ljpdump --summary x1_rich.bin > x1_rich.summary.txt &&
#   ljpdump -e x1_rich.bin > x1_rich.events.txt &&
#   ljpdump x1_rich.bin > x1_rich.report.txt &&
#   ljpdump --format=json x1_rich.bin > x1_rich.json
x1=$data/x1
(cd "$x1" && "$fold" x1_rich.bin) | cmp -s - "$x1/x1_rich.folded"; check "x1 golden fold" $?
(cd "$x1" && "$dump" --summary x1_rich.bin) | cmp -s - "$x1/x1_rich.summary.txt"; check "x1 golden summary" $?
(cd "$x1" && "$dump" -e x1_rich.bin) | cmp -s - "$x1/x1_rich.events.txt"; check "x1 golden events" $?
(cd "$x1" && "$dump" x1_rich.bin) | cmp -s - "$x1/x1_rich.report.txt"; check "x1 golden report" $?
(cd "$x1" && "$dump" --format=json x1_rich.bin) | cmp -s - "$x1/x1_rich.json"; check "x1 golden json" $?
# facts the goldens must show, so a wrong regeneration cannot pass unseen
grep -q '^versions:   ljs 3, ljp x1$' "$x1/x1_rich.summary.txt"; check "x1 version in the summary" $?
grep -q '^interval:   1.000000ms$' "$x1/x1_rich.summary.txt"; check "x1 interval" $?
grep -q '^timer:      process-cpu$' "$x1/x1_rich.summary.txt"; check "x1 timer" $?
grep -q '^incomplete: 1 Lua, 1 host stacks$' "$x1/x1_rich.summary.txt"; check "x1 incomplete counts" $?
grep -q 'sample    TRACE \[1\] @app.lua:12 t=4.027514ms coro=1 lua=\[@app.lua:0;@app.lua:10\] host=\[' "$x1/x1_rich.events.txt"; check "x1 trace sample with its stacks" $?
! grep -q 'TRACE.*TRACE' "$x1/x1_rich.events.txt"; check "x1 events name a trace sample once" $?
grep -q 'sample    TRACE \[2\] .* coro=2 ' "$x1/x1_rich.events.txt"; check "x1 coroutine id" $?
grep -q '^@app.lua:0;@app.lua:10;TRACE \[1\] @app.lua:12 4$' <("$fold" --stack=lua "$x1/x1_rich.bin"); check "x1 trace folds on its callers" $?
grep -q '"x1": {"timer": "process-cpu", "interval_ns": 1000000, "time_ns": 15151495, "lua_incomplete": 1, "host_incomplete": 1, "max_coro": 2}' "$x1/x1_rich.json"; check "x1 json" $?
# a cut x1 file: what came before, then the offset
head -c 300 "$x1/x1_rich.bin" > "$tmp/x1cut.bin"
"$dump" -e "$tmp/x1cut.bin" > "$tmp/x1cut.out" 2> "$tmp/x1cut.err"; [ $? -eq 1 ]; check "cut x1 exits 1" $?
grep -q "offset [0-9]*: truncated" "$tmp/x1cut.err"; check "cut x1 names the offset" $?
[ "$(grep -c ' sample ' "$tmp/x1cut.out")" -eq 4 ]; check "cut x1 keeps the samples before the cut" $?
# the old versions' outputs do not change: no x1 lines for ljp 2
! "$dump" -s "$sp" | grep -q '^timer:\|^interval:\|^incomplete:'; check "no x1 lines for ljp 2" $?
! "$dump" "$sp" | grep -q 'INCOMPLETE STACKS'; check "no incomplete table for ljp 2" $?

# ljp 2 host stacks cut by the backtracer (no root): counted, and drawn
# under their Lua frames
deep=$data/captures/sp_c_deeprec_jitoff_1ms.bin
"$dump" "$deep" | grep -q '^host  *23  *23.71%$'; check "ljp 2 incomplete host stacks counted" $?
! "$fold" "$deep" | grep -q '^lj_cf_table_sort'; check "no host frame at the root of a cut stack" $?
"$fold" --stack=host "$deep" | grep -q '^\[host stack incomplete\];lj_cf_table_sort;'; check "host view: the mark at the root" $?
# what a cut file means, beside the offset
"$dump" "$tmp/x1cut.bin" >/dev/null 2>"$tmp/x1cut.err"
grep -q "the file ends inside a sample: was the producer killed?" "$tmp/x1cut.err"; check "truncation says what it means" $?
# --traces: a trace under its function by default, folded into it, or alone
jit=$data/captures/sp_c_jiton_flush_1ms.bin
"$fold" "$jit" | grep -q '^@sp_c_jiton_flush_1ms.lua:8;TRACE \[1\] @sp_c_jiton_flush_1ms.lua:10 [0-9]*$'; check "--traces=under by default" $?
! "$fold" --traces=function "$jit" | grep -q 'TRACE'; check "--traces=function leaves no trace" $?
"$fold" --traces=trace "$jit" | grep -q '^TRACE \[1\] @sp_c_jiton_flush_1ms.lua:10 [0-9]*$'; check "--traces=trace" $?
[ "$("$fold" --traces=function "$jit" | awk '{s += $NF} END {print s}')" = "$("$fold" "$jit" | awk '{s += $NF} END {print s}')" ]; check "--traces keeps every sample" $?
"$fold" --traces=sideways "$jit" >/dev/null 2>&1; [ $? -eq 2 ]; check "bad --traces exits 2" $?
"$dump" --traces=function "$jit" | grep -q 'TRACE'; [ $? -eq 0 ]; check "ljpdump --traces=function keeps the TRACES table" $?
# function names from sources: relative chunks under --source-dir, none
# without the source or with --no-source
"$fold" --source-dir "$data/captures" "$jit" | grep -q '^phase_a @sp_c_jiton_flush_1ms.lua:8;TRACE'; check "--source-dir names functions" $?
(cd "$data/captures" && "$fold" sp_c_jiton_flush_1ms.bin) | grep -q '^phase_a @'; check "sources in the current directory" $?
! (cd "$data/captures" && "$fold" --no-source sp_c_jiton_flush_1ms.bin) | grep -q 'phase_a'; check "--no-source" $?
! "$fold" --source-dir "$tmp" "$jit" | grep -q 'phase_a'; check "no source, no name" $?
"$dump" --source-dir "$data/captures" "$jit" | grep -q '  phase_a @sp_c_jiton_flush_1ms.lua:8$'; check "ljpdump report names functions" $?

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
