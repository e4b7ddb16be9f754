#!/bin/sh
# The libraries' exported surface (nm):
#   exports.sh NM static LIB.a [api=HEADER...]
#       every defined global symbol starts with ljp_ (public API; ljp__ for
#       internals) or luaopen_ljp_ (the Lua modules' entry points), so that a
#       program linking the archive may use any other name for itself; with
#       api= headers, every ljp_ name that is not ljp__ is one the headers
#       declare (an internal helper cannot pass as public by its prefix);
#   exports.sh NM shared LIB.so require=HEADER:MACRO... [allow=HEADER:MACRO...]
#       every dynamic export is a public name (ljp_ but not the internal
#       ljp__, or luaopen_ljp_) declared with MACRO in one of the HEADERs,
#       and every function declared with MACRO in a require= header is
#       exported (an allow= header's functions may be);
#   exports.sh NM module MOD.so [require=HEADER:MACRO...] [allow=...]
#       the same for a Lua module, which must also export its luaopen_ljp_*.
# Prints each offending symbol; exit status 1 when there is one.
set -u
nm=$1 kind=$2 lib=$3
shift 3
[ -f "$lib" ] || { echo "exports.sh: no such file: $lib"; exit 2; }
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT
export LC_ALL=C
fail=0

case $kind in
static)
  # Lines are "ADDR TYPE NAME"; member headers and blank lines have fewer
  # fields.
  "$nm" -g --defined-only "$lib" > "$tmp/nm" || exit 2
  awk 'NF == 3 { print $3 }' "$tmp/nm" | sort -u > "$tmp/syms"
  [ -s "$tmp/syms" ] || { echo "no symbols read from $lib"; exit 2; }
  if grep -Ev '^(ljp_|luaopen_ljp_)' "$tmp/syms" > "$tmp/bad"; then
    echo "$lib: global symbols outside the ljp_ namespace:"
    cat "$tmp/bad"
    fail=1
  fi
  if [ $# -gt 0 ]; then
    : > "$tmp/api"
    for arg in "$@"; do
      header=${arg#api=}
      [ -f "$header" ] || { echo "exports.sh: no such header: $header"; exit 2; }
      grep -o 'ljp_[a-z0-9_]*' "$header" >> "$tmp/api"
    done
    sort -u "$tmp/api" -o "$tmp/api"
    grep -E '^ljp_[a-z0-9]' "$tmp/syms" | comm -23 - "$tmp/api" > "$tmp/undeclared"
    if [ -s "$tmp/undeclared" ]; then
      echo "$lib: ljp_ symbols no public header declares (internals are ljp__):"
      cat "$tmp/undeclared"
      fail=1
    fi
  fi
  echo "$lib: $(wc -l < "$tmp/syms") global symbols checked"
  ;;
shared|module)
  "$nm" -D --defined-only "$lib" > "$tmp/nm" || exit 2
  awk 'NF == 3 { print $3 }' "$tmp/nm" | sort -u > "$tmp/syms"
  [ -s "$tmp/syms" ] || { echo "no dynamic symbols read from $lib"; exit 2; }
  if grep -Ev '^(ljp_[a-z0-9]|luaopen_ljp_)' "$tmp/syms" > "$tmp/bad"; then
    echo "$lib: exports outside the public names:"
    cat "$tmp/bad"
    fail=1
  fi
  if [ "$kind" = module ] && ! grep -q '^luaopen_ljp_' "$tmp/syms"; then
    echo "$lib: no luaopen_ljp_* entry point"
    fail=1
  fi
  if [ $# -gt 0 ]; then
    : > "$tmp/decl"
    : > "$tmp/req"
    for arg in "$@"; do
      hm=${arg#*=} header=${hm%:*} macro=${hm##*:}
      [ -f "$header" ] || { echo "exports.sh: no such header: $header"; exit 2; }
      # A declaration starts a line with the macro; the name is the
      # identifier before the first parenthesis.
      grep -E "^$macro " "$header" | sed 's/(.*//' |
        awk '{ n = $NF; sub(/^\**/, "", n); print n }' > "$tmp/one"
      [ -s "$tmp/one" ] || { echo "no declarations read from $header"; exit 2; }
      cat "$tmp/one" >> "$tmp/decl"
      case $arg in require=*) cat "$tmp/one" >> "$tmp/req" ;; esac
    done
    sort -u -o "$tmp/decl" "$tmp/decl"
    sort -u -o "$tmp/req" "$tmp/req"
    grep -v '^luaopen_ljp_' "$tmp/syms" | comm -23 - "$tmp/decl" > "$tmp/undeclared"
    comm -13 "$tmp/syms" "$tmp/req" > "$tmp/missing"
    if [ -s "$tmp/undeclared" ]; then
      echo "$lib: exported but not declared with the API macro:"
      cat "$tmp/undeclared"
      fail=1
    fi
    if [ -s "$tmp/missing" ]; then
      echo "$lib: declared with the API macro but not exported:"
      cat "$tmp/missing"
      fail=1
    fi
    echo "$lib: $(wc -l < "$tmp/syms") exports, $(wc -l < "$tmp/req") required"
  else
    echo "$lib: $(wc -l < "$tmp/syms") exports checked"
  fi
  ;;
*)
  echo "exports.sh: unknown kind $kind"
  exit 2
  ;;
esac
exit $fail
