#!/bin/sh
# ljpfold's export options on the command line: usage errors (status 2,
# with a message), write errors (status 1), stdout and -o giving the same
# bytes, '-' reading standard input.
#   cli.sh LJPFOLD TESTDATA OUTDIR
set -u
F=$1 T=$2 OUT=$3
mkdir -p "$OUT"
x1=$T/x1/x1_rich.bin
mp=$T/captures/mp_basic_jitoff.bin
fail=0
expect() { # expect STATUS MESSAGE-PART -- command...
  want=$1 msg=$2
  shift 3
  "$@" >"$OUT/out" 2>"$OUT/err"
  got=$?
  if [ "$got" != "$want" ] || ! grep -qF -- "$msg" "$OUT/err"; then
    echo "FAIL: $* -> status $got (want $want), stderr: $(cat "$OUT/err")"
    fail=1
  else
    echo "ok: $*"
  fi
}
expect 2 "--label takes KEY=VALUE" -- "$F" --format=pprof --label foo "$x1"
expect 2 "--label takes KEY=VALUE" -- "$F" --format=pprof --label =v "$x1"
expect 2 "--interval takes a duration" -- "$F" --format=pprof --interval=0 "$x1"
expect 2 "--interval takes a duration" -- "$F" --format=pprof --interval=3h "$x1"
expect 2 "go with --format=pprof" -- "$F" -o "$OUT/x" "$x1"
expect 2 "take no filters" -- "$F" --format=pprof --include=x "$x1"
expect 2 "take no filters" -- "$F" --format=speedscope --min-count=2 "$x1"
expect 2 "--label is for --format=pprof" -- "$F" --format=speedscope --label a=b "$x1"
expect 2 "cannot be exported together" -- "$F" --format=pprof -o "$OUT/m" "$x1" "$mp"
expect 2 "--format takes" -- "$F" --format=pprof2 "$x1"
expect 1 "No space left on device" -- "$F" --format=pprof -o /dev/full "$x1"
expect 1 "No such file or directory" -- "$F" --format=speedscope -o "$OUT/no/such/dir" "$x1"
expect 1 "truncated" -- sh -c "head -c 300 '$x1' | '$F' --format=speedscope -"
for fmt in pprof speedscope; do
  "$F" --format=$fmt "$x1" > "$OUT/stdout.$fmt"
  "$F" --format=$fmt -o "$OUT/file.$fmt" "$x1"
  "$F" --format=$fmt - < "$x1" > "$OUT/stdin.$fmt"
  if ! cmp -s "$OUT/stdout.$fmt" "$OUT/file.$fmt"; then
    echo "FAIL: $fmt: standard output and -o differ"
    fail=1
  fi
  # From stdin only the title differs (<stdin>): pprof has none.
  if [ $fmt = pprof ] && ! cmp -s "$OUT/stdout.$fmt" "$OUT/stdin.$fmt"; then
    echo "FAIL: pprof: a file and standard input differ"
    fail=1
  fi
done
grep -q '"name":"<stdin>"' "$OUT/stdin.speedscope" ||
  { echo "FAIL: speedscope from stdin is not named <stdin>"; fail=1; }
# A truncated file still exports what was read before the cut.
head -c 400 "$x1" > "$OUT/cut.bin"
"$F" --format=speedscope -o "$OUT/cut.json" "$OUT/cut.bin" 2>/dev/null
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); \
assert sum(len(p['samples']) for p in d['profiles']) > 0" "$OUT/cut.json" ||
  { echo "FAIL: nothing exported from a truncated file"; fail=1; }
exit $fail
