#!/usr/bin/env bash
# The people detector's benchmark (hog-people: OpenCV's HOGDescriptor people
# detector on the device) on the first OpenCL device gpudetect picks (or
# DEVICE): gpudetect-bench (OpenCL profiling events per command, end to end
# submit to grouped boxes; medians over FRAMES frames after WARMUP) on each
# schedule of TUNINGS, then OpenCV's HOGDescriptor::detectMultiScale on the
# CPU on the same frames with the model file's weights, OpenCV's threads on
# every core and one thread (gpudetect-bench-opencv-hog), where OpenCV's
# runtime is present (SKIP_OPENCV=1: not at all).  PARITY=1: first the
# exactness tests against OpenCV on this device (test-hog-dt: levels,
# gradients, block features bit for bit; test-hog-people-parity: raw windows
# and objects at hitThreshold 0, -0.5, 0.5), on the default schedule.
#   bench/run-hogpeople-benchmarks.sh OUTDIR TAG     -> OUTDIR/hogpeople-TAG.txt
#   (PARITY=1: and OUTDIR/hog-dt-TAG.txt, OUTDIR/hogpeople-parity-TAG.txt)
# Env: FRAMES (100), WARMUP (10), OPENCV_FRAMES (20), BUILD (build), DEVICE,
# TUNINGS (tuning strings separated by '|'; "|schedule=gpu": the device's
# default schedule, then the GPU schedule), SKIP_OPENCV.
# Builds nothing: runs $BUILD/tools/gpudetect-bench on $BUILD/models/
# hog-people.hogfilter and the frames in $BUILD/bench-frames (made here by
# gpudetect-make-frames where they are missing: it needs OpenCV's codecs).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
[ $# -eq 2 ] || { echo "usage: $0 OUTDIR TAG" >&2; exit 2; }
out=$1 tag=$2
build=${BUILD:-$root/build}
frames=$build/bench-frames
model=$build/models/hog-people.hogfilter
mkdir -p "$out"
if [ ! -f "$frames/1080p-people.pgm" ]; then
  mapfile -t images < "$root/tests/data/parity-images.txt"
  mkdir -p "$frames"
  "$build/tools/gpudetect-make-frames" "$frames" "${images[@]}"
fi
[ -f "$model" ] || { echo "no $model (built where OpenCV is found)" >&2; exit 1; }
set=("$frames"/vga-people.pgm "$frames"/1080p-people.pgm "$frames"/1080p-crowd.pgm)
if [ "${PARITY:-0}" = 1 ]; then
  # the tests' grey images (the parity images, vtest.avi frames), made by the build
  tests=$build/tests
  export GPUDETECT_MODEL_PATH=$build/models${GPUDETECT_MODEL_PATH:+:$GPUDETECT_MODEL_PATH}
  "$tests/test-hog-dt" "$tests"/*.pgm > "$out/hog-dt-$tag.txt" 2>&1 || echo "test-hog-dt failed (status $?)"
  tail -3 "$out/hog-dt-$tag.txt"
  "$tests/test-hog-people-parity" --threshold -0.5 --threshold 0.5 "$tests"/*.pgm \
    > "$out/hogpeople-parity-$tag.txt" 2>&1 || echo "test-hog-people-parity failed (status $?)"
  grep -E "^TOTAL|passed" "$out/hogpeople-parity-$tag.txt" || true
fi
bench=("$build/tools/gpudetect-bench" --frames "${FRAMES:-100}" --warmup "${WARMUP:-10}" --no-opencv)
[ -z "${DEVICE:-}" ] || bench+=(--device "$DEVICE")
IFS='|' read -r -a tunings <<< "${TUNINGS-|schedule=gpu}"
[ ${#tunings[@]} -gt 0 ] || tunings=("")
{
  for t in "${tunings[@]}"; do
    echo "== hog-people, tuning '${t}'"
    "${bench[@]}" --model "$model" --tuning "$t" "${set[@]}"
  done
  ocv=$build/tools/gpudetect-bench-opencv-hog
  if [ -n "${SKIP_OPENCV:-}" ]; then
    echo "== OpenCV: skipped (SKIP_OPENCV)"
  elif [ ! -x "$ocv" ]; then
    echo "== OpenCV: skipped (no $ocv: built where OpenCV is found)"
  elif rc=0 && { "$ocv" --help >/dev/null 2>&1 || rc=$?; } && [ "$rc" -ne 2 ]; then
    echo "== OpenCV: skipped ($ocv does not start here (status $rc): no OpenCV runtime?)"
  else
    echo "== OpenCV HOGDescriptor (CPU)"
    "$ocv" --model "$model" --frames "${OPENCV_FRAMES:-20}" --warmup 2 "${set[@]}"
  fi
} 2>&1 | tee "$out/hogpeople-$tag.txt"
