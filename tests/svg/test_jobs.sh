#!/usr/bin/env bash
# ljpsvg --jobs: reading several inputs at once draws the graph, says the
# diagnostics and exits as reading them one after the other does,
# whatever the number of jobs.
#   test_jobs.sh LJPSVG TESTDATA
set -uo pipefail
svg=$1 data=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 failed=0
ok() { pass=$((pass + 1)); }
fail() { echo "FAIL: $*"; failed=$((failed + 1)); }

caps=$data/captures
sp=("$caps"/sp_*.bin) mp=("$caps"/mp_*.bin)
folded=("$data"/golden/*.folded)
[ "${#sp[@]}" -ge 4 ] && [ "${#mp[@]}" -ge 4 ] && [ "${#folded[@]}" -ge 2 ] ||
  { echo "FAIL: too few inputs under $data"; exit 1; }
head -c 3000 "${sp[0]}" > "$tmp/cut.bin"
printf 'a;b 3 5\na;c 2 0\nno count\na;b 1.5 2\n' > "$tmp/two.folded"

# same LABEL OPTIONS... -- FILES...: -j1 against -j2 and -j0.
same() {
  local label=$1; shift
  local opts=()
  while [ "$1" != -- ]; do opts+=("$1"); shift; done
  shift
  "$svg" "${opts[@]}" -j1 "$@" > "$tmp/a.svg" 2> "$tmp/a.err"
  local ra=$?
  [ -s "$tmp/a.svg" ] || { fail "$label: -j1 drew nothing"; return; }
  for j in 2 0; do
    "$svg" "${opts[@]}" -j$j "$@" > "$tmp/b.svg" 2> "$tmp/b.err"
    local rb=$?
    if [ "$ra" = "$rb" ] && cmp -s "$tmp/a.svg" "$tmp/b.svg" &&
       cmp -s "$tmp/a.err" "$tmp/b.err"; then
      ok
    else
      fail "$label -j$j: exit $ra/$rb, $(cmp "$tmp/a.svg" "$tmp/b.svg" 2>&1 | head -1), $(diff "$tmp/a.err" "$tmp/b.err" | head -3)"
    fi
  done
}

same "sysprof" -- "${sp[@]}"
same "sysprof lua, sources" --stack lua --source-dir "$caps" -- "${sp[@]}" "${sp[@]}"
same "memprof" -- "${mp[@]}"
same "memprof live, inverted" --weight live --inverted -- "${mp[@]}"
same "folded text" -- "${folded[@]}"
same "mixed, two-count lines" -- "${sp[0]}" "$tmp/two.folded" "${folded[0]}" "${mp[0]}"
same "reversed" --reverse --hash -- "${sp[@]}" "${folded[@]}"
same "a cut file" -- "${sp[1]}" "$tmp/cut.bin" "${sp[2]}"
same "few frames" --maxframes 20 --minwidth 0 -- "${sp[@]}"

for bad in -1 x 257 1.5; do
  "$svg" --jobs="$bad" "${sp[0]}" > /dev/null 2>&1
  [ $? = 2 ] && ok || fail "--jobs=$bad: not a usage error"
done

echo "jobs: $pass passed, $failed failed"
[ "$failed" = 0 ]
