#!/usr/bin/env bash
# The linear HOG filter family's benchmark on the first OpenCL device gpudetect
# picks (or DEVICE): gpudetect-bench on dlib-frontalface (OpenCL profiling
# events, medians over FRAMES frames after WARMUP), on the device's default
# schedule with the evaluation it picks (hog-eval=auto), with the direct
# correlation and with the FFT path, and on the GPU schedule, then dlib's own
# detector on the same frames (gpudetect-bench-dlib: one thread, and every
# core's throughput; DLIB=0 leaves it out).
#   bench/run-hog-benchmarks.sh OUTDIR TAG     -> OUTDIR/hog-TAG.txt
# Env: FRAMES (20), WARMUP (2), BUILD (build), DEVICE, DLIB (1), TUNINGS
# (tuning strings separated by '|'; "" alone: the default only), ROUNDS (1:
# the whole sequence this many times, so that a loaded machine's drift
# shows in turns rather than in one side).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
[ $# -eq 2 ] || { echo "usage: $0 OUTDIR TAG" >&2; exit 2; }
out=$1 tag=$2
build=${BUILD:-$root/build}
frames=$build/bench-frames
mkdir -p "$out"
mapfile -t images < "$root/tests/data/parity-images.txt"
[ -f "$frames/1080p-crowd.pgm" ] || { mkdir -p "$frames"; "$build/tools/gpudetect-make-frames" "$frames" "${images[@]}"; }
[ -f "$build/models/dlib-frontalface.hogfilter" ] || { echo "no $build/models/dlib-frontalface.hogfilter (built where dlib is found)" >&2; exit 1; }
bench=("$build/tools/gpudetect-bench" --frames "${FRAMES:-20}" --warmup "${WARMUP:-2}" --no-opencv)
[ -z "${DEVICE:-}" ] || bench+=(--device "$DEVICE")
set=("$frames"/vga-faces.pgm "$frames"/vga-empty.pgm "$frames"/1080p-crowd.pgm "$frames"/1080p-empty.pgm)
IFS='|' read -r -a tunings <<< "${TUNINGS-|hog-eval=direct|hog-eval=fft|schedule=gpu}"
[ ${#tunings[@]} -gt 0 ] || tunings=("")
{
  for round in $(seq "${ROUNDS:-1}"); do
    [ "${ROUNDS:-1}" = 1 ] || echo "=== round $round"
    for t in "${tunings[@]}"; do
      echo "== dlib-frontalface, tuning '${t}'"
      "${bench[@]}" --model "$build/models/dlib-frontalface.hogfilter" --tuning "$t" "${set[@]}"
    done
    if [ "${DLIB:-1}" != 0 ]; then
      echo "== dlib"
      "$build/tools/gpudetect-bench-dlib" --frames "${FRAMES:-20}" --warmup "${WARMUP:-2}" "${set[@]}"
    fi
  done
} | tee "$out/hog-$tag.txt"
