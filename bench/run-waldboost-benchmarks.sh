#!/usr/bin/env bash
# The WaldBoost family's benchmark on the first OpenCL device gpudetect picks
# (or DEVICE), every figure from gpudetect-bench (OpenCL profiling events,
# medians over FRAMES frames after warm-up), written as JSON into OUTDIR:
#   wb-<tag>-<model>.json           the shipped models on the standard frames
#   wb-<tag>-divisors-<model>-<d>.json   staged reduction divisors: device time and lost candidates
#   wb-<tag>-sync-<model>-<f>-<s>.json   stages before the first survivor count, and between counts
#   wb-<tag>-res-<model>.json       the crowd frame at 640x352 ... 1920x1080; for OpenCV xobjdetect's
#                                   model (tests/data) beside WBDetector::detect (CPU)
# then `bench/waldboost_report.py OUTDIR TAG` prints the tables of docs/benchmarks.md.
#   bench/run-waldboost-benchmarks.sh OUTDIR TAG
# Env: FRAMES (200), BUILD (build), DEVICE, OPENCV_FRAMES (10), MODELS (the two shipped WaldBoost models),
# SKIP_XOBJDETECT=1.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
[ $# -eq 2 ] || { echo "usage: $0 OUTDIR TAG" >&2; exit 2; }
out=$1 tag=$2
build=${BUILD:-$root/build}
frames=$build/bench-frames
export GPUDETECT_MODEL_PATH="$root/models${GPUDETECT_MODEL_PATH:+:$GPUDETECT_MODEL_PATH}"
mkdir -p "$out"
if [ ! -f "$frames/crowd-640x352.pgm" ]; then
  mkdir -p "$frames"
  mapfile -t images < "$root/tests/data/parity-images.txt"
  "$build/tools/gpudetect-make-frames" "$frames" "${images[@]}"
fi
bench=("$build/tools/gpudetect-bench" --warmup 20)
[ -z "${DEVICE:-}" ] || bench+=(--device "$DEVICE")
n=${FRAMES:-200}
read -r -a models <<< "${MODELS:-waldboost-frontalface-fast waldboost-frontalface}"
for m in "${models[@]}"; do
  "${bench[@]}" --model "$m" --frames "$n" --no-opencv --json "$out/wb-$tag-$m.json" \
    "$frames"/vga-faces.pgm "$frames"/vga-empty.pgm "$frames"/1080p-crowd.pgm "$frames"/1080p-empty.pgm
done
for m in "${models[@]}"; do
  for d in 8,4,4,4 4,4,4,4 8,8,4,4 16,4,4,4 8,4,4 16,8 32,4,4 64,8 4,4,4,4,4,4 2,2,2,2,2,2; do
    "${bench[@]}" --model "$m" --frames "$((n / 2))" --no-opencv --tuning "waldboost-divisors=$d" \
      --json "$out/wb-$tag-divisors-$m-${d//,/-}.json" "$frames"/1080p-crowd.pgm "$frames"/vga-faces.pgm >/dev/null
  done
  for f in 1 2 4 8 16; do
    for s in 1 2 4 8; do
      "${bench[@]}" --model "$m" --frames "$((n / 2))" --no-opencv \
        --tuning "waldboost-sync-first=$f;waldboost-sync-step=$s" \
        --json "$out/wb-$tag-sync-$m-$f-$s.json" "$frames"/1080p-crowd.pgm "$frames"/1080p-empty.pgm >/dev/null
    done
  done
done
res=("$frames"/crowd-640x352.pgm "$frames"/crowd-960x544.pgm "$frames"/crowd-1280x720.pgm
     "$frames"/crowd-1600x896.pgm "$frames"/1080p-crowd.pgm)
for m in "${models[@]}"; do
  "${bench[@]}" --model "$m" --frames "$n" --no-opencv --json "$out/wb-$tag-res-$m.json" "${res[@]}"
done
[ -n "${SKIP_XOBJDETECT:-}" ] ||
  "${bench[@]}" --model "$root/tests/data/xobjdetect-lfw-face.xml" --frames "$n" --opencv-frames "${OPENCV_FRAMES:-10}" \
    --json "$out/wb-$tag-res-xobjdetect-lfw-face.json" "${res[@]}"
