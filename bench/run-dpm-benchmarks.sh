#!/usr/bin/env bash
# The deformable part model family's benchmark on the first OpenCL device
# gpudetect picks (or DEVICE): gpudetect-bench on inriaperson.xml (OpenCL
# profiling events, medians over FRAMES frames after WARMUP), on the device's
# default schedule and on the other one, then OpenCV's cv::dpm on the same
# frames (gpudetect-bench-dpm: OpenCV's threads and one thread), where it is
# built and its OpenCV libraries load (OPENCV=0 leaves it out).
#   bench/run-dpm-benchmarks.sh OUTDIR TAG     -> OUTDIR/dpm-TAG.txt
# and, with CHECK=1, the device against the host reference (test-dpm-device:
# features, windows and objects at threshold -1, on the people frames and the
# parity images made as PGM in BUILD/tests; no OpenCV needed)
#                                            -> OUTDIR/dpm-check-TAG.txt
# Env: FRAMES (5), WARMUP (1), OCV_FRAMES (3), BUILD (build), DEVICE, OPENCV (1), CHECK (0),
# SCHEDULES ("cpu gpu"), MODEL (BUILD/models/inriaperson.xml, copied there at
# configure time).
# The frames are made on a host with OpenCV (gpudetect-make-frames,
# gpudetect-bench-dpm --write-frames) into BUILD/bench-frames, which a GPU
# host without OpenCV then uses as they are.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
[ $# -eq 2 ] || { echo "usage: $0 OUTDIR TAG" >&2; exit 2; }
out=$1 tag=$2
build=${BUILD:-$root/build}
frames=$build/bench-frames
model=${MODEL:-$build/models/inriaperson.xml}
mkdir -p "$out"
[ -f "$model" ] || { echo "no $model (copied from opencv-doc at configure time)" >&2; exit 1; }
mapfile -t images < "$root/tests/data/parity-images.txt"
[ -f "$frames/1080p-empty.pgm" ] || { mkdir -p "$frames"; "$build/tools/gpudetect-make-frames" "$frames" "${images[@]}"; }
[ -f "$frames/people-1080p.pgm" ] || "$build/tools/gpudetect-bench-dpm" --write-frames "$frames"
bench=("$build/tools/gpudetect-bench" --frames "${FRAMES:-5}" --warmup "${WARMUP:-1}" --no-opencv)
[ -z "${DEVICE:-}" ] || bench+=(--device "$DEVICE")
set=("$frames"/people-768x576.pgm "$frames"/vga-empty.pgm "$frames"/people-1080p.pgm "$frames"/1080p-empty.pgm)
{
  for s in ${SCHEDULES:-cpu gpu}; do
    echo "== inriaperson, tuning 'schedule=$s'"
    "${bench[@]}" --model "$model" --tuning "schedule=$s" "${set[@]}"
  done
  ocv=$build/tools/gpudetect-bench-dpm
  rc=1
  [ ! -x "$ocv" ] || { "$ocv" >/dev/null 2>&1 && rc=0 || rc=$?; } # its usage: 2; libraries missing: 127
  if [ "${OPENCV:-1}" = 0 ]; then
    echo "== cv::dpm: left out (OPENCV=0)"
  elif [ "$rc" != 2 ]; then
    echo "== cv::dpm: left out ($ocv not built, or its OpenCV libraries do not load here)"
  else
    echo "== cv::dpm"
    "$ocv" --model "$model" --frames "${OCV_FRAMES:-3}" --warmup 1 "${set[@]}"
  fi
} | tee "$out/dpm-$tag.txt"
if [ "${CHECK:-0}" = 1 ]; then
  mapfile -t pgms < <(ls "$build"/tests/*.pgm 2>/dev/null)
  "$build/tests/test-dpm-device" --model "$model" --threshold -1 "$frames"/people-768x576.pgm "$frames"/people-1080p.pgm \
    "${pgms[@]}" 2>&1 | tee "$out/dpm-check-$tag.txt"
fi
