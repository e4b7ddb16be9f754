#!/usr/bin/env bash
# What a new user hits first: a missing or unreadable input writes no SVG;
# a closed pipe (tool | head) ends ljpsvg, ljpdump and ljpfold quietly;
# a full disk is still an error; --vmstate means the same in ljpfold and
# ljpsvg.
#   test_cli_edges.sh LJPSVG LJPDUMP LJPFOLD TESTDATA
set -uo pipefail
svg=$1 dump=$2 fold=$3 data=$4
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 failed=0
ok() { pass=$((pass + 1)); }
fail() { echo "FAIL: $*"; failed=$((failed + 1)); }
sp=$data/captures/sp_c_fib_jitoff_1ms.bin
mp=$data/captures/mp_traces_flush_jiton.bin

# 1. Missing, unreadable and folder inputs: exit 1, the reason on stderr,
# nothing on stdout, no -o file created, even beside a good input.
noread=$tmp/noread.bin
cp "$sp" "$noread" && chmod 000 "$noread"
for bad in "$tmp/missing.bin" "$tmp"; do
  "$svg" "$bad" > "$tmp/out.svg" 2> "$tmp/err"
  rc=$?
  [ "$rc" = 1 ] && [ ! -s "$tmp/out.svg" ] && grep -q "$bad" "$tmp/err" &&
    ok || fail "ljpsvg $bad: rc=$rc, $(wc -c < "$tmp/out.svg") bytes, $(cat "$tmp/err")"
  "$svg" -o "$tmp/o.svg" "$sp" "$bad" 2> "$tmp/err"
  rc=$?
  [ "$rc" = 1 ] && [ ! -e "$tmp/o.svg" ] && ok ||
    fail "ljpsvg -o o.svg good $bad: rc=$rc, o.svg exists: $([ -e "$tmp/o.svg" ] && echo yes)"
done
# root reads every file: the permission case only means something for
# other users.
if ! cat "$noread" > /dev/null 2>&1; then
  "$svg" "$noread" > "$tmp/out.svg" 2> "$tmp/err"
  rc=$?
  [ "$rc" = 1 ] && [ ! -s "$tmp/out.svg" ] && ok || fail "unreadable input: rc=$rc"
fi
# A truncated profile still draws what was read (and exits 1).
head -c 2000 "$sp" > "$tmp/trunc.bin"
"$svg" "$tmp/trunc.bin" > "$tmp/out.svg" 2> /dev/null
rc=$?
[ "$rc" = 1 ] && grep -q '</svg>' "$tmp/out.svg" && ok ||
  fail "truncated input: rc=$rc, want 1 and a graph"

# 2. A closed pipe: the reader is gone before the tool writes; the tool
# ends with status 0 and says nothing.
closed() {
  local what="$*"
  bash -c 'sleep 0.3; exec "$@"' _ "$@" 2> "$tmp/err" | true
  local rc=${PIPESTATUS[0]}
  [ "$rc" = 0 ] && [ ! -s "$tmp/err" ] && ok ||
    fail "$what | (closed): rc=$rc, stderr: $(cat "$tmp/err")"
}
closed "$svg" "$sp"
closed "$svg" "$mp"
closed "$dump" --events "$sp"
closed "$dump" --events "$mp"
closed "$dump" "$mp"
closed "$dump" --format=json "$sp"
closed "$fold" "$sp"
closed "$fold" "$mp"

# 3. A full disk is an error, said once, status 1.
if [ -w /dev/full ]; then
  for cmd in "$svg $sp" "$dump --events $sp" "$fold $sp"; do
    # shellcheck disable=SC2086
    $cmd > /dev/full 2> "$tmp/err"
    rc=$?
    [ "$rc" = 1 ] && grep -q "No space left on device" "$tmp/err" &&
      [ "$(wc -l < "$tmp/err")" = 1 ] && ok ||
      fail "$cmd > /dev/full: rc=$rc, stderr: $(cat "$tmp/err")"
  done
fi

# 4. --vmstate: the same words and defaults in both tools.
"$fold" "$sp" > "$tmp/none0"
for form in "--vmstate=none" "--vmstate none"; do
  # shellcheck disable=SC2086
  "$fold" $form "$sp" | cmp -s - "$tmp/none0" && ok || fail "ljpfold $form != no option"
done
"$fold" --vmstate=root "$sp" > "$tmp/root"
grep -q '^VMST_' "$tmp/root" && ok || fail "ljpfold --vmstate=root: no VMST_ root frame"
for form in "--vmstate" "--vmstate root"; do
  # shellcheck disable=SC2086
  "$fold" $form "$sp" | cmp -s - "$tmp/root" && ok || fail "ljpfold $form != --vmstate=root"
done
"$fold" --vmstate leaf "$sp" | cmp -s - <("$fold" --vmstate=leaf "$sp") && ok ||
  fail "ljpfold --vmstate leaf != --vmstate=leaf"
"$svg" "$sp" > "$tmp/s-none0.svg"
"$svg" --vmstate=none "$sp" | cmp -s - "$tmp/s-none0.svg" && ok || fail "ljpsvg --vmstate=none"
"$svg" --vmstate=root "$sp" > "$tmp/s-root.svg"
grep -q '>VMST_' "$tmp/s-root.svg" && ! grep -q '>VMST_' "$tmp/s-none0.svg" && ok ||
  fail "ljpsvg --vmstate=root draws no VMST_ frame, or the default does"
for form in "--vmstate" "--vmstate root"; do
  # shellcheck disable=SC2086
  "$svg" $form "$sp" | cmp -s - "$tmp/s-root.svg" && ok || fail "ljpsvg $form != --vmstate=root"
done
for tool in "$svg" "$fold"; do
  "$tool" --vmstate=sideways "$sp" > /dev/null 2> "$tmp/err"
  rc=$?
  [ "$rc" = 2 ] && grep -q sideways "$tmp/err" && ok || fail "$tool --vmstate=sideways: rc=$rc"
done

echo "$pass passed, $failed failed"
[ "$failed" = 0 ]
