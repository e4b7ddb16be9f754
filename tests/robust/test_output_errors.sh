#!/usr/bin/env bash
# Output failures of ljpsvg and ljpdb (ljpfold and ljpdump: tests/fold):
# a full disk and a closed pipe give a message and exit 1, never a crash,
# a hang or a silent success.  Usage: test_output_errors.sh LJPSVG LJPDB TESTDATA
set -u
svg=$1 db=$2 data=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
check() {
  if [ "$2" -eq 0 ]; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: $1"; fi
}
sp=$data/captures/sp_c_deeprec_jitoff_1ms.bin

if [ -w /dev/full ]; then
  "$svg" "$sp" >/dev/full 2>"$tmp/err"; rc=$?
  [ $rc -eq 1 ] && grep -q '^ljpsvg: stdout: write failed' "$tmp/err"; check "ljpsvg > /dev/full" $?
  "$svg" -o /dev/full "$sp" 2>"$tmp/err"; rc=$?
  [ $rc -eq 1 ] && grep -q '^ljpsvg: /dev/full: write failed' "$tmp/err"; check "ljpsvg -o /dev/full" $?
fi
# a reader that takes 10 bytes and goes away: the pipe closes under us
"$svg" "$sp" 2>"$tmp/err" | head -c 10 >/dev/null
[ "${PIPESTATUS[0]}" -eq 0 ] && [ ! -s "$tmp/err" ]; check "ljpsvg | head -c 10: a quiet end" $?
"$svg" -o "$tmp/nodir/x.svg" "$sp" 2>"$tmp/err"; [ $? -eq 1 ] && grep -q "^ljpsvg: $tmp/nodir/x.svg: No such file or directory" "$tmp/err"
check "ljpsvg -o into a missing directory" $?

"$db" import "$tmp/p.db" "$sp" >/dev/null 2>&1; check "ljpdb import" $?
q="SELECT * FROM samples_view"
if [ -w /dev/full ]; then
  "$db" query "$tmp/p.db" "$q" >/dev/full 2>"$tmp/err"; rc=$?
  [ $rc -eq 1 ] && grep -q '^ljpdb: write error: No space left on device' "$tmp/err"; check "ljpdb query > /dev/full" $?
  "$db" profiles "$tmp/p.db" >/dev/full 2>"$tmp/err"; rc=$?
  [ $rc -eq 1 ] && grep -q '^ljpdb: write error' "$tmp/err"; check "ljpdb profiles > /dev/full" $?
fi
"$db" query "$tmp/p.db" "$q" 2>"$tmp/err" | head -c 10 >/dev/null
[ "${PIPESTATUS[0]}" -eq 0 ] && [ ! -s "$tmp/err" ]; check "ljpdb query | head -c 10: a quiet end" $?
# the database file cannot be written: a clean error, nothing half-made
chmod 555 "$tmp" 2>/dev/null
if [ "$(id -u)" != 0 ]; then
  "$db" import "$tmp/ro.db" "$sp" >/dev/null 2>"$tmp/err2" ; [ $? -eq 1 ]; check "ljpdb import into a read-only directory" $?
fi
chmod 755 "$tmp"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
