#!/usr/bin/env bash
# A second model inside the objects of a first (docs/secondary.md): eyes inside
# faces on the crowd frames, beside the faces' own device time and OpenCV
# doing the eyes on the cut-out faces (gpudetect-bench-secondary).
#   bench/run-secondary-benchmarks.sh OUT.txt
# Env: TOOLS (build/tools), FRAMES (build/bench-frames: gpudetect-make-frames'),
# DEVICE, N (200 timed frames).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
[ $# -eq 1 ] || { echo "usage: $0 OUT.txt" >&2; exit 2; }
tools=${TOOLS:-$root/build/tools}
frames=${FRAMES:-$root/build/bench-frames}
dev=()
[ -z "${DEVICE:-}" ] || dev=(--device "$DEVICE")
{
  for primary in lbp-frontalface-improved haar-frontalface-default; do
    for secondary in haar-eye haar-eye-tree-eyeglasses; do
      "$tools/gpudetect-bench-secondary" "${dev[@]}" --primary "$primary" --secondary "$secondary" --margin 0.2 \
        --frames "${N:-200}" --warmup 20 --opencv-frames 20 \
        "$frames"/1080p-crowd.pgm "$frames"/crowd-1280x720.pgm "$frames"/vga-faces.pgm
      echo
    done
  done
} 2>&1 | grep -v 'libpng warning' | tee "$1"
