#!/usr/bin/env bash
# ljpfold --jobs: folding several files at once gives the bytes, the
# diagnostics and the exit status of folding them one after the other,
# whatever the number of jobs and whatever fails where.
#   test_jobs.sh LJPFOLD TESTDATA
set -uo pipefail
fold=$1 data=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 failed=0
ok() { pass=$((pass + 1)); }
fail() { echo "FAIL: $*"; failed=$((failed + 1)); }

caps=$data/captures
sp=() mp=()
for f in "$caps"/*.bin; do
  case $(basename "$f") in
    sp_*|old_sp_*) sp+=("$f") ;;
    mp_*|old_mp_*) mp+=("$f") ;;
  esac
done
[ "${#sp[@]}" -ge 4 ] && [ "${#mp[@]}" -ge 4 ] || { echo "FAIL: too few captures in $caps"; exit 1; }

# A broken set: a missing file, a cut one, a directory, between good ones.
head -c 3000 "${sp[0]}" > "$tmp/cut.bin"
broken=("${sp[1]}" "$tmp/missing.bin" "${sp[2]}" "$tmp/cut.bin" "$tmp" "${sp[3]}")

# same LABEL OPTIONS... -- FILES...: -j1 against -j2, -j3 and -j0.
same() {
  local label=$1; shift
  local opts=() files=()
  while [ "$1" != -- ]; do opts+=("$1"); shift; done
  shift
  files=("$@")
  "$fold" "${opts[@]}" -j1 "${files[@]}" > "$tmp/a.out" 2> "$tmp/a.err"
  local ra=$?
  [ -s "$tmp/a.out" ] || [ "$ra" != 0 ] || { fail "$label: -j1 printed nothing"; return; }
  for j in 2 3 0; do
    "$fold" "${opts[@]}" -j$j "${files[@]}" > "$tmp/b.out" 2> "$tmp/b.err"
    local rb=$?
    if [ "$ra" = "$rb" ] && cmp -s "$tmp/a.out" "$tmp/b.out" &&
       cmp -s "$tmp/a.err" "$tmp/b.err"; then
      ok
    else
      fail "$label -j$j: exit $ra/$rb, $(cmp "$tmp/a.out" "$tmp/b.out" 2>&1 | head -1), $(diff "$tmp/a.err" "$tmp/b.err" | head -3)"
    fi
  done
}

same "sysprof" -- "${sp[@]}"
same "sysprof reversed" -- $(printf '%s\n' "${sp[@]}" | sort -r)
same "sysprof lua" --stack=lua -- "${sp[@]}"
same "sysprof vmstate leaf" --vmstate=leaf --traces=trace -- "${sp[@]}"
same "sysprof tarantool" --format=tarantool -- "${sp[@]}"
same "sysprof filtered" --min-count=2 --exclude=VMST -- "${sp[@]}"
# Function names read from the sources: each job has a resolver of its own.
same "sysprof sources" --source-dir="$caps" --traces=function -- "${sp[@]}" "${sp[@]}"
same "memprof sources" --source-dir="$caps" -- "${mp[@]}" "${mp[@]}"
same "memprof" -- "${mp[@]}"
same "memprof live" --weight=live -- "${mp[@]}"
same "memprof events" --weight=events --addresses -- "${mp[@]}"
same "mixed kinds" -- "${sp[0]}" "${mp[0]}" "${sp[1]}" "${mp[1]}"
same "the same file twice" -- "${sp[0]}" "${sp[0]}"
same "broken files" -- "${broken[@]}"
# Standard input among the files.
"$fold" -j1 "${sp[0]}" - "${sp[1]}" < "${sp[2]}" > "$tmp/a.out" 2>&1
"$fold" -j2 "${sp[0]}" - "${sp[1]}" < "${sp[2]}" > "$tmp/b.out" 2>&1
cmp -s "$tmp/a.out" "$tmp/b.out" && [ -s "$tmp/a.out" ] && ok || fail "stdin among the files"
# Many files, more than the jobs' window ahead of the merge.
many=()
for i in $(seq 1 12); do many+=("${sp[$((i % ${#sp[@]}))]}"); done
same "12 files" -- "${many[@]}"

# Bad counts are usage errors.
for bad in -1 x 257 ""; do
  "$fold" --jobs="$bad" "${sp[0]}" > /dev/null 2>&1
  [ $? = 2 ] && ok || fail "--jobs=$bad: not a usage error"
done

echo "jobs: $pass passed, $failed failed"
[ "$failed" = 0 ]
