"use strict";
// Interactivity of ljpsvg flame graphs: click to zoom, reset, regex search
// with the matched share, details on hover, state kept in the URL
// (?x=..&y=.. zoomed frame, s= search, i=1 ignore case).
//
// Nothing runs over all frames at load time unless the URL asks for a zoom
// or a search: labels were fitted when the file was written, so even a
// graph of tens of thousands of frames opens at once.  Frame geometry is
// read lazily and cached on the element (el._d).
var svg, framesRoot, details, unzoomBtn, searchBtn, icBtn, matchedTxt;
var W, XPAD, FS, FW, NAMETYPE, INVERTED, SEARCHCOLOR;
var zoomedEl = null, searchTerm = null, ignoreCase = false;

function init(evt) {
  svg = document.documentElement;
  framesRoot = document.getElementById("frames");
  details = document.getElementById("details").firstChild;
  unzoomBtn = document.getElementById("unzoom");
  searchBtn = document.getElementById("search");
  icBtn = document.getElementById("ignorecase");
  matchedTxt = document.getElementById("matched");
  W = parseFloat(svg.getAttribute("width"));
  XPAD = parseFloat(svg.getAttribute("data-xpad"));
  FS = parseFloat(svg.getAttribute("data-fontsize"));
  FW = parseFloat(svg.getAttribute("data-fontwidth"));
  NAMETYPE = svg.getAttribute("data-nametype");
  INVERTED = svg.getAttribute("data-inverted") === "1";
  SEARCHCOLOR = "rgb(230,0,230)";

  framesRoot.addEventListener("mouseover", function (e) {
    var g = frameOf(e.target);
    if (g) details.nodeValue = NAMETYPE + " " + g.firstChild.textContent;
  });
  framesRoot.addEventListener("mouseout", function (e) {
    if (frameOf(e.target)) details.nodeValue = " ";
  });
  framesRoot.addEventListener("click", function (e) {
    var g = frameOf(e.target);
    if (!g) return;
    if (g.classList.contains("parent")) unzoom(); // clicking an ancestor zooms out to it
    zoom(g);
    saveState();
  });
  unzoomBtn.addEventListener("click", function () { unzoom(); saveState(); });
  searchBtn.addEventListener("click", searchPrompt);
  icBtn.addEventListener("click", function () {
    ignoreCase = !ignoreCase;
    icBtn.classList.toggle("on", ignoreCase);
    if (searchTerm !== null) search(searchTerm);
    saveState();
  });
  window.addEventListener("keydown", function (e) {
    if (e.keyCode === 114 || ((e.ctrlKey || e.metaKey) && e.keyCode === 70)) {
      e.preventDefault();
      searchPrompt();
    } else if (e.ctrlKey && e.keyCode === 73) {
      e.preventDefault();
      icBtn.dispatchEvent(new MouseEvent("click"));
    } else if (e.keyCode === 27) {
      unzoom();
      resetSearch();
      saveState();
    }
  });
  restoreState();
}

function frameOf(t) {
  while (t && t !== framesRoot) {
    if (t.classList && t.classList.contains("f")) return t;
    t = t.parentNode;
  }
  return null;
}

// Geometry and name of a frame as written in the file.
function info(g) {
  if (!g._d) {
    var r = g.children[1], title = g.firstChild.textContent;
    var cut = title.lastIndexOf(" (");
    g._d = {
      x: parseFloat(r.getAttribute("x")),
      w: parseFloat(r.getAttribute("width")),
      y: parseFloat(r.getAttribute("y")),
      fill: r.getAttribute("fill"),
      name: cut >= 0 ? title.substring(0, cut) : title,
      root: g.id === "root"
    };
  }
  return g._d;
}

function allFrames() {
  return framesRoot.getElementsByClassName("f");
}

// The same fitting rule the writer used: whole code points, ".." when cut.
function fitLabel(name, w) {
  var chars = Math.floor((w - 3) / (FS * FW));
  if (chars < 3) return "";
  var cps = Array.from(name);
  if (cps.length <= chars) return name;
  return cps.slice(0, chars - 2).join("") + "..";
}

function place(g, x, w, isParent) {
  var d = info(g), r = g.children[1], t = g.children[2];
  r.setAttribute("x", x.toFixed(2));
  r.setAttribute("width", w.toFixed(2));
  g.classList.remove("hide");
  g.classList.toggle("parent", isParent);
  var label = fitLabel(d.name, w);
  if (!t) {
    if (!label) return;
    t = document.createElementNS("http://www.w3.org/2000/svg", "text");
    t.setAttribute("y", (d.y + (parseFloat(r.getAttribute("height")) + 1) / 2 + 3).toFixed(2));
    g.appendChild(t);
  }
  t.setAttribute("x", (x + 3).toFixed(2));
  t.textContent = label;
}

function zoom(g) {
  var z = info(g), all = allFrames();
  var ratio = (W - 2 * XPAD) / z.w, eps = 0.006;
  zoomedEl = g;
  unzoomBtn.classList.remove("off");
  for (var i = 0; i < all.length; i++) {
    var e = all[i], d = info(e);
    var upper = INVERTED ? d.y < z.y : d.y > z.y;
    if (upper) {
      // An ancestor spans the zoomed frame; anything else at its depth goes.
      if (d.x <= z.x + eps && d.x + d.w >= z.x + z.w - eps)
        place(e, XPAD, W - 2 * XPAD, true);
      else
        e.classList.add("hide");
    } else if (d.x < z.x - eps || d.x >= z.x + z.w - eps) {
      e.classList.add("hide");
    } else {
      place(e, XPAD + (d.x - z.x) * ratio, d.w * ratio, false);
    }
  }
}

function unzoom() {
  if (!zoomedEl) return;
  zoomedEl = null;
  unzoomBtn.classList.add("off");
  var all = allFrames();
  for (var i = 0; i < all.length; i++) {
    var d = info(all[i]);
    place(all[i], d.x, d.w, false);
  }
}

function searchPrompt() {
  if (searchTerm !== null) {
    resetSearch();
    saveState();
    return;
  }
  var term = prompt("Enter a search term (regexp, allowed; empty to cancel)" +
                    (ignoreCase ? ", ignoring case" : "") +
                    "\nPress Ctrl-i to toggle case sensitivity", "");
  if (term) {
    search(term);
    saveState();
  }
}

function resetSearch() {
  searchTerm = null;
  var all = allFrames();
  for (var i = 0; i < all.length; i++)
    all[i].children[1].setAttribute("fill", info(all[i]).fill);
  searchBtn.classList.remove("on");
  searchBtn.firstChild.nodeValue = "Search";
  matchedTxt.classList.add("off");
  matchedTxt.firstChild.nodeValue = " ";
}

// Highlights frames whose name matches term; returns the matched share of
// the whole graph in percent (nested matches are counted once).
function search(term) {
  var re;
  try {
    re = new RegExp(term, ignoreCase ? "i" : "");
  } catch (err) {
    matchedTxt.classList.remove("off");
    matchedTxt.firstChild.nodeValue = "Bad regexp";
    return -1;
  }
  searchTerm = term;
  var all = allFrames(), spans = [];
  for (var i = 0; i < all.length; i++) {
    var d = info(all[i]);
    var hit = !d.root && re.test(d.name);
    all[i].children[1].setAttribute("fill", hit ? SEARCHCOLOR : d.fill);
    if (hit) spans.push([d.x, d.x + d.w]);
  }
  spans.sort(function (a, b) { return a[0] - b[0]; });
  var covered = 0, end = -Infinity;
  for (var j = 0; j < spans.length; j++) {
    var s = Math.max(spans[j][0], end);
    if (spans[j][1] > s) covered += spans[j][1] - s;
    if (spans[j][1] > end) end = spans[j][1];
  }
  var pct = 100 * covered / (W - 2 * XPAD);
  searchBtn.classList.add("on");
  searchBtn.firstChild.nodeValue = "Reset Search";
  matchedTxt.classList.remove("off");
  matchedTxt.firstChild.nodeValue = "Matched: " + pct.toFixed(1) + "%";
  return pct;
}

function saveState() {
  var p = [];
  if (zoomedEl) {
    var d = info(zoomedEl);
    p.push("x=" + d.x, "y=" + d.y);
  }
  if (searchTerm !== null) p.push("s=" + encodeURIComponent(searchTerm));
  if (ignoreCase) p.push("i=1");
  try {
    history.replaceState(null, "", (p.length ? "?" + p.join("&") : "?") + location.hash);
  } catch (err) {
    // Some viewers forbid URL changes (sandboxed or opaque origins).
  }
}

function restoreState() {
  var q = location.search.substring(1).split("&"), st = {};
  for (var i = 0; i < q.length; i++) {
    var kv = q[i].split("=");
    if (kv[0]) st[kv[0]] = decodeURIComponent((kv[1] || "").replace(/\+/g, " "));
  }
  if (st.i === "1") {
    ignoreCase = true;
    icBtn.classList.add("on");
  }
  if (st.s) search(st.s);
  if (st.x !== undefined && st.y !== undefined) {
    var x = parseFloat(st.x), y = parseFloat(st.y), all = allFrames();
    for (var j = 0; j < all.length; j++) {
      var d = info(all[j]);
      if (Math.abs(d.x - x) < 0.006 && Math.abs(d.y - y) < 0.006) {
        zoom(all[j]);
        break;
      }
    }
  }
}
