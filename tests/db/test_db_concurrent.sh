#!/usr/bin/env bash
# Several ljpdb imports started at once into a database file that does not
# exist yet: every one succeeds and every profile arrives (the schema is
# created once, whoever comes first).  5 trials of 4 processes.
#   test_db_concurrent.sh LJPDB TESTDATA
set -uo pipefail
db=$1 data=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
files=(sp_c_fib_jitoff_1ms.bin sp_c_sandwich_jitoff_1ms.bin
       mp_leak_global_jitoff.bin mp_basic_jitoff.bin)
pass=0 failed=0
for trial in 1 2 3 4 5; do
  out=$tmp/t$trial.db
  pids=()
  for i in 0 1 2 3; do
    "$db" import "$out" "$data/captures/${files[$i]}" > /dev/null 2> "$tmp/err$trial.$i" &
    pids+=($!)
  done
  bad=0
  for i in 0 1 2 3; do
    wait "${pids[$i]}" || { bad=1; echo "trial $trial: import of ${files[$i]} failed: $(cat "$tmp/err$trial.$i")"; }
  done
  n=$("$db" query "$out" "SELECT count(*) FROM profiles" | tail -n 1)
  if [ "$bad" = 0 ] && [ "$n" = 4 ]; then
    pass=$((pass + 1))
  else
    failed=$((failed + 1))
    echo "FAIL: trial $trial: $n of 4 profiles"
  fi
done
echo "$pass passed, $failed failed"
[ "$failed" = 0 ]
