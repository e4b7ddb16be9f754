#!/usr/bin/env bash
# ljpsvg's naming options, shared with ljpfold: --traces=under|function|
# trace, --source-dir DIR, --no-source; --diff folds traces into their
# functions unless told otherwise.  ljpfold's folded lines are the
# reference: ljpsvg must draw the same frame names.
#   test_naming.sh LJPSVG LJPFOLD TESTDATA
set -uo pipefail
svg=$1 fold=$2 data=$3
caps=$data/captures
jit=$caps/sp_c_jiton_flush_1ms.bin
fib=$caps/sp_c_fib_jitoff_1ms.bin
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1   # no Lua source in the current folder
pass=0 failed=0
check() { if [ "$2" = 0 ]; then pass=$((pass + 1)); else failed=$((failed + 1)); echo "FAIL: $1"; fi; }
# The frame names a graph draws (every frame of the small captures is
# kept with --minwidth=0).
names() { grep -o '<title>[^<]*' "$1" | sed 's/^<title>//; s/ ([0-9][^)]*)$//' | grep -vx all | sort -u; }
fnames() { sed 's/ [0-9]*$//' "$1" | tr ';' '\n' | sort -u; }

# 1. Function names from the sources, as ljpfold gives them.
"$svg" --minwidth=0 --source-dir="$caps" "$fib" > src.svg; check "svg --source-dir" $?
grep -q '>fib @sp_c_fib_jitoff_1ms.lua:6<\|<title>fib @sp_c_fib_jitoff_1ms.lua:6 ' src.svg
check "fib named from its source" $?
"$fold" --source-dir="$caps" "$fib" > src.folded
names src.svg > got; fnames src.folded > want
comm -13 got want > missing
[ ! -s missing ]; check "every ljpfold frame is drawn: $(head -3 missing | tr '\n' ' ')" $?
"$svg" --minwidth=0 --no-source --source-dir="$caps" "$fib" > nosrc.svg
! grep -q 'fib @' nosrc.svg && grep -q '@sp_c_fib_jitoff_1ms.lua:6' nosrc.svg
check "--no-source keeps @chunk:line" $?
# without --source-dir the chunk is not found from here: names stay
"$svg" --minwidth=0 "$fib" | cmp -s - nosrc.svg; check "sources not found: same as --no-source" $?

# 2. --traces.
"$svg" --minwidth=0 --source-dir="$caps" "$jit" > under.svg
grep -q '<title>phase_a @sp_c_jiton_flush_1ms.lua:8 ' under.svg && grep -q '<title>TRACE \[' under.svg
check "--traces=under (default): traces on their functions" $?
"$fold" --source-dir="$caps" "$jit" > under.folded
names under.svg > got; fnames under.folded > want
cmp -s got want; check "under: the frames of ljpfold" $?
"$svg" --minwidth=0 --traces=function "$jit" > function.svg
! grep -q 'TRACE \[' function.svg; check "--traces=function: no trace frame" $?
"$fold" --traces=function "$jit" > function.folded
names function.svg > got; fnames function.folded > want
cmp -s got want; check "function: the frames of ljpfold" $?
"$svg" --minwidth=0 --traces=trace "$jit" > trace.svg
"$fold" --traces=trace "$jit" > trace.folded
names trace.svg > got; fnames trace.folded > want
cmp -s got want && grep -q 'TRACE \[' trace.svg; check "trace: the frames of ljpfold" $?
"$svg" --traces=sideways "$jit" > /dev/null 2> err
[ $? = 2 ] && grep -q sideways err; check "--traces=sideways is a usage error" $?

# 3. --diff folds traces into functions unless --traces is given: two
# runs of the same code differ in trace numbers, not in functions.
"$svg" --diff "$jit" "$jit" > diff.svg
! grep -q 'TRACE \[' diff.svg; check "--diff: traces folded by default" $?
"$svg" --diff --traces=under "$jit" "$jit" > diffu.svg
grep -q 'TRACE \[' diffu.svg; check "--diff --traces=under keeps them" $?

echo "$pass passed, $failed failed"
[ "$failed" = 0 ]
