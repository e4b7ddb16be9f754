#!/bin/sh
# go tool pprof reads the pprof export of every bundled capture, and its
# numbers equal ljp's own (pprof_check.py); the bytes are deterministic,
# the gzip header carries no time, and --label reaches every sample.
#   pprof_go.sh LJPFOLD LJPDUMP TESTDATA OUTDIR [LJP_SYSPROF_RUN]
set -eu
LJPFOLD=$1 LJPDUMP=$2 TESTDATA=$3 OUT=$4 RUN=${5:-}
HERE=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$OUT"
fail=0
n=0
for f in $(find "$TESTDATA" -name '*.bin' | sort); do
  n=$((n + 1))
  python3 "$HERE/pprof_check.py" "$LJPFOLD" "$LJPDUMP" "$f" "$OUT" || fail=1
done
if [ "$n" -lt 20 ]; then
  echo "FAIL: only $n captures found under $TESTDATA"
  fail=1
fi

x1=$TESTDATA/x1/x1_rich.bin
"$LJPFOLD" --format=pprof -o "$OUT/a.pb.gz" --label service=api --label host=h1 "$x1"
"$LJPFOLD" --format=pprof -o "$OUT/b.pb.gz" --label service=api --label host=h1 "$x1"
if ! cmp -s "$OUT/a.pb.gz" "$OUT/b.pb.gz"; then
  echo "FAIL: two exports of one capture differ"
  fail=1
fi
# gzip magic, deflate, no flags, mtime 0 (bytes 4..7).
head=$(od -An -tx1 -N8 "$OUT/a.pb.gz" | tr -d ' \n')
if [ "$head" != "1f8b080000000000" ]; then
  echo "FAIL: gzip header $head"
  fail=1
fi
tags=$(go tool pprof -tags -sample_index=samples "$OUT/a.pb.gz" 2>/dev/null)
for want in "service: Total 15" "api" "host: Total 15" "h1" "vmstate: Total 15" \
            "TRACE" "trace: Total 6"; do
  if ! printf '%s\n' "$tags" | grep -qF -- "$want"; then
    echo "FAIL: '$want' not in go tool pprof -tags"
    fail=1
  fi
done
# A stream without its interval: --interval gives the cpu values.
sp=$TESTDATA/captures/sp_c_fib_jitoff_1ms.bin
"$LJPFOLD" --format=pprof --interval=1ms -o "$OUT/iv.pb.gz" "$sp"
samples=$("$LJPFOLD" "$sp" | awk '{s += $NF} END {print s}')
cpu=$(go tool pprof -top -unit=ns -sample_index=cpu "$OUT/iv.pb.gz" 2>/dev/null |
      sed -n 's/.* of \([0-9]*\)ns total.*/\1/p' | head -1)
if [ "$cpu" != "$((samples * 1000000))" ]; then
  echo "FAIL: --interval=1ms: cpu $cpu ns for $samples samples"
  fail=1
fi
# A capture with the wall-clock timer: its time is wall, not cpu.
if [ -n "$RUN" ]; then
  printf 'local t = os.clock()\nlocal x = 0\nwhile os.clock() - t < 0.1 do x = x + math.sin(x) end\n' \
    > "$OUT/spin.lua"
  if ! "$RUN" -t wall -i 1 -o "$OUT/wall.bin" "$OUT/spin.lua" 2>"$OUT/run.log"; then
    cat "$OUT/run.log"
    echo "FAIL: $RUN -t wall"
    exit 1
  fi
  "$LJPFOLD" --format=pprof -o "$OUT/wall.pb.gz" "$OUT/wall.bin"
  types=$(go tool pprof -raw "$OUT/wall.pb.gz" 2>/dev/null | sed -n 's/^PeriodType: //p')
  if [ "$types" != "wall nanoseconds" ]; then
    echo "FAIL: wall-clock capture: period type '$types'"
    fail=1
  fi
  samples=$("$LJPFOLD" "$OUT/wall.bin" | awk '{s += $NF} END {print s}')
  wall=$(go tool pprof -top -unit=ns -sample_index=wall "$OUT/wall.pb.gz" 2>/dev/null |
         sed -n 's/.* of \([0-9]*\)ns total.*/\1/p' | head -1)
  if [ -z "$samples" ] || [ "$wall" != "$((samples * 1000000))" ]; then
    echo "FAIL: wall-clock capture: $wall ns for $samples samples"
    fail=1
  fi
  # x1 names the objects of host addresses: they become mappings (file,
  # range, build-id), and host locations point at them.
  go tool pprof -raw "$OUT/wall.pb.gz" > "$OUT/wall.raw" 2>/dev/null
  maps=$(sed -n '/^Mappings/,$p' "$OUT/wall.raw" | grep -c '^ *[0-9][0-9]*: 0x' || true)
  libc=$(sed -n '/^Mappings/,$p' "$OUT/wall.raw" | grep -c 'libc\.so\.6 [0-9a-f]\{40\}' || true)
  inmap=$(grep -c '^ *[0-9][0-9]*: 0x[0-9a-f]* M=[1-9]' "$OUT/wall.raw" || true)
  if [ "$maps" -lt 2 ] || [ "$libc" -ne 1 ] || [ "$inmap" -lt 1 ]; then
    echo "FAIL: wall-clock capture: $maps mappings, libc with build-id $libc, $inmap mapped locations"
    sed -n '/^Mappings/,$p' "$OUT/wall.raw"
    fail=1
  fi
  # ljpdump lists the object events, as text and as JSON Lines.
  objs=$("$LJPDUMP" --events "$OUT/wall.bin" | grep -c ' symbol    object 0x.*libc\.so\.6 build-id [0-9a-f]\{40\}' || true)
  jobjs=$("$LJPDUMP" --events --format=json "$OUT/wall.bin" |
          python3 -c 'import json,sys
n=0
for l in sys.stdin:
    e=json.loads(l)
    if e.get("kind")=="object" and e["path"].endswith("libc.so.6") and e["size"]>0 and len(e["build_id"])==40: n+=1
print(n)')
  if [ "$objs" -ne 1 ] || [ "$jobjs" -ne 1 ]; then
    echo "FAIL: ljpdump --events lists libc's object $objs times, JSON $jobjs times"
    fail=1
  fi
fi
[ $fail -eq 0 ] && echo "pprof export: $n captures read by go tool pprof"
exit $fail
