#!/usr/bin/env python3
"""Golden outputs of the exports: the speedscope JSON byte for byte, and the
pprof message (gunzipped, so the golden does not depend on zlib's version)
byte for byte, for an x1 capture (labels, coroutines, traces), a memprof
capture and an ljp 2 capture with --interval.  UPDATE=1 rewrites them.

usage: golden.py LJPFOLD TESTDATA
"""
import gzip
import os
import subprocess
import sys

LJPFOLD, TESTDATA = sys.argv[1:3]
HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "golden")
# (name, capture, arguments of both formats, arguments of pprof only)
CASES = [
    ("x1_rich", "x1/x1_rich.bin", [], ["--label", "service=api"]),
    ("mp_basic_jitoff", "captures/mp_basic_jitoff.bin", [], []),
    ("sp_c_coro_jitoff_1ms", "captures/sp_c_coro_jitoff_1ms.bin",
     ["--interval=1ms"], []),
]
failed = 0
for name, rel, args, pprof_args in CASES:
    cap = os.path.join(TESTDATA, rel)
    outs = {
        ".pb": gzip.decompress(subprocess.run(
            [LJPFOLD, "--format=pprof", *args, *pprof_args, cap], check=True,
            capture_output=True).stdout),
        ".json": subprocess.run(
            [LJPFOLD, "--format=speedscope", *args, cap],
            check=True, capture_output=True).stdout,
    }
    for ext, data in outs.items():
        path = os.path.join(HERE, name + ext)
        if os.environ.get("UPDATE") == "1":
            with open(path, "wb") as f:
                f.write(data)
            continue
        with open(path, "rb") as f:
            want = f.read()
        if data != want:
            print("FAIL: %s%s differs from %s (UPDATE=1 to accept)" %
                  (name, ext, path))
            failed += 1
        else:
            print("ok: %s%s" % (name, ext))
sys.exit(1 if failed else 0)
