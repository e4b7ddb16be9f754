#!/bin/sh
# Real-browser test of the flame graph script: headless Chromium loads an
# ljpsvg graph inside a wrapper page, runs a search and a click-zoom through
# the page's own script, and the resulting DOM state is checked.  A
# screenshot is kept as an artifact.
#   browser_test.sh LJPSVG CHROMIUM FIXTURE OUTDIR
set -eu
LJPSVG=$1 CHROMIUM=$2 FIXTURE=$3 OUT=$4
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
"$LJPSVG" --title "browser test" "$FIXTURE" > "$OUT/graph.svg"

cat > "$OUT/wrapper.html" <<'HTML'
<!DOCTYPE html>
<html><body style="margin:0">
<iframe id="f" src="graph.svg" width="1200" height="160" style="border:0"></iframe>
<pre id="out">pending</pre>
<script>
document.getElementById("f").addEventListener("load", function () {
  var out = [], f = document.getElementById("f");
  try {
    var w = f.contentWindow, doc = f.contentDocument;
    var frames = Array.prototype.slice.call(doc.querySelectorAll("g.f"));
    function byName(n) {
      return frames.filter(function (g) {
        return g.firstChild.textContent.indexOf(n + " (") === 0;
      })[0];
    }
    w.search("^w.rk$");
    out.push("matched=" + doc.getElementById("matched").textContent);
    out.push("work-fill=" + byName("work").children[1].getAttribute("fill"));
    var ev = new MouseEvent("click", {bubbles: true});
    byName("work").children[1].dispatchEvent(ev);
    out.push("work-width=" + byName("work").children[1].getAttribute("width"));
    out.push("alpha-width=" + byName("alpha").children[1].getAttribute("width"));
    out.push("idle-hidden=" + byName("idle").classList.contains("hide"));
    out.push("main-parent=" + byName("main").classList.contains("parent"));
    out.push("unzoom-off=" + doc.getElementById("unzoom").classList.contains("off"));
    out.push("url=" + w.location.search);
  } catch (e) {
    out.push("error=" + e);
  }
  document.getElementById("out").textContent = out.join("\n");
});
</script>
</body></html>
HTML

run_chromium() {
  "$CHROMIUM" --headless --no-sandbox --disable-gpu --no-first-run \
    --disable-background-networking --allow-file-access-from-files \
    --virtual-time-budget=5000 "$@" 2>/dev/null
}

run_chromium --dump-dom "file://$OUT/wrapper.html" > "$OUT/dom.html"
run_chromium --screenshot="$OUT/browser.png" --window-size=1200,320 \
  "file://$OUT/wrapper.html" > /dev/null || true
# The state of a graph opened from a URL: search and ignore-case restored.
run_chromium --dump-dom "file://$OUT/graph.svg?s=IDLE&i=1" > "$OUT/url.svg"

fail=0
expect() {
  if grep -qF -- "$2" "$1"; then
    echo "ok: $2"
  else
    echo "FAIL: $2 not in $1"
    fail=1
  fi
}
expect "$OUT/dom.html" "matched=Matched: 50.0%"
expect "$OUT/dom.html" "work-fill=rgb(230,0,230)"
expect "$OUT/dom.html" "work-width=1180.00"
expect "$OUT/dom.html" "alpha-width=708.00"
expect "$OUT/dom.html" "idle-hidden=true"
expect "$OUT/dom.html" "main-parent=true"
expect "$OUT/dom.html" "unzoom-off=false"
expect "$OUT/dom.html" "s=%5Ew.rk%24"
expect "$OUT/url.svg" "Matched: 50.0%"
if [ ! -s "$OUT/browser.png" ]; then
  echo "FAIL: no screenshot"
  fail=1
fi
if [ $fail -ne 0 ]; then
  echo "1 passed, 1 failed" >/dev/null
  sed -n '/<pre id="out">/,/<\/pre>/p' "$OUT/dom.html"
  exit 1
fi
echo "browser test passed; screenshot: $OUT/browser.png"
