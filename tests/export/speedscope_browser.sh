#!/bin/sh
# speedscope (its npm package's release build, installed into the build
# folder once) loads ljp's speedscope and pprof exports in headless
# Chromium; speedscope_browser.py checks what the page shows.
#   speedscope_browser.sh LJPFOLD CHROMIUM NPM TESTDATA OUTDIR
set -eu
LJPFOLD=$1 CHROMIUM=$2 NPM=$3 TESTDATA=$4 OUT=$5
VERSION=1.25.0
HERE=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
pkg=$OUT/npm/node_modules/speedscope
if ! grep -q "\"version\": \"$VERSION\"" "$pkg/package.json" 2>/dev/null; then
  # A private cache in the build folder: no state outside it.
  timeout 300 "$NPM" install --prefix "$OUT/npm" --no-audit --no-fund \
    --cache "$OUT/npm-cache" "speedscope@$VERSION" >"$OUT/npm.log" 2>&1 || {
    cat "$OUT/npm.log"
    echo "FAIL: npm install speedscope@$VERSION"
    exit 1
  }
fi
exec python3 "$HERE/speedscope_browser.py" "$LJPFOLD" "$CHROMIUM" \
  "$pkg/dist/release" "$TESTDATA" "$OUT"
