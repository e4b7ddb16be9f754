#!/usr/bin/env bash
# Runs a libFuzzer campaign on every fuzz target (or the ones named).
#
#   tests/fuzz/campaign.sh [-t SECONDS] [-j PARALLEL] [-u] [TARGET...]
#
#   -t SECONDS   length of the campaign per target (default 600)
#   -j PARALLEL  targets fuzzed at the same time (default 1; each uses one
#                core: the machine is shared)
#   -u           afterwards, add to corpus/<target> the inputs that a
#                merge (-merge=1) finds add coverage to it: files of at most
#                1 KiB, at most $FUZZ_BUDGET bytes per target (default 12 KiB:
#                the repository stays small)
#
# Builds with clang, ASan+UBSan and -fsanitize=fuzzer in $FUZZ_BUILD
# (default build-fuzz), works in $FUZZ_WORK (default /tmp/ljp-fuzz): the
# growing corpora, logs, and crash artifacts.  A crash, leak, timeout or
# out-of-memory stops that target's campaign and leaves the input in
# $FUZZ_WORK/artifacts/<target>/; turn it into a regression input with
#   cp ARTIFACT tests/fuzz/regress/<target>/<what-it-was>
# Exit status: 0 when no target found anything, 1 otherwise.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
secs=600 par=1 update=0
while getopts "t:j:u" o; do
  case $o in
    t) secs=$OPTARG ;;
    j) par=$OPTARG ;;
    u) update=1 ;;
    *) sed -n '2,20p' "$0"; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(reader reader_fd fold folded dbimport dump)
build=${FUZZ_BUILD:-$root/build-fuzz}
work=${FUZZ_WORK:-/tmp/ljp-fuzz}

CC=clang cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DLJP_SANITIZE=ON -DLJP_BUILD_FUZZERS=ON -DLJP_BUILD_CAPTURE=OFF >/dev/null
cmake --build "$build" -j"$par" --target $(printf 'fuzz_%s ' "${targets[@]}") >/dev/null

max_len() { case $1 in reader_fd) echo 8192 ;; *) echo 65536 ;; esac; }
dict() { case $1 in folded) echo "$here/folded.dict" ;; *) echo "$here/ljp.dict" ;; esac; }

run_one() {
  local t=$1 bin=$build/tests/fuzz/fuzz_$1
  mkdir -p "$work/$t" "$work/artifacts/$t"
  local seeds=("$here/corpus/$t")
  [ -d "$here/regress/$t" ] && seeds+=("$here/regress/$t")
  # -jobs=1 would only detach the run into fuzz-0.log; run it in place.
  # halt_on_error keeps UBSan findings fatal, detect_leaks checks every run.
  ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 \
  UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
  local rc=0
  "$bin" "$work/$t" "${seeds[@]}" -max_total_time="$secs" -timeout=10 \
    -rss_limit_mb=2048 -malloc_limit_mb=1024 -max_len="$(max_len "$t")" \
    -artifact_prefix="$work/artifacts/$t/" -print_final_stats=1 \
    -dict="$(dict "$t")" \
    >"$work/$t.log" 2>&1 || rc=$?
  echo "$rc" >"$work/$t.rc"
}

minimise() {
  # The checked-in corpus stays; what the campaign adds to its coverage is
  # merged in, small files first, within a budget per target, so the
  # repository stays small.
  local t=$1 bin=$build/tests/fuzz/fuzz_$1 min=$work/min/$t budget=${FUZZ_BUDGET:-12288}
  rm -rf "$min" && mkdir -p "$min"
  "$bin" -merge=1 -max_len="$(max_len "$t")" "$min" "$here/corpus/$t" \
    "$work/$t" >"$work/$t.merge.log" 2>&1
  # Merged files are named by the SHA-1 of their bytes: skip the seeds.
  local -A have=()
  local used=0 f g size
  for g in "$here/corpus/$t"/*; do
    have[$(sha1sum <"$g" | cut -c1-40)]=1
  done
  for f in $(ls -S -r "$min"); do
    size=$(stat -c %s "$min/$f")
    [ "$size" -le 1024 ] || continue
    [ -n "${have[$f]:-}" ] && continue
    [ $((used + size)) -le "$budget" ] || break
    cp "$min/$f" "$here/corpus/$t/"
    used=$((used + size))
  done
  echo "$t: $used bytes of new inputs added to corpus/$t"
}

status=0
running=0
for t in "${targets[@]}"; do
  echo "fuzzing $t for ${secs}s (log: $work/$t.log)"
  rm -f "$work/$t.rc"
  run_one "$t" &
  running=$((running + 1))
  if [ "$running" -ge "$par" ]; then
    wait -n || true
    running=$((running - 1))
  fi
done
wait
for t in "${targets[@]}"; do
  if [ "$(cat "$work/$t.rc" 2>/dev/null)" = 0 ]; then
    echo "$t: no findings ($(grep -o 'stat::number_of_executed_units: [0-9]*' "$work/$t.log" | cut -d' ' -f2) runs)"
    [ "$update" = 1 ] && minimise "$t"
  else
    echo "$t: FINDING — see $work/$t.log and $work/artifacts/$t/"
    status=1
  fi
done
exit $status
