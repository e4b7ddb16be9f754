#!/usr/bin/env bash
# ljpdb stores the function name read from the Lua source beside the
# location (symbols.function); ljpdb top shows it as the other tools do
# ("fib @chunk:6"); --no-source stores none.  The names are ljpfold's.
#   test_db_naming.sh LJPDB LJPFOLD TESTDATA
set -uo pipefail
db=$1 fold=$2 data=$3
caps=$data/captures
fib=$caps/sp_c_fib_jitoff_1ms.bin
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1
pass=0 failed=0
check() { if [ "$2" = 0 ]; then pass=$((pass + 1)); else failed=$((failed + 1)); echo "FAIL: $1"; fi; }

"$db" import --source-dir "$caps" src.db "$fib" 2> err; check "import --source-dir: $(cat err)" $?
q() { "$db" query "$1" "$2"; }
[ "$(q src.db "SELECT function FROM symbols WHERE name = '@sp_c_fib_jitoff_1ms.lua:6'")" = fib ]
check "fib stored beside @sp_c_fib_jitoff_1ms.lua:6" $?
[ "$(q src.db "SELECT count(*) FROM symbols WHERE kind <> 'lua' AND kind <> 'trace' AND function IS NOT NULL")" = 0 ]
check "only Lua functions and traces have names" $?
# Every named Lua function is named as ljpfold names it.
q src.db "SELECT function || ' ' || name FROM symbols WHERE function IS NOT NULL AND kind = 'lua'" | sort > got
"$fold" --source-dir="$caps" "$fib" | sed 's/ [0-9]*$//' | tr ';' '\n' | grep ' @' | sort -u > want
[ -s want ] && cmp -s got want; check "the names of ljpfold: $(diff got want | head -3 | tr '\n' ' ')" $?
"$db" top src.db -n 30 | grep -q ' fib @sp_c_fib_jitoff_1ms.lua:6$'; check "top shows 'fib @chunk:6'" $?

"$db" import --no-source --source-dir "$caps" nosrc.db "$fib" 2> err; check "import --no-source" $?
[ "$(q nosrc.db "SELECT count(*) FROM symbols WHERE function IS NOT NULL")" = 0 ]
check "--no-source stores no names" $?
"$db" top nosrc.db -n 30 | grep -q ' @sp_c_fib_jitoff_1ms.lua:6$'; check "top without names" $?
"$db" import --traces=function x.db "$fib" > /dev/null 2>&1
[ $? = 2 ]; check "import has no --traces (the views roll traces up)" $?

echo "$pass passed, $failed failed"
[ "$failed" = 0 ]
