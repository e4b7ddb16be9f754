#!/usr/bin/env python3
"""Checks one capture's pprof export against ljp's own outputs, reading the
pprof file with go tool pprof (the reference client):

  sysprof: -top totals and every function's flat count equal the folded
           stacks' (ljpfold), -traces stacks (labels aside) equal the
           folded stacks, cpu nanoseconds equal samples x interval;
  memprof: alloc_objects / alloc_space equal the memprof report's
           ALLOCATIONS + REALLOCATIONS totals (ljpdump), inuse_objects /
           inuse_space equal the blocks still live in the event list
           (ljpdump --events), -traces stacks equal the folded stacks.

usage: pprof_check.py LJPFOLD LJPDUMP CAPTURE OUTDIR
"""
import collections
import os
import re
import subprocess
import sys

LJPFOLD, LJPDUMP, CAPTURE, OUT = sys.argv[1:5]
NAME = os.path.basename(CAPTURE)
failures = []


def run(*cmd):
    return subprocess.run(cmd, check=True, capture_output=True).stdout.decode(
        "utf-8", "replace")


def check(what, got, want):
    if got != want:
        failures.append("%s: %s: pprof %r, ljp %r" % (NAME, what, got, want))


def pprof(*args):
    return run("go", "tool", "pprof", *args, PB)


def folded(*args):
    stacks = collections.Counter()
    for line in run(LJPFOLD, *args, CAPTURE).splitlines():
        stack, _, n = line.rpartition(" ")
        stacks[stack] += int(n)
    return stacks


def top(index):
    """total and {function: flat} of go tool pprof -top."""
    text = pprof("-top", "-nodecount=1000000", "-nodefraction=0",
                 "-unit=ns" if index == "cpu" else "-unit=byte",
                 "-sample_index=" + index)
    total = None
    flat = {}
    rows = False
    for line in text.splitlines():
        m = re.search(r"of ([0-9.]+)(\w*) total", line)
        if m and total is None:
            total = int(float(m.group(1)))
        if line.strip().startswith("flat"):
            rows = True
            continue
        if rows and line.strip():
            f = line.split(None, 5)
            v = int(re.match(r"-?[0-9]+", f[0]).group(0))
            if v:
                flat[f[5]] = flat.get(f[5], 0) + v
    if total is None:  # an empty profile: pprof prints no total line
        total = 0
    return total, flat


def traces(index):
    """{folded stack: value} of go tool pprof -traces (labels dropped)."""
    text = pprof("-traces", "-sample_index=" + index, "-unit=byte")
    stacks = collections.Counter()
    for block in text.split("-----------+")[1:]:
        frames, value = [], None
        for line in block.splitlines()[1:]:
            if re.match(r"^\s+[\w.-]+:\s", line) and value is None:
                continue  # a label line
            m = re.match(r"^\s*(-?[0-9.]+)(\w*)\s{3}(.*)$", line)
            if m and value is None:
                value = int(float(m.group(1)))
                frames.append(m.group(3))
            elif line.strip() and value is not None:
                frames.append(line.strip())
        if value is not None:
            stacks[";".join(reversed(frames))] += value
    return stacks


def leaf_flat(stacks):
    flat = collections.Counter()
    for s, n in stacks.items():
        flat[s.split(";")[-1]] += n
    return {k: v for k, v in flat.items() if v}


kind = "memprof" if re.search(r"kind: +memprof", run(LJPDUMP, "--summary",
                                                    CAPTURE)) else "sysprof"
PB = os.path.join(OUT, NAME + ".pb.gz")
run(LJPFOLD, "--format=pprof", "-o", PB, CAPTURE)

if kind == "sysprof":
    want = folded()
    total, flat = top("samples")
    check("total samples", total, sum(want.values()))
    check("flat per function", flat, leaf_flat(want))
    check("stacks", dict(traces("samples")), dict(+want))
    m = re.search(r"interval: +([0-9.]+)(ns|us|ms|s)\n",
                  run(LJPDUMP, "--summary", CAPTURE))
    if m:
        ns = round(float(m.group(1)) * {"ns": 1, "us": 1e3, "ms": 1e6,
                                        "s": 1e9}[m.group(2)])
        total, _ = top("cpu")
        check("cpu ns", total, sum(want.values()) * ns)
else:
    report = run(LJPDUMP, CAPTURE)
    events = space = 0
    section = None
    for line in report.splitlines():
        if line in ("ALLOCATIONS", "REALLOCATIONS", "DEALLOCATIONS"):
            section = line
        # "+123B" (current report) or "+123 bytes" (older LuaJIT era)
        m = re.match(r"^(.*): (\d+) events\t\+(\d+)(?:B| bytes)\t"
                     r"-(\d+)(?:B| bytes)$", line)
        if m and section in ("ALLOCATIONS", "REALLOCATIONS"):
            events += int(m.group(2))
            space += int(m.group(3))
    check("alloc_objects", top("alloc_objects")[0], events)
    check("alloc_space", top("alloc_space")[0], space)
    live = {}
    for line in run(LJPDUMP, "--events", CAPTURE).splitlines():
        f = line.split()
        if len(f) < 2 or f[1] not in ("ALLOC", "FREE", "REALLOC"):
            continue
        old = re.search(r"old=(0x[0-9a-f]+)/(\d+)", line)
        new = re.search(r"new=(0x[0-9a-f]+)/(\d+)", line)
        if old and f[1] != "ALLOC":
            live.pop(old.group(1), None)
        if new and f[1] != "FREE":
            live[new.group(1)] = int(new.group(2))
    check("inuse_objects", top("inuse_objects")[0], len(live))
    check("inuse_space", top("inuse_space")[0], sum(live.values()))
    for weight, index in (("bytes", "alloc_space"), ("events",
                          "alloc_objects"), ("live", "inuse_space")):
        want = +folded("--weight=" + weight)
        check(index + " stacks", dict(+traces(index)), dict(want))

for f in failures:
    print("FAIL:", f)
print("%s: %s, %d checks failed" % (NAME, kind, len(failures)))
sys.exit(1 if failures else 0)
