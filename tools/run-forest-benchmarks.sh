#!/usr/bin/env bash
# The random-forest family's benchmark on the first OpenCL device gpudetect
# picks (or DEVICE), every figure from gpudetect-bench (OpenCL profiling events,
# medians over FRAMES frames after WARMUP): the made models of
# test-forest-schedules (no trained forest ships yet; their stage thresholds are
# set on three parity images so that windows reach the last stages), on the
# standard frames, on the device's default schedule, on the GPU schedule with
# the default regroup stages (11,154,600), with none and with others.
#   tools/run-forest-benchmarks.sh OUTDIR TAG     -> OUTDIR/forest-TAG.txt
# Env: FRAMES (50), WARMUP (5), BUILD (build), DEVICE, MODELS (made-forest-4: 700 stages of one 7-node tree,
# 20x20 window, shrink 2, 4 levels an octave; the other made models accept so many windows on these frames that
# the bench's 16384 candidates overflow, which makes their objects depend on the device's order).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
[ $# -eq 2 ] || { echo "usage: $0 OUTDIR TAG" >&2; exit 2; }
out=$1 tag=$2
build=${BUILD:-$root/build}
frames=$build/bench-frames
mkdir -p "$out" "$build/forest-models"
mapfile -t images < "$root/tests/data/parity-images.txt"
[ -f "$frames/1080p-crowd.pgm" ] || { mkdir -p "$frames"; "$build/tools/gpudetect-make-frames" "$frames" "${images[@]}"; }
"$build/tests/test-forest-schedules" --write-models "$build/forest-models" "$frames"/parity/*.pgm >/dev/null
bench=("$build/tools/gpudetect-bench" --frames "${FRAMES:-50}" --warmup "${WARMUP:-5}" --no-opencv)
[ -z "${DEVICE:-}" ] || bench+=(--device "$DEVICE")
read -r -a models <<< "${MODELS:-made-forest-4}"
{
  for m in "${models[@]}"; do
    for t in "" "schedule=gpu" "schedule=gpu;forest-regroup=none" "schedule=gpu;forest-regroup=4,40,300" \
             "schedule=gpu;forest-regroup=20"; do
      echo "== $m, tuning '${t}'"
      "${bench[@]}" --model "$build/forest-models/$m.forest" --tuning "$t" \
        "$frames"/vga-faces.pgm "$frames"/vga-empty.pgm "$frames"/1080p-crowd.pgm "$frames"/1080p-empty.pgm
    done
  done
} | tee "$out/forest-$tag.txt"
