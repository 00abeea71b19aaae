#!/usr/bin/env bash
# gputrack's template search on one device: the two standard cases, 110 frames
# each (medians of the last 100), and the plain C++ loop on every CPU core.
#   tools/run-track-benchmarks.sh OUTDIR TAG [--device SEL] [more gpudetect-bench-track options]
# writes OUTDIR/bench-track-TAG.txt (docs/tracking.md holds the tables; BUILD: the build dir).  To
# compare the search's schedules and the upload from page-locked memory:
#   tools/run-track-benchmarks.sh docs/results h100-variants --variants 1x1,2x1,4x1,8x1,1x0,4x0,8x0
#   tools/run-track-benchmarks.sh docs/results h100-pinned --pinned --variants 1x1,4x0
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:?usage: $0 OUTDIR TAG [options]}
tag=${2:?usage: $0 OUTDIR TAG [options]}
shift 2
bench="${BUILD:-$root/build}/tools/gpudetect-bench-track"
mkdir -p "$out"
{
  # 1000 templates of 16x16 in 143x143 search areas (128 x 128 offsets each) of a 1080p frame
  "$bench" --templates 1000 --template 16 --area 143 --frame 1920x1080 --frames 100 --warmup 10 --cpu-frames 3 "$@"
  echo
  # 100 tracks of 32x32 searched +-32 px (65 x 65 offsets) in a 1080p frame
  "$bench" --templates 100 --template 32 --radius 32 --frame 1920x1080 --frames 100 --warmup 10 --cpu-frames 3 "$@"
} | tee "$out/bench-track-$tag.txt"
