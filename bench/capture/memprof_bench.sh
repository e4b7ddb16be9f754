#!/bin/sh
# Paired runs of an allocation-heavy payload (memprof_churn.lua: table and
# string churn) without and with the memory profiler (luajit -l
# ljp.automem), alternating so that both see the same machine load.
# Prints each pair's CPU seconds (user+sys) and ratio, then the median
# ratio, the ratio of the two sides' fastest runs (the least disturbed
# by other load on the machine) and the profile's size.
#   memprof_bench.sh LUAJIT LUA_CPATH LUA_PATH [PAIRS [N]]
set -eu
luajit=$1 pairs=${4:-5} n=${5:-3000000}
LUA_CPATH="$2;;" LUA_PATH="$3;;"
export LUA_CPATH LUA_PATH
here=$(cd "$(dirname "$0")" && pwd)
dir=$(mktemp -d /tmp/ljp-membench.XXXXXX)
trap 'rm -rf "$dir"' EXIT INT TERM HUP PIPE
cpu() {  # CPU seconds of a command
  /usr/bin/time -f "%U %S" "$@" 2>&1 >/dev/null | tail -n 1 |
    awk '{ printf "%.3f", $1 + $2 }'
}
i=0
: > "$dir/ratios"
while [ $i -lt "$pairs" ]; do
  a=$(cpu "$luajit" "$here/memprof_churn.lua" "$n")
  b=$(cpu env LJP_MEMPROF_PATH="$dir/p.bin" "$luajit" -l ljp.automem \
        "$here/memprof_churn.lua" "$n")
  r=$(echo "$a $b" | awk '{ printf "%.2f", $2 / $1 }')
  echo "pair $i: plain ${a}s memprof ${b}s ratio $r"
  echo "$r" >> "$dir/ratios"
  echo "$a" >> "$dir/plain"
  echo "$b" >> "$dir/memprof"
  i=$((i + 1))
done
echo "median ratio: $(sort -n "$dir/ratios" | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')"
a=$(sort -n "$dir/plain" | head -1) b=$(sort -n "$dir/memprof" | head -1)
echo "fastest: plain ${a}s memprof ${b}s ratio $(echo "$a $b" | awk '{ printf "%.2f", $2 / $1 }')"
echo "profile: $(wc -c < "$dir/p.bin") bytes"
