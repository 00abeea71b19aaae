#!/usr/bin/env bash
# The random-forest family's benchmark on the first OpenCL device gpudetect
# picks (or DEVICE), every figure from gpudetect-bench (OpenCL profiling events,
# medians over FRAMES frames after WARMUP) on the standard frames:
# - the shipped model (forest-frontalface) on the device's default schedule,
#   then on the GPU schedule with and without regrouping (forest-regroup=none),
#   in one run so that their ratios compare like with like (the other two
#   optimisations' keys are gone: docs/forest.md has their ratios);
# - the made models of test-forest-schedules (MADE=1).
#   bench/run-forest-benchmarks.sh OUTDIR TAG     -> OUTDIR/forest-TAG.txt
# Env: FRAMES (200), WARMUP (20), BUILD (build), DEVICE, MODELS (forest-frontalface), MADE (0: made-forest-4,
# 700 stages of one 7-node tree, also with regroup stages 4,40,300 and 20).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
[ $# -eq 2 ] || { echo "usage: $0 OUTDIR TAG" >&2; exit 2; }
out=$1 tag=$2
build=${BUILD:-$root/build}
frames=$build/bench-frames
mkdir -p "$out"
mapfile -t images < "$root/tests/data/parity-images.txt"
[ -f "$frames/1080p-crowd.pgm" ] || { mkdir -p "$frames"; "$build/tools/gpudetect-make-frames" "$frames" "${images[@]}"; }
export GPUDETECT_MODEL_PATH=${GPUDETECT_MODEL_PATH:-$root/models}
bench=("$build/tools/gpudetect-bench" --frames "${FRAMES:-200}" --warmup "${WARMUP:-20}" --no-opencv)
[ -z "${DEVICE:-}" ] || bench+=(--device "$DEVICE")
read -r -a models <<< "${MODELS:-forest-frontalface}"
run () { # MODEL TUNING
  echo "== $1, tuning '$2'"
  "${bench[@]}" --model "$1" --tuning "$2" \
    "$frames"/vga-faces.pgm "$frames"/vga-empty.pgm "$frames"/1080p-crowd.pgm "$frames"/1080p-empty.pgm
}
{
  for m in "${models[@]}"; do
    for t in "" "schedule=gpu" "schedule=gpu;forest-regroup=none"; do
      run "$m" "$t"
    done
  done
  if [ "${MADE:-0}" = 1 ]; then
    mkdir -p "$build/forest-models"
    "$build/tests/test-forest-schedules" --write-models "$build/forest-models" "$frames"/parity/*.pgm >/dev/null
    for t in "" "schedule=gpu" "schedule=gpu;forest-regroup=none" "schedule=gpu;forest-regroup=4,40,300" \
             "schedule=gpu;forest-regroup=20"; do
      run "$build/forest-models/made-forest-4.forest" "$t"
    done
  fi
} | tee "$out/forest-$tag.txt"
