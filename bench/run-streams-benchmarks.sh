#!/usr/bin/env bash
# Many streams on one device in one process (docs/streams.md), on the first
# OpenCL device gpudetect picks (or DEVICE).  Builds nothing: runs the
# binaries of $BUILD.  Writes into OUTDIR (each run's table as .txt, its
# figures as .json) and prints a summary:
#  1. engine, frames from page-locked memory (no decoding), one process per
#     stream count so that memory per stream is measured from a clean start:
#     LBP-improved and Haar-default at N = 1, 4, 16, 32, 64 streams
#     (gpudetect-bench-streams, default settings: a queue per stream, 2 frames
#     in flight, a feeding thread per stream);
#     then the same with profiling queues at 1 and 32 streams: the device
#     time of the frames per second (above 1: kernels of several streams at
#     once) and the launch rate;
#  2. the variants at 32 and 64 streams (LBP; Haar at 32): uploads on the
#     compute queue (upload-queue=0), every stream on one shared queue
#     (queues=1), 8 shared queues, 4 feeding threads for all streams, 4
#     frames in flight, and the default with CUDA_DEVICE_MAX_CONNECTIONS=32
#     (the hardware queues NVIDIA's driver opens; 8 by default for CUDA);
#  3. cameras: 66 LBP streams and 26 Haar streams at 30 frames/s each (the
#     2000 and 800 frames/s goals), latency from a frame's arrival;
#  4. decoding: N pipelines `filesrc ! decodebin ! gpudetect ! fakesink` of a
#     1080p MJPEG clip (jpegdec), and the same without gpudetect, N = 1, 4,
#     16, 32, 64 (gpudetect-bench-pipelines; skipped where GStreamer or the
#     plugin does not load, with the reason).
#   bench/run-streams-benchmarks.sh OUTDIR TAG
# Env: BUILD (build), DEVICE, WINDOW (2: seconds measured in each run), WARMUP (20 frames a stream),
# COUNTS ("1 4 16 32 64"), CAMERAS ("66 26": LBP and Haar cameras; "" skips), LEAD_IN (seconds of all streams
# running before each window: the tools' defaults, 0.5 to 1), SKIP_DECODE=1, SKIP_VARIANTS=1, SKIP_PROFILE=1,
# FRAME (a PGM instead of the standard one).  The frame: $BUILD/bench-frames/1080p-crowd.pgm
# (gpudetect-make-frames), else the test image tiled to 1920x1080.  About 3 to 4 minutes on an H100 host.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
[ $# -eq 2 ] || { echo "usage: $0 OUTDIR TAG" >&2; exit 2; }
out=$1 tag=$2
build=${BUILD:-$root/build}
secs=${WINDOW:-2}
read -r -a counts <<< "${COUNTS:-1 4 16 32 64}"
mkdir -p "$out"
export GPUDETECT_MODEL_PATH=${GPUDETECT_MODEL_PATH:-$root/models}
export GPUDETECT_CACHE_DIR=${GPUDETECT_CACHE_DIR:-$build/streams-cl-cache}
bs=$build/tools/gpudetect-bench-streams
bp=$build/tools/gpudetect-bench-pipelines
[ -x "$bs" ] || { echo "no $bs: build first" >&2; exit 2; }
frame=${FRAME:-$build/bench-frames/1080p-crowd.pgm}
frame_args=("$frame")
if [ ! -f "$frame" ]; then
  frame=$root/tests/data/grace_hopper_256x300.pgm
  frame_args=(--tile 1920x1080 "$frame")
  echo "no bench-frames/1080p-crowd.pgm: the test image tiled to 1920x1080"
fi
dev=()
[ -z "${DEVICE:-}" ] || dev=(--device "$DEVICE")
summary=$out/streams-$tag-summary.txt
: > "$summary"
failed=0

# run NAME ARGS...: gpudetect-bench-streams ARGS (in the environment of the
# array `env_run`), its table into the summary
env_run=()
run () {
  local name=$1
  shift
  echo "== $name: ${env_run[*]} $*" | tee -a "$summary"
  if env "${env_run[@]}" timeout 300 "$bs" "${dev[@]}" --seconds "$secs" --warmup "${WARMUP:-20}" ${LEAD_IN:+--lead-in "$LEAD_IN"} --label "$name" --json "$out/streams-$tag-$name.json" "$@" "${frame_args[@]}" \
      > "$out/streams-$tag-$name.txt" 2>&1; then
    :
  else
    echo "   exit status $? (see streams-$tag-$name.txt)" | tee -a "$summary"
    failed=1
  fi
  grep -E '^ *(streams|[0-9]+) ' "$out/streams-$tag-$name.txt" | tee -a "$summary"
}

start=$(date +%s)
head -3 /proc/cpuinfo > /dev/null 2>&1 && echo "host: $(nproc) cores" | tee -a "$summary"
command -v nvidia-smi > /dev/null && nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader |
  tee -a "$summary"

# 1. per stream count, one process each
for m in lbp-frontalface-improved haar-frontalface-default; do
  for n in "${counts[@]}"; do
    run "$m-n$n" --model "$m" --streams "$n"
  done
done

# device time per second of the window (profiling events) and launch rate, 1 and 32 streams
if [ -z "${SKIP_PROFILE:-}" ]; then
  for m in lbp-frontalface-improved haar-frontalface-default; do
    run "$m-profile" --model "$m" --streams 1,32 --profile
  done
fi

# 2. variants (one process per variant, 32 and 64 streams; Haar 32)
if [ -z "${SKIP_VARIANTS:-}" ]; then
  m=lbp-frontalface-improved
  run "$m-default" --model $m --streams 32,64
  run "$m-upload0" --model $m --streams 32,64 --tuning "upload-queue=0"
  run "$m-queues1" --model $m --streams 32,64 --tuning "queues=1"
  run "$m-queues8" --model $m --streams 32,64 --tuning "queues=8"
  run "$m-threads4" --model $m --streams 32,64 --threads 4
  run "$m-slots4" --model $m --streams 32,64 --slots 4
  env_run=(CUDA_DEVICE_MAX_CONNECTIONS=32)
  run "$m-connections32" --model $m --streams 32,64
  env_run=()
  m=haar-frontalface-default
  run "$m-default" --model $m --streams 32
  run "$m-upload0" --model $m --streams 32 --tuning "upload-queue=0"
  run "$m-queues8" --model $m --streams 32 --tuning "queues=8"
fi

# 3. cameras at 30 frames/s
read -r -a cams <<< "${CAMERAS-66 26}"
if [ ${#cams[@]} -eq 2 ]; then
  run "lbp-frontalface-improved-cameras${cams[0]}" --model lbp-frontalface-improved --streams "${cams[0]}" --rate 30
  run "haar-frontalface-default-cameras${cams[1]}" --model haar-frontalface-default --streams "${cams[1]}" --rate 30
fi

# 4. decoding
if [ -z "${SKIP_DECODE:-}" ]; then
  export GST_PLUGIN_PATH="$build/gst${GST_PLUGIN_PATH:+:$GST_PLUGIN_PATH}"
  if ! command -v gst-inspect-1.0 > /dev/null; then
    echo "== decoding skipped: no GStreamer (gst-inspect-1.0)" | tee -a "$summary"
  elif ! gst-inspect-1.0 gpudetect > "$out/streams-$tag-inspect.txt" 2>&1; then
    echo "== decoding skipped: the plugin does not load:" | tee -a "$summary"
    ldd "$build/gst/libgstgpudetect.so" 2>&1 | grep "not found" | tee -a "$summary"
    tail -3 "$out/streams-$tag-inspect.txt" | tee -a "$summary"
  elif ! gst-inspect-1.0 jpegenc > /dev/null 2>&1 || ! gst-inspect-1.0 avidemux > /dev/null 2>&1; then
    echo "== decoding skipped: no jpegenc/avidemux (gst-plugins-good)" | tee -a "$summary"
  else
    list=$(IFS=,; echo "${counts[*]}")
    clip=$out/streams-clip-1080p.avi
    for mode in detect decode-only; do
      extra=()
      [ $mode = decode-only ] && extra=(--no-detect)
      echo "== pipelines-$mode: N = $list" | tee -a "$summary"
      if timeout 600 "$bp" --streams "$list" --seconds "$secs" ${LEAD_IN:+--lead-in "$LEAD_IN"} --clip "$clip" "${extra[@]}" \
          --json "$out/streams-$tag-pipelines-$mode.json" "${frame_args[@]}" \
          > "$out/streams-$tag-pipelines-$mode.txt" 2>&1; then
        :
      else
        echo "   exit status $? (see streams-$tag-pipelines-$mode.txt)" | tee -a "$summary"
        failed=1
      fi
      grep -E '^ *(streams|[0-9]+) ' "$out/streams-$tag-pipelines-$mode.txt" | tee -a "$summary"
    done
    rm -f "$clip"
  fi
fi
echo "== done in $(( $(date +%s) - start )) s; files in $out" | tee -a "$summary"
exit $failed
