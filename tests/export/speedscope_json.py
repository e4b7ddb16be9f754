#!/usr/bin/env python3
"""The speedscope export of every bundled capture, against ljp's own
outputs (no browser: speedscope_browser.py checks what the viewer shows):

  sysprof: the samples of all profiles, as stacks, are exactly the folded
           stacks (ljpfold); x1 streams: one profile per coroutine whose
           sample count and start time are those of the coroutine's samples
           in the event list (ljpdump --events), in the same order;
  memprof: each weight's profile sums per stack to the folded stacks of
           that weight;
  always:  the bytes are the same on a second run.

usage: speedscope_json.py LJPFOLD LJPDUMP TESTDATA OUTDIR
"""
import collections
import json
import os
import re
import subprocess
import sys

LJPFOLD, LJPDUMP, TESTDATA, OUT = sys.argv[1:5]
os.makedirs(OUT, exist_ok=True)
failures = []


def run(*cmd):
    return subprocess.run(cmd, check=True, capture_output=True).stdout


def check(what, got, want):
    if got != want:
        g, w = repr(got), repr(want)
        failures.append("%s: speedscope %s, ljp %s" % (what, g[:300], w[:300]))


def folded(path, *args):
    stacks = collections.Counter()
    for line in run(LJPFOLD, *args, path).decode().splitlines():
        stack, _, n = line.rpartition(" ")
        stacks[stack] += int(n)
    return +stacks


def stacks_of(doc, p, scale=1):
    frames = doc["shared"]["frames"]
    out = collections.Counter()
    for s, w in zip(p["samples"], p["weights"]):
        out[";".join(frames[i]["name"] for i in s)] += w // scale
    return +out


captures = sorted(os.path.join(d, f) for d, _, fs in os.walk(TESTDATA)
                  for f in fs if f.endswith(".bin"))
for cap in captures:
    name = os.path.basename(cap)
    out = os.path.join(OUT, name + ".json")
    raw = run(LJPFOLD, "--format=speedscope", cap)
    check(name + " deterministic", run(LJPFOLD, "--format=speedscope", cap),
          raw)
    with open(out, "wb") as f:
        f.write(raw)
    doc = json.loads(raw)
    summary = run(LJPDUMP, "--summary", cap).decode()
    profiles = doc["profiles"]
    if re.search(r"kind: +memprof", summary):
        check(name + " profiles", [p["name"] for p in profiles],
              ["alloc_objects", "alloc_space", "inuse_objects",
               "inuse_space"])
        for p, w in zip(profiles, ("events", "bytes", None, "live")):
            if w:
                check(name + " " + p["name"], stacks_of(doc, p),
                      folded(cap, "--weight=" + w))
        continue
    scale = 1
    if profiles[0]["unit"] == "nanoseconds":
        scale = profiles[0]["weights"][0]
    total = collections.Counter()
    for p in profiles:
        total.update(stacks_of(doc, p, scale))
    check(name + " stacks", +total, folded(cap))
    if "ljp x1" not in summary:
        check(name + " one profile", [p["name"] for p in profiles],
              ["all samples"])
        continue
    # Per coroutine: sample count, first time, and the order of its
    # samples, seen through the trace each sample ran in (or none).
    times = collections.defaultdict(list)
    traces = collections.defaultdict(list)
    for line in run(LJPDUMP, "--events", cap).decode().splitlines():
        # "sample TRACE t=..ms coro=1 TRACE [1] ..." or "sample TRACE [1]
        # @a.lua:12 t=..ms coro=1 ...": the trace, the time, the coroutine,
        # wherever the event line puts them before the stacks.
        head = line.split(" lua=")[0]
        m = re.search(r" sample .* t=([0-9.]+)ms coro=(\d+)", head)
        if m:
            c = int(m.group(2))
            tr = re.search(r"TRACE \[\d+\]", head)
            times[c].append(round(float(m.group(1)) * 1e6))
            traces[c].append(tr.group(0) if tr else "")
    key = lambda c: "coroutine %d" % c if c else "no coroutine"
    want = {key(c): (len(t), t[0], traces[c]) for c, t in times.items()}
    frames = doc["shared"]["frames"]
    got = {}
    for p in profiles:
        seq = []
        for st in p["samples"]:
            tr = [frames[i]["name"] for i in st
                  if frames[i]["name"].startswith("TRACE [")]
            seq.append(tr[-1].split("]")[0] + "]" if tr else "")
        got[p["name"]] = (len(p["samples"]), p["startValue"], seq)
    check(name + " coroutines", got, want)
    if not any(t for c in traces.values() for t in c):
        failures.append(name + ": no trace sample to check the order with")
    check(name + " main coroutine first", profiles[0]["name"], "coroutine 1")

for f in failures:
    print("FAIL:", f)
print("speedscope export: %d captures, %d checks failed" %
      (len(captures), len(failures)))
sys.exit(1 if failures else 0)
