#!/bin/sh
# ljp-sysprof-run and ljp.autoprof as a user meets them: usage errors that
# name the argument and run nothing, no file left by a missing script, the
# closing "ljp: wrote ..." line that agrees with the file, and --help.
#   test_runner.sh LUAJIT CAPCHECK LUA_CPATH LUA_PATH RUNNER
set -eu
LUAJIT=$1 CAPCHECK=$2 CPATH=$3 LPATH=$4 RUNNER=$5
export LUAJIT   # the wrapper runs the same luajit
unset LJP_SYSPROF_PATH LJP_SYSPROF_MODE LJP_SYSPROF_INTERVAL \
      LJP_SYSPROF_TIMER LJP_SYSPROF_FORMAT
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
fail() { echo "FAIL: $*"; exit 1; }
pass=0
ok() { pass=$((pass + 1)); }

# The script leaves a mark, so that "it did not run" is checked, not hoped.
cat > spin.lua <<'LUA'
local f = assert(io.open("ran", "w")) f:write("yes") f:close()
local x = 0 local t0 = os.clock() while os.clock() - t0 < 0.2 do x = x + 1 end
LUA

# 1. A bad option value: exit 2, the message names the option and the
# value, the script does not run, no profile file appears.
bad() {
  rm -f ran out.bin
  set +e
  "$RUNNER" -o out.bin "$@" spin.lua >stdout 2>stderr
  rc=$?
  set -e
  [ "$rc" = 2 ] || fail "$*: exit $rc, want 2"
  [ ! -e ran ] || fail "$*: the script ran"
  [ ! -e out.bin ] || fail "$*: a profile file was left"
  grep -q -- "$1" stderr || fail "$*: the message does not name $1: $(cat stderr)"
  grep -q -- "$2" stderr || fail "$*: the message does not name '$2': $(cat stderr)"
  ok
}
bad -m X
bad -m CC
bad -t cpu
bad -i 0
bad -i 1.5
bad -i 5ms
bad -i 99999999999999999999
bad -f 3
bad -f x2

# The same for a bad environment value (ljp.autoprof checks it).
badenv() {
  rm -f ran out.bin
  set +e
  env "$1=$2" "$RUNNER" -o out.bin spin.lua >stdout 2>stderr
  rc=$?
  set -e
  [ "$rc" = 2 ] || fail "$1=$2: exit $rc, want 2"
  [ ! -e ran ] || fail "$1=$2: the script ran"
  [ ! -e out.bin ] || fail "$1=$2: a profile file was left"
  grep -q -- "$1=$2" stderr || fail "$1=$2: not named: $(cat stderr)"
  ok
}
badenv LJP_SYSPROF_MODE X
badenv LJP_SYSPROF_INTERVAL -3
badenv LJP_SYSPROF_INTERVAL 1e1
badenv LJP_SYSPROF_TIMER cpu
badenv LJP_SYSPROF_FORMAT 3

# Unknown options and missing values are usage errors too.
for args in "-q" "-o" "-m"; do
  set +e
  # shellcheck disable=SC2086
  "$RUNNER" $args >/dev/null 2>stderr
  rc=$?
  set -e
  [ "$rc" = 2 ] || fail "'$args': exit $rc, want 2"
  grep -q -- "$args" stderr || fail "'$args': not named: $(cat stderr)"
  ok
done

# 2. A missing script: an error, and no file behind, from the wrapper and
# from luajit -l ljp.autoprof alike.
set +e
"$RUNNER" -o miss.bin nosuch.lua 2>stderr
rc=$?
set -e
[ "$rc" = 1 ] || fail "missing script: exit $rc, want 1"
[ ! -e miss.bin ] || fail "missing script: miss.bin was left behind"
grep -q nosuch.lua stderr || fail "missing script not named: $(cat stderr)"
ok
set +e
LUA_CPATH="$CPATH;;" LUA_PATH="$LPATH;;" LJP_SYSPROF_PATH=miss2.bin \
  "$LUAJIT" -l ljp.autoprof nosuch.lua 2>stderr
rc=$?
set -e
[ "$rc" != 0 ] || fail "luajit -l ljp.autoprof nosuch.lua succeeded"
[ ! -e miss2.bin ] || fail "luajit -l ljp.autoprof left miss2.bin behind"
ok

# A profile that cannot be written: an error, and the script does not run.
rm -f ran
set +e
"$RUNNER" -o "$tmp/no/such/dir/p.bin" spin.lua 2>stderr
rc=$?
set -e
[ "$rc" = 1 ] || fail "unwritable -o: exit $rc, want 1"
[ ! -e ran ] || fail "unwritable -o: the script ran unprofiled"
grep -q "cannot start profiling" stderr || fail "unwritable -o: $(cat stderr)"
ok

# 3. The closing line agrees with the file: N is the file's sample count.
rm -f ran
"$RUNNER" -o run.bin -i 1 -t wall spin.lua 2>stderr || fail "run: $(cat stderr)"
[ -e ran ] || fail "the script did not run"
line=$(grep '^ljp: wrote' stderr) || fail "no closing line: $(cat stderr)"
[ "$(grep -c '^ljp: wrote' stderr)" = 1 ] || fail "closing line not once: $(cat stderr)"
n=$(echo "$line" | sed -n 's/^ljp: wrote \([0-9]*\) samples to run.bin, \([0-9.]*\) Hz achieved, \([0-9]*\) dropped$/\1/p')
[ -n "$n" ] || fail "closing line format: $line"
"$CAPCHECK" run.bin | grep -q "samples=$n complete=1 status=1" ||
  fail "the line says $n samples, the file: $("$CAPCHECK" run.bin)"
# A 1 ms wall timer over 0.2 s of spinning: well above 100 Hz.
hz=$(echo "$line" | sed 's/.*, \([0-9]*\)\.[0-9] Hz.*/\1/')
[ "$hz" -ge 100 ] || fail "achieved $hz Hz with -i 1 -t wall: $line"
ok

# ... also after os.exit() and after an error in the script.
printf 'local x=0 local t0=os.clock() while os.clock()-t0<0.1 do x=x+1 end os.exit(3)\n' > exit.lua
set +e
"$RUNNER" -o exit.bin -i 1 exit.lua 2>stderr
rc=$?
set -e
[ "$rc" = 3 ] || fail "os.exit(3): exit $rc"
n=$(sed -n 's/^ljp: wrote \([0-9]*\) samples to exit.bin,.*/\1/p' stderr)
[ -n "$n" ] || fail "no closing line after os.exit: $(cat stderr)"
"$CAPCHECK" exit.bin | grep -q "samples=$n complete=1" || fail "exit.bin: $("$CAPCHECK" exit.bin)"
ok
printf 'local x=0 local t0=os.clock() while os.clock()-t0<0.1 do x=x+1 end error("boom")\n' > boom.lua
if "$RUNNER" -o boom.bin -i 1 boom.lua 2>stderr; then fail "boom.lua: exit 0"; fi
grep -q boom stderr || fail "the script's error is lost"
n=$(sed -n 's/^ljp: wrote \([0-9]*\) samples to boom.bin,.*/\1/p' stderr)
[ -n "$n" ] || fail "no closing line after an error: $(cat stderr)"
"$CAPCHECK" boom.bin | grep -q "samples=$n complete=1" || fail "boom.bin: $("$CAPCHECK" boom.bin)"
ok

# 4. -f 2 writes Tarantool's ljp 2, default ljp x1; -- ends the options.
cp spin.lua ./-dash.lua
"$RUNNER" -o f2.bin -f 2 -- -dash.lua 2>/dev/null || fail "-f 2 -- -dash.lua"
"$CAPCHECK" f2.bin | grep -q "complete=1 status=1 flavor=[12] ljs=3 ljp=2 " ||
  fail "f2.bin is not ljp 2: $("$CAPCHECK" f2.bin)"
"$CAPCHECK" run.bin | grep -q " ljp=129 " || fail "default is not ljp x1: $("$CAPCHECK" run.bin)"
ok

# 5. Mode D writes no file and says so.
rm -f sysprof.bin
"$RUNNER" -m D spin.lua 2>stderr || fail "-m D"
[ ! -e sysprof.bin ] || fail "-m D wrote a file"
grep -q '^ljp: counted [0-9]* samples (mode D writes no file)' stderr || fail "-m D: $(cat stderr)"
ok

# 6. --help explains modes, timers, formats and --, and exits 0.
"$RUNNER" --help > help || fail "--help exit status"
for word in ' C ' ' L ' ' D ' itimer thread wall ' x1 ' ' 2 ' LJP_SYSPROF_FORMAT ' -- '; do
  grep -q -- "$word" help || fail "--help does not explain '$word'"
done
ok

echo "$pass passed, 0 failed"
