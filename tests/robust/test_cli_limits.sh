#!/usr/bin/env bash
# Resource limits of the tools on hostile files: the reader limits stop the
# input with "tool: file: offset N: ... (the limit)" and exit 1, the options
# move the limits, --max-output caps what is written, bad values exit 2.
# Usage: test_cli_limits.sh GEN_HOSTILE LJPFOLD LJPDUMP LJPSVG LJPDB TESTDATA
set -u
gen=$1 fold=$2 dump=$3 svg=$4 db=$5 data=$6
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
check() { # name, status (0 = pass)
  if [ "$2" -eq 0 ]; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: $1"; fi
}
"$gen" "$tmp" || { echo "FAIL: gen_hostile"; exit 1; }
h=$tmp/huge-string.bin dl=$tmp/deep-lua.bin dh=$tmp/deep-host.bin
ms=$tmp/many-symbols.bin amp=$tmp/amplify.bin

"$fold" "$h" >"$tmp/out" 2>"$tmp/err"; rc=$?
[ $rc -eq 1 ] && [ "$(cat "$tmp/err")" = "ljpfold: $h: offset 10: chunk name of a Lua symbol claims 1152921504606846976 bytes, over the limit of 67108864" ]
check "2^60-byte string: exit 1, file, offset, what" $?
"$fold" --max-string=1K "$h" >/dev/null 2>"$tmp/err"; [ $? -eq 1 ] && grep -q 'over the limit of 1024$' "$tmp/err"
check "--max-string=1K" $?

"$fold" "$dl" >/dev/null 2>"$tmp/err"; rc=$?
[ $rc -eq 1 ] && [ "$(cat "$tmp/err")" = "ljpfold: $dl: offset 2097168: Lua stack deeper than 1048576 frames (the limit)" ]
check "10M-frame Lua stack stops at the default limit" $?
"$fold" --max-frames=1000 "$dl" >/dev/null 2>"$tmp/err"; [ $? -eq 1 ] && grep -q ': offset 2016: Lua stack deeper than 1000 frames (the limit)$' "$tmp/err"
check "ljpfold --max-frames" $?
"$dump" --max-frames=1000 "$dh" >/dev/null 2>"$tmp/err"; [ $? -eq 1 ] && grep -q "^ljpdump: $dh: offset 1016: host stack deeper than 1000 frames (the limit)$" "$tmp/err"
check "ljpdump --max-frames, host stack" $?
"$svg" --max-frames=1000 "$dl" >/dev/null 2>"$tmp/err"; [ $? -eq 1 ] && grep -q "^ljpsvg: $dl: offset 2016: Lua stack deeper than 1000 frames (the limit)$" "$tmp/err"
check "ljpsvg --max-frames" $?
"$db" import --max-frames=1000 "$tmp/x.db" "$dl" >/dev/null 2>"$tmp/err"; [ $? -eq 1 ] && grep -q "offset 2016: Lua stack deeper than 1000 frames (the limit)" "$tmp/err"
check "ljpdb import --max-frames" $?
"$dump" --summary --max-symbols=10 "$ms" >/dev/null 2>"$tmp/err"; [ $? -eq 1 ] && grep -q ": offset 137: more than 10 symbol definitions (the limit)$" "$tmp/err"
check "--max-symbols=10" $?
"$dump" --summary --max-symbols=100 "$ms" >/dev/null 2>&1; check "--max-symbols=100 reads all 100" $?

# output: one 120 MB folded line from a 60 KB file
"$fold" --max-output=1M "$amp" >"$tmp/out" 2>"$tmp/err"; rc=$?
[ $rc -eq 1 ] && [ ! -s "$tmp/out" ] && [ "$(cat "$tmp/err")" = "ljpfold: output would be 120002026 bytes, over the --max-output limit of 1048576 bytes" ]
check "ljpfold refuses output over --max-output before writing" $?
"$dump" --events --max-output=100K "$amp" >"$tmp/out" 2>"$tmp/err"; rc=$?
[ $rc -eq 1 ] && [ "$(stat -c %s "$tmp/out")" -eq 102400 ] && grep -q '^ljpdump: output stopped at the --max-output limit of 102400 bytes$' "$tmp/err"
check "ljpdump output stops at exactly --max-output" $?
"$db" import "$tmp/ok.db" "$data/captures/sp_c_fib_jitoff_1ms.bin" >/dev/null 2>&1
"$db" query --max-output=10 "$tmp/ok.db" "SELECT 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa'" >"$tmp/out" 2>"$tmp/err"; rc=$?
[ $rc -eq 1 ] && [ "$(stat -c %s "$tmp/out")" -eq 10 ] && grep -q 'max-output' "$tmp/err"
check "ljpdb query --max-output" $?
"$fold" --max-output=0 "$data/captures/sp_c_fib_jitoff_1ms.bin" >/dev/null; check "--max-output=0 lifts the cap" $?

# bad values are usage errors
for tool in "$fold" "$dump" "$svg"; do
  for opt in --max-frames=0 --max-frames=abc --max-string=12Q --max-symbols=-1; do
    "$tool" "$opt" "$h" >/dev/null 2>"$tmp/err"; [ $? -eq 2 ] && grep -q 'takes a positive size' "$tmp/err"
    check "$(basename "$tool") $opt exits 2" $?
  done
done
"$fold" --max-output=1X "$h" >/dev/null 2>&1; [ $? -eq 2 ]; check "--max-output=1X exits 2" $?
"$db" import --max-string=0 "$tmp/y.db" "$h" >/dev/null 2>&1; [ $? -eq 2 ]; check "ljpdb import --max-string=0 exits 2" $?
"$fold" --help | grep -q -- '--max-frames=N'; check "ljpfold --help lists the limits" $?
"$dump" --help | grep -q -- '--max-output=N'; check "ljpdump --help lists the limits" $?
"$svg" --help | grep -q -- '--max-symbols=N'; check "ljpsvg --help lists the limits" $?

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
