#!/usr/bin/env bash
# gputrack's template search on one device: the two standard cases, 110 frames
# each (medians of the last 100), and the plain C++ loop on every CPU core.
#   bench/run-track-benchmarks.sh OUTDIR TAG [--device SEL] [more gpudetect-bench-track options]
# writes OUTDIR/bench-track-TAG.txt (docs/tracking.md holds the tables; BUILD: the build dir).
# CASES: which of the two, "a b" by default (a: 1000 templates 16x16 in 143x143 areas; b: 100 of 32x32
# searched +-32 px).  To compare the search's schedules and the upload from page-locked memory:
#   bench/run-track-benchmarks.sh bench/results h100-variants --pinned --variants 4x1,t4x0,t5x0,t4x0n
# The second case end to end as decoders give frames (NV12, I420), and behind gpudetect (--shared: the frame
# on the device already):
#   CASES=b bench/run-track-benchmarks.sh bench/results h100-nv12 --pinned --format nv12 --variants 4x1,t4x0
# Template sizes by search radii for 100 templates (the table of docs/tracking.md):
#   SWEEP=8,16,32,64:8,16,32,64 bench/run-track-benchmarks.sh bench/results h100-sweep --variants default,t4x0
# Templates of 48 and 64 rows (the tiles take 64 rows in chunks in 48 KB), and small sizes to large in 32 KB:
#   SWEEP=48,64:1,8,16,32,64 bench/run-track-benchmarks.sh bench/results h100-sweep-64 --cpu-frames 1 --variants default,t8x0,4x1
#   SWEEP=8,32,64:1,16,64 bench/run-track-benchmarks.sh bench/results h100-sweep-32k --cpu-frames 1 --local-bytes 32768 --variants default
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:?usage: $0 OUTDIR TAG [options]}
tag=${2:?usage: $0 OUTDIR TAG [options]}
shift 2
bench="${BUILD:-$root/build}/tools/gpudetect-bench-track"
cases=${CASES:-a b}
mkdir -p "$out"
# every run even when one fails (a variant's results differing from the C++ loop's: exit status 1), the
# status at the end
{
  rc=0
  if [ -n "${SWEEP:-}" ]; then
    echo "\$ gpudetect-bench-track --templates 100 --frame 1920x1080 --frames 100 --warmup 10 --cpu-frames 3 --sweep $SWEEP $*"
    "$bench" --templates 100 --frame 1920x1080 --frames 100 --warmup 10 --cpu-frames 3 --sweep "$SWEEP" "$@" || rc=$?
    exit $rc
  fi
  for c in $cases; do
    case $c in
    a) # 1000 templates of 16x16 in 143x143 search areas (128 x 128 offsets each) of a 1080p frame
      args=(--templates 1000 --template 16 --area 143) ;;
    b) # 100 tracks of 32x32 searched +-32 px (65 x 65 offsets) in a 1080p frame
      args=(--templates 100 --template 32 --radius 32) ;;
    *) echo "unknown case $c" >&2; exit 2 ;;
    esac
    echo "\$ gpudetect-bench-track ${args[*]} --frame 1920x1080 --frames 100 --warmup 10 --cpu-frames 3 $*"
    "$bench" "${args[@]}" --frame 1920x1080 --frames 100 --warmup 10 --cpu-frames 3 "$@" || { rc=$?; echo "exit status $rc"; }
    echo
  done
  exit $rc
} 2>&1 | tee "$out/bench-track-$tag.txt"
