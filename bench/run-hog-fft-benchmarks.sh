#!/usr/bin/env bash
# Linear HOG filters through the frequency domain on the first OpenCL device
# gpudetect picks (or DEVICE), in one run that builds nothing (binaries from
# BUILD), every step's output in its own file under OUTDIR, in this order:
#   fftconv-TAG.txt      test-fftconv: the component's scores against a
#                        direct correlation on the host (D = 31, 36, 32, 5, 2,
#                        1), both schedules, on this device's OpenCL and VkFFT;
#   hog-fft-TAG.txt      gpudetect-bench on dlib-frontalface: hog-eval=auto,
#                        direct and fft (OpenCL profiling events, medians over
#                        FRAMES frames after WARMUP);
#   hog-sweep-TAG.txt    gpudetect-hog-sweep at 1080p: direct against FFT for
#                        made banks of 4x4 to 24x24 cells x 1 to 54 filters, the
#                        crossover and fft_preferred's constants fitted to it;
#   dlib-parity-fft-TAG.txt  test-dlib-parity through the FFT path on the GPU
#                        schedule (where the dlib runtime is present);
#   hogfilter-fft-TAG.txt  test-hogfilter-fft: the family's FFT path against
#                        its direct correlation, every window of dlib-frontalface
#                        and of one made model, 2 parity images and noise frames;
#   steps-TAG.txt        each step's exit status and seconds.
# A step that fails is reported and the others still run; the exit status is
# that of the first failure.
#   bench/run-hog-fft-benchmarks.sh OUTDIR TAG
# Env: FRAMES (100), WARMUP (10), BUILD (build), DEVICE, SIZES, COUNTS (the sweep's; gpudetect-hog-sweep's defaults).
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
[ $# -eq 2 ] || { echo "usage: $0 OUTDIR TAG" >&2; exit 2; }
out=$1 tag=$2
build=${BUILD:-$root/build}
frames=$build/bench-frames
mkdir -p "$out"
export GPUDETECT_MODEL_PATH=${GPUDETECT_MODEL_PATH:-$root/models:$build/models}
export GPUDETECT_CACHE_DIR=${GPUDETECT_CACHE_DIR:-$build/tests/cl-cache}
status=0
step () { # NAME FILE COMMAND...
  local name=$1 file=$2
  shift 2
  echo "== $name" | tee -a "$out/steps-$tag.txt"
  local t0=$SECONDS
  "$@" > "$out/$file" 2>&1
  local rc=$?
  echo "   exit $rc, $((SECONDS - t0)) s -> $file" | tee -a "$out/steps-$tag.txt"
  [ $rc -eq 0 ] || [ $status -ne 0 ] || status=$rc
}
if [ ! -f "$frames/1080p-crowd.pgm" ]; then
  mapfile -t images < "$root/tests/data/parity-images.txt"
  mkdir -p "$frames"
  "$build/tools/gpudetect-make-frames" "$frames" "${images[@]}" ||
    { echo "no $frames/1080p-crowd.pgm and gpudetect-make-frames could not make it" >&2; exit 1; }
fi
pgms=("$build"/tests/*.pgm)
dev=()
[ -z "${DEVICE:-}" ] || dev=(--device "$DEVICE")
step "test-fftconv" "fftconv-$tag.txt" "$build/tests/test-fftconv"
bench () {
  for t in "" "hog-eval=direct" "hog-eval=fft"; do
    echo "== dlib-frontalface, tuning '$t'"
    "$build/tools/gpudetect-bench" "${dev[@]}" --frames "${FRAMES:-100}" --warmup "${WARMUP:-10}" --no-opencv \
      --model dlib-frontalface --tuning "$t" "$frames"/vga-faces.pgm "$frames"/1080p-crowd.pgm \
      "$frames"/1080p-empty.pgm || return
  done
}
step "gpudetect-bench, dlib-frontalface" "hog-fft-$tag.txt" bench
sweep=("$build/tools/gpudetect-hog-sweep" "${dev[@]}" --frames "${FRAMES:-100}" --warmup "${WARMUP:-10}")
[ -z "${SIZES:-}" ] || sweep+=(--sizes "$SIZES")
[ -z "${COUNTS:-}" ] || sweep+=(--counts "$COUNTS")
step "gpudetect-hog-sweep, 1080p" "hog-sweep-$tag.txt" "${sweep[@]}" "$frames/1080p-crowd.pgm"
if [ -e "${pgms[0]}" ]; then
  if [ -x "$build/tests/test-dlib-parity" ] && ! ldd "$build/tests/test-dlib-parity" | grep -q "not found"; then
    step "test-dlib-parity, hog-eval=fft, GPU schedule" "dlib-parity-fft-$tag.txt" \
      env GPUDETECT_TUNING="hog-eval=fft;schedule=gpu" "$build/tests/test-dlib-parity" --min-f1 0.98 --min-iou 0.9 \
      --min-equal 0.95 --threshold -1 --threshold -1.5 "${pgms[@]}"
  fi
  # every frame size plans VkFFT anew (its kernels built then): few sizes here
  model=()
  [ -f "$build/models/dlib-frontalface.hogfilter" ] && model=(--model dlib-frontalface)
  step "test-hogfilter-fft" "hogfilter-fft-$tag.txt" "$build/tests/test-hogfilter-fft" "${model[@]}" \
    --max-images 2 --made 1 "${pgms[@]}"
fi
exit $status
