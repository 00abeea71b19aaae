#!/usr/bin/env bash
# Two builds of gpudetect's tools on the headline cases, in turns (A, B, A, B, ...), so that a change's effect is
# not confused with the device's drift: LBP-improved, Haar-default, WaldBoost (fast), the forest, dlib's detector
# (1080p-crowd, 1080p-empty), hog-people (1080p-people), and the tracker's 1000 templates of 16x16 in 143x143
# areas of a 1080p frame.  Prints each run's medians and, at the end, each case's median over the rounds.
#   bench/run-turns.sh FRAMES BUILD_A BUILD_B [ROUNDS]
# FRAMES: gpudetect-make-frames' folder; BUILD_*: folders with tools/gpudetect-bench and tools/gpudetect-bench-track.
# Env: FRAMES_N (200 timed frames), MODELS (the short names), DEVICE.
set -euo pipefail
[ $# -ge 3 ] || { echo "usage: $0 FRAMES BUILD_A BUILD_B [ROUNDS]" >&2; exit 2; }
frames=$1 a=$2 b=$3 rounds=${4:-3}
n=${FRAMES_N:-200}
models=${MODELS:-"lbp-frontalface-improved haar-frontalface-default waldboost-frontalface-fast forest-frontalface dlib-frontalface hog-people"}
dev=()
[ -z "${DEVICE:-}" ] || dev=(--device "$DEVICE")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for r in $(seq "$rounds"); do
  for side in A B; do
    build=$a
    [ $side = A ] || build=$b
    for m in $models; do
      imgs=("$frames/1080p-crowd.pgm" "$frames/1080p-empty.pgm")
      [ "$m" != hog-people ] || imgs=("$frames/1080p-people.pgm")
      "$build/tools/gpudetect-bench" --model "$m" "${dev[@]}" --frames "$n" --warmup 20 --json "$tmp/j.json" \
        "${imgs[@]}" > "$tmp/out.txt"
      python3 - "$tmp/j.json" "$side" "$r" "$m" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for x in d['results']:
    print(f"run {sys.argv[3]} {sys.argv[2]} {sys.argv[4]} {x['frame']} e2e {x['e2e_median_ms']:.4f} device {x['device_ms']:.4f}")
PY
    done
    "$build/tools/gpudetect-bench-track" --templates 1000 --template 16 --area 143 --frame 1920x1080 --frames 100 \
      --warmup 10 --cpu-frames 0 > "$tmp/track.txt" 2>&1 || true
    python3 - "$tmp/track.txt" "$side" "$r" <<'PY'
import re, sys
for line in open(sys.argv[1]):
    m = re.search(r'search ([0-9.]+) ms .*upload to readback ([0-9.]+) ms', line)
    if line.startswith('variant') and m:
        print(f"run {sys.argv[3]} {sys.argv[2]} track-1000x16 1080p e2e {m.group(2)} device {m.group(1)}")
        break
PY
  done
done | tee "$tmp/all.txt"
echo
echo "median over $rounds rounds (ms): case, A e2e, B e2e, B/A; A device, B device"
python3 - "$tmp/all.txt" <<'PY'
import statistics, sys, collections
runs = collections.defaultdict(list)
for line in open(sys.argv[1]):
    f = line.split()
    if len(f) >= 9 and f[0] == 'run':
        runs[(f[3], f[4], f[2])].append((float(f[6]), float(f[8])))
for case in sorted({(k[0], k[1]) for k in runs}):
    a, b = runs.get(case + ('A',), []), runs.get(case + ('B',), [])
    if not a or not b:
        continue
    ea, eb = statistics.median(x[0] for x in a), statistics.median(x[0] for x in b)
    da, db = statistics.median(x[1] for x in a), statistics.median(x[1] for x in b)
    print(f"{case[0]:28s} {case[1]:14s} {ea:8.4f} {eb:8.4f} {eb / ea:6.3f}   {da:8.4f} {db:8.4f}")
PY
