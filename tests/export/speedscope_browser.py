#!/usr/bin/env python3
"""speedscope's own release build, served from 127.0.0.1 and run in
headless Chromium, loads ljp's speedscope and pprof exports; the page's DOM
must show our profile names, total weights and frames:

  - the title carries the file's name, the toolbar the first profile's;
  - the profile switcher lists every profile with its total weight;
  - the sandwich table has one row per frame with its self weight, and the
    self weights add up to the folded stacks' total (ljpfold).

Values are compared as speedscope prints them (its own formatters are
mirrored below), so a lost sample or frame shows as a different string.

usage: speedscope_browser.py LJPFOLD CHROMIUM SPEEDSCOPE_RELEASE TESTDATA OUT
"""
import collections
import html
import json
import os
import re
import shutil
import subprocess
import sys
import time

LJPFOLD, CHROMIUM, RELEASE, TESTDATA, OUT = sys.argv[1:6]
failures = []


def check(what, got, want):
    if got != want:
        failures.append("%s: speedscope %r, ljp %r" % (what, got, want))
    else:
        print("ok: %s" % what)


def fmt_time_ns(v):
    """speedscope's TimeFormatter for nanoseconds."""
    s = v * 1e-9
    if s / 60 >= 1:
        m = int(s // 60)
        return "%d:%02d" % (m, int(s - m * 60))
    if s >= 1:
        return "%.2fs" % s
    if s / 0.001 >= 1:
        return "%.2fms" % (s / 0.001)
    if s / 1e-6 >= 1:
        return "%.2f\u00b5s" % (s / 1e-6)
    return "%.2fns" % (s / 1e-9)


def fmt_bytes(v):
    if v < 1024:
        return "%d B" % v
    for unit in ("KB", "MB", "GB"):
        v /= 1024
        if v < 1024 or unit == "GB":
            return "%.2f %s" % (v, unit)


def fmt(unit, v):
    if unit == "nanoseconds":
        return fmt_time_ns(v)
    if unit == "bytes":
        return fmt_bytes(v)
    return "{:,}".format(v)  # Number.toLocaleString in en-US


def folded(path, *args):
    stacks = collections.Counter()
    out = subprocess.run([LJPFOLD, *args, path], check=True,
                         capture_output=True).stdout.decode()
    for line in out.splitlines():
        stack, _, n = line.rpartition(" ")
        stacks[stack] += int(n)
    return stacks


# ---- the page --------------------------------------------------------------

site = os.path.join(OUT, "site")
shutil.rmtree(site, ignore_errors=True)
shutil.copytree(RELEASE, os.path.join(site, "app"))
server = subprocess.Popen([sys.executable, "-u", "-m", "http.server", "0",
                           "--bind", "127.0.0.1", "--directory", site],
                          stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
port = None
line = server.stdout.readline().decode()
m = re.search(r"port (\d+)", line)
if not m:
    server.kill()
    sys.exit("FAIL: http.server did not start: %r" % line)
port = int(m.group(1))


def load(fname):
    """The DOM of speedscope's sandwich view with site/fname loaded.  The
    profile arrives by fetch, which virtual time does not wait for on a
    busy machine: a page dumped before the table was drawn is loaded again
    with a longer budget."""
    url = ("http://127.0.0.1:%d/app/index.html#profileURL="
           "http://127.0.0.1:%d/%s&view=sandwich" % (port, port, fname))
    for attempt in range(5):
        dom = subprocess.run(
            [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu",
             "--no-first-run", "--disable-background-networking",
             "--window-size=1400,8000",
             "--virtual-time-budget=%d" % (10000 * (attempt + 1)),
             "--dump-dom", url],
            capture_output=True, timeout=180).stdout.decode("utf-8",
                                                            "replace")
        if "Symbol Name" in dom and "<td" in dom.split("Symbol Name", 1)[1]:
            break
        time.sleep(1)
    with open(os.path.join(OUT, fname + ".dom.html"), "w") as f:
        f.write(dom)
    dom = re.sub(r"<style.*?</style>|<svg.*?</svg>", "", dom, flags=re.S)
    dom = re.sub(r' (?:class|style)="[^"]*"', "", dom)
    return dom


def title(dom):
    m = re.search(r"<title>(.*?) - speedscope</title>", dom)
    return html.unescape(m.group(1)) if m else None


def switcher(dom):
    """[(profile name, total)] of the profile switcher."""
    return [(html.unescape(a), html.unescape(b)) for a, b in re.findall(
        r'<tr title="[^"]*"><td>\d+</td><td><span>(.*?)</span></td>'
        r'<td>(.*?)</td></tr>', dom)]


def sandwich(dom):
    """[(frame name, self)] of the sandwich table."""
    rows = re.findall(r"<tr><td>([^<]*)<div>.*?</td><td>([^<]*)<div>.*?</td>"
                      r"<td[^>]*><span></span>(.*?)</td></tr>", dom)
    return sorted((html.unescape(n), re.sub(r" \(.*\)$", "", s))
                  for _, s, n in rows)


def profile_self(doc, i):
    """[(frame name, self)] of profile i of a speedscope file, by frame."""
    p = doc["profiles"][i]
    frames = doc["shared"]["frames"]
    selfw = collections.Counter()
    used = set()
    for stack, w in zip(p["samples"], p["weights"]):
        used.update(stack)
        selfw[stack[-1]] += w
    return sorted((frames[f]["name"], fmt(p["unit"], selfw[f])) for f in used)


def case_speedscope(capture, interval_ns, fname):
    subprocess.run([LJPFOLD, "--format=speedscope", "-o",
                    os.path.join(site, fname), capture], check=True)
    with open(os.path.join(site, fname)) as f:
        doc = json.load(f)
    dom = load(fname)
    check(fname + " title", title(dom), doc["name"])
    profiles = doc["profiles"]
    unit = profiles[0]["unit"]
    if len(profiles) > 1:
        check(fname + " profiles", switcher(dom),
              [(p["name"], fmt(p["unit"], sum(p["weights"])))
               for p in profiles])
        check(fname + " toolbar", profiles[0]["name"] + " <span>(1/%d)</span>"
              % len(profiles) in dom, True)
    rows = sandwich(dom)
    if not rows:
        failures.append(fname + ": no frame in the sandwich table")
    check(fname + " frames and self weights (%d)" % len(rows), rows,
          profile_self(doc, 0))
    if interval_ns is not None:
        total = sum(folded(capture).values()) * interval_ns
        check(fname + " total of all profiles",
              sum(sum(p["weights"]) for p in profiles), total)
    return unit


def case_pprof(capture, fname, unit, scale, *args):
    subprocess.run([LJPFOLD, "--format=pprof", "-o", os.path.join(site, fname),
                    *args, capture], check=True)
    dom = load(fname)
    check(fname + " title", title(dom), fname)
    stacks = folded(capture)
    selfw = collections.Counter()
    names = set()
    for s, n in stacks.items():
        fr = s.split(";")
        names.update(fr)
        selfw[fr[-1]] += n * scale
    rows = sandwich(dom)
    if not rows:
        failures.append(fname + ": no frame in the sandwich table")
    check(fname + " frames and self weights (%d)" % len(rows), rows,
          sorted((n, fmt(unit, selfw[n])) for n in names))
    return rows


def check_schema():
    """Every capture's speedscope file against the schema speedscope ships
    (file-format-schema.json, JSON Schema draft 7)."""
    try:
        import jsonschema
    except ImportError:
        failures.append("python3's jsonschema module is missing "
                        "(tests/deps.sh test installs python3-jsonschema)")
        return
    with open(os.path.join(RELEASE, "file-format-schema.json")) as f:
        schema = json.load(f)
    validator = jsonschema.Draft7Validator(schema)
    n = 0
    for d, _, fs in sorted(os.walk(TESTDATA)):
        for name in sorted(fs):
            if not name.endswith(".bin"):
                continue
            doc = json.loads(subprocess.run(
                [LJPFOLD, "--format=speedscope", os.path.join(d, name)],
                check=True, capture_output=True).stdout)
            errors = [e.message for e in validator.iter_errors(doc)]
            if errors:
                failures.append("%s: not a speedscope file: %s" %
                                (name, errors[:3]))
            n += 1
    check("%d speedscope files valid against the schema" % n, n >= 20, True)


try:
    check_schema()
    x1 = os.path.join(TESTDATA, "x1", "x1_rich.bin")
    coro = os.path.join(TESTDATA, "captures", "sp_c_coro_jitoff_1ms.bin")
    mem = os.path.join(TESTDATA, "captures", "mp_basic_jitoff.bin")
    # x1: a profile per coroutine, times in ns from the stream's interval.
    check("x1 unit", case_speedscope(x1, 1000000, "x1.json"), "nanoseconds")
    # ljp 2 without an interval: one profile of sample counts.
    check("ljp 2 unit", case_speedscope(coro, 1, "coro.json"), "none")
    # memprof: four profiles, the first alloc_objects.
    case_speedscope(mem, None, "mem.json")
    # pprof files: speedscope reads the last sample type (cpu ns).
    case_pprof(x1, "x1.pb.gz", "nanoseconds", 1000000)
    case_pprof(coro, "coro.pb.gz", "nanoseconds", 2000000, "--interval=2ms")
finally:
    server.kill()
    server.wait()

for f in failures:
    print("FAIL:", f)
sys.exit(1 if failures else 0)
