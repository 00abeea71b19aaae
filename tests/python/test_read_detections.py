#!/usr/bin/env python3
"""pipelines/read_detections.py on the test image prints the face that
OpenCV's CascadeClassifier finds there (lbp-frontalface-improved, scale 1.1,
3 neighbours, min 24: 88, 73, 90 x 90; tests/check/elements/gpudetect.c),
with its detection parameters.  Exits 77 (skipped) without PyGObject.
    test_read_detections.py EXAMPLE IMAGE.pgm"""
import re
import subprocess
import sys

example, image = sys.argv[1], sys.argv[2]
run = subprocess.run([sys.executable, example, image], capture_output=True, text=True, timeout=600)
if run.returncode == 77:
    print(run.stderr, end="")
    sys.exit(77)
print(run.stdout, end="")
print(run.stderr, end="", file=sys.stderr)
if run.returncode != 0:
    sys.exit(f"the example exited with {run.returncode}")
lines = run.stdout.splitlines()
if len(lines) != 1:
    sys.exit(f"expected one object, got {len(lines)} lines")
m = re.fullmatch(r"frame 0 pts 0:00:00\.000000000 face x=88 y=73 w=90 h=90 confidence=(\S+) label_id=0 "
                 r"box=\((\S+),(\S+)\)-\((\S+),(\S+)\)", lines[0])
if not m:
    sys.exit(f"unexpected line: {lines[0]}")
conf = float(m.group(1))
box = [float(v) for v in m.group(2, 3, 4, 5)]
want = [88 / 256, 73 / 300, 178 / 256, 163 / 300]
if not 0 < conf <= 1 or any(abs(a - b) > 1e-3 for a, b in zip(box, want)):
    sys.exit(f"unexpected confidence or box: {lines[0]}")
print("ok")
