#!/usr/bin/env bash
# The same file imported by several processes at once into one database:
# exactly one profile arrives, with the hash sha256sum(1) gives, and every
# other process skips it; then several --replace at once: still one
# profile, under the same id, with its rows once.  The hash runs beside
# the import, so the already-imported check is taken when it is ready:
# this holds it to the semantics of hashing first.  5 trials of 3 processes.
#   test_db_concurrent_dup.sh LJPDB TESTDATA
set -uo pipefail
db=$1 data=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fib=$data/captures/sp_c_fib_jitoff_1ms.bin
other=$data/captures/mp_basic_jitoff.bin
sha=$(sha256sum < "$fib" | cut -d' ' -f1)
fail=0
bad() { echo "FAIL: trial $trial: $*"; fail=1; }
q() { "$db" query "$out" "$1" | tail -n 1; }
for trial in 1 2 3 4 5; do
  out=$tmp/t$trial.db
  # An existing database, so every process races for the same file only.
  "$db" import "$out" "$other" || bad "first import failed"
  pids=()
  for i in 0 1 2; do
    # The third reads standard input: a copy, hashed the same.
    if [ $i = 2 ]; then
      "$db" import "$out" - < "$fib" > /dev/null 2> "$tmp/err.$i" &
    else
      "$db" import "$out" "$fib" > /dev/null 2> "$tmp/err.$i" &
    fi
    pids+=($!)
  done
  for i in 0 1 2; do
    wait "${pids[$i]}" || bad "import $i failed: $(cat "$tmp/err.$i")"
  done
  skipped=$(cat "$tmp"/err.* | grep -c 'already imported as profile 2 ')
  [ "$skipped" = 2 ] || bad "$skipped of 2 skipped: $(cat "$tmp"/err.*)"
  [ "$(q "SELECT count(*) FROM profiles")" = 2 ] || bad "not 2 profiles"
  [ "$(q "SELECT id FROM profiles WHERE sha256 = '$sha'")" = 2 ] ||
    bad "no profile 2 with sha256 $sha"
  rows=$(q "SELECT (SELECT count(*) FROM samples) || ' ' ||
                   (SELECT count(*) FROM call_paths) || ' ' ||
                   (SELECT count(*) FROM symbols)")
  [ "$(q "SELECT count(*) FROM samples WHERE profile_id = 2")" = 150 ] ||
    bad "profile 2 has not 150 samples"
  pids=()
  for i in 0 1 2; do
    "$db" import --replace --label r$i "$out" "$fib" > /dev/null 2> "$tmp/err.$i" &
    pids+=($!)
  done
  for i in 0 1 2; do
    wait "${pids[$i]}" || bad "replace $i failed: $(cat "$tmp/err.$i")"
  done
  [ "$(q "SELECT count(*) || ' ' || group_concat(id) FROM (SELECT id FROM profiles ORDER BY id)")" = "2 1,2" ] ||
    bad "profiles after --replace: $(q "SELECT group_concat(id) FROM profiles")"
  [ "$(q "SELECT label FROM profiles WHERE id = 2")" != sp_c_fib_jitoff_1ms ] ||
    bad "profile 2 was not replaced"
  [ "$(q "SELECT (SELECT count(*) FROM samples) || ' ' ||
                 (SELECT count(*) FROM call_paths) || ' ' ||
                 (SELECT count(*) FROM symbols)")" = "$rows" ] ||
    bad "rows after --replace differ from $rows"
done
[ "$fail" = 0 ] && echo "5 trials passed"
[ "$fail" = 0 ]
