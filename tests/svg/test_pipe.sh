#!/usr/bin/env bash
# Inputs from a pipe draw the same SVG as the same file: profiles (which
# ljpsvg recognises without consuming the pipe, then streams) and folded
# text, also when the producer writes its first bytes slowly.
#   test_pipe.sh LJPSVG TESTDATA
set -uo pipefail
svg=$1 data=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failed=0
fail() { echo "FAIL: $*"; failed=$((failed + 1)); }
printf 'main;a;b 3\nmain;a;c 2\nmain;d 1\n' > "$tmp/text.folded"
for f in "$data/captures/sp_c_fib_jitoff_1ms.bin" \
         "$data/captures/mp_traces_flush_jiton.bin" "$tmp/text.folded"; do
  "$svg" "$f" > "$tmp/file.svg" || fail "ljpsvg $f"
  [ -s "$tmp/file.svg" ] || fail "ljpsvg $f: no SVG"
  cat "$f" | "$svg" - > "$tmp/pipe.svg" || fail "cat $f | ljpsvg -"
  cmp -s "$tmp/file.svg" "$tmp/pipe.svg" || fail "cat $f | ljpsvg -: another SVG"
  # Two bytes first, the rest later: the type is known from three.
  { head -c 2 "$f"; sleep 0.2; tail -c +3 "$f"; } | "$svg" - > "$tmp/slow.svg" ||
    fail "slow pipe of $f"
  cmp -s "$tmp/file.svg" "$tmp/slow.svg" || fail "slow pipe of $f: another SVG"
done
[ "$failed" = 0 ] && echo "test_pipe: all passed"
exit $((failed > 0))
