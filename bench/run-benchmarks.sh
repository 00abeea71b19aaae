#!/usr/bin/env bash
# Runs the whole benchmark on the first OpenCL device gpudetect picks (or
# DEVICE): engine stage times and OpenCV ratios (gpudetect-bench, 3 models x 4
# frames), parity with OpenCV on the parity images (gpudetect-bench --parity),
# and pipeline throughput (pipelines/benchmark.sh).  Writes into OUTDIR:
#   bench-<tag>-<model>.{txt,json}, parity-<tag>-<model>.txt, pipelines-<tag>.txt
# then `bench/bench_report.py` turns the JSON files into docs/benchmarks.md and a plot.
#   bench/run-benchmarks.sh OUTDIR TAG
# Env: FRAMES (200 timed frames per image), BUILD (build), DEVICE, SKIP_PIPELINES=1.
# The frames are made once into $BUILD/bench-frames by gpudetect-make-frames
# (needs OpenCV's image codecs); a host without them can be handed that folder.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
[ $# -eq 2 ] || { echo "usage: $0 OUTDIR TAG" >&2; exit 2; }
out=$1 tag=$2
build=${BUILD:-$root/build}
frames=$build/bench-frames
mkdir -p "$out"
if [ ! -f "$frames/1080p-crowd.pgm" ]; then
  mkdir -p "$frames"
  mapfile -t images < "$root/tests/data/parity-images.txt"
  "$build/tools/gpudetect-make-frames" "$frames" "${images[@]}"
fi
dev=()
[ -z "${DEVICE:-}" ] || dev=(--device "$DEVICE")
models=(lbp-frontalface-improved haar-frontalface-default haar-frontalface-alt2)
for m in "${models[@]}"; do
  "$build/tools/gpudetect-bench" --model "$m" "${dev[@]}" --frames "${FRAMES:-200}" --warmup 20 \
    --opencv-frames "${OPENCV_FRAMES:-20}" --json "$out/bench-$tag-$m.json" \
    "$frames"/vga-faces.pgm "$frames"/vga-empty.pgm "$frames"/1080p-crowd.pgm "$frames"/1080p-empty.pgm |
    tee "$out/bench-$tag-$m.txt"
  "$build/tools/gpudetect-bench" --parity --model "$m" "${dev[@]}" --min-f1 0.98 --min-iou 0.9 \
    "$frames"/parity/*.pgm > "$out/parity-$tag-$m.txt" || echo "parity $m: thresholds not met"
  tail -1 "$out/parity-$tag-$m.txt"
done
if [ -z "${SKIP_PIPELINES:-}" ]; then
  DEVICE=${DEVICE:-} bash "$root/pipelines/benchmark.sh" lbp-frontalface-improved haar-frontalface-default |
    tee "$out/pipelines-$tag.txt"
fi
