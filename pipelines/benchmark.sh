#!/usr/bin/env bash
# Pipeline throughput, steady state (first to last buffer at the sink, so
# start-up is not counted), median of REPEAT runs (default 3):
#   - the decode pipeline alone (filesrc ! avidemux ! jpegdec ! fakesink),
#   - the same with gpudetect inline (decoding and detection overlap through
#     gpudetect's asynchronous submit/generate_output, max-in-flight frames),
#   - with gst-plugins-bad's facedetect (OpenCV, CPU) using the same cascade and
#     parameters, when that element is installed (gstreamer1.0-opencv).
# The clip is 1080p MJPEG made once from the demo clip (upscaled), so decoding
# is real work; SIZE=640x480 makes a VGA one instead.
#   pipelines/benchmark.sh [CASCADE-FILE-OR-NAME...]     (default: lbp-frontalface-improved)
# Env: SIZE (1920x1080), REPEAT (3), DEVICE (gpudetect's device property), BUILD (build).
# Run pipelines/demo.sh once first (it fetches the source clip).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
size=${SIZE:-1920x1080}
repeat=${REPEAT:-3}
media=${XDG_CACHE_HOME:-$HOME/.cache}/gpudetect/media
src_clip=$media/cap12_edit.webm
clip=$media/cap12-$size.mjpeg.avi
build=${BUILD:-$root/build}
export GST_PLUGIN_PATH="$build/gst${GST_PLUGIN_PATH:+:$GST_PLUGIN_PATH}"
launch=$build/tools/gpudetect-launch
if [ ! -f "$clip" ]; then
  [ -f "$src_clip" ] || { echo "no $src_clip: run pipelines/demo.sh once" >&2; exit 2; }
  gst-launch-1.0 -q filesrc location="$src_clip" ! matroskademux ! vp8dec ! videoscale ! \
    video/x-raw,width=${size%x*},height=${size#*x} ! jpegenc quality=90 ! avimux ! filesink location="$clip.part"
  mv "$clip.part" "$clip"
fi
params="min-size-width=24 min-size-height=24"
dev=${DEVICE:+device=$DEVICE}

# Median fps of `repeat` runs of: filesrc ! avidemux ! jpegdec ! $1 fakesink
fps () {
  local runs=()
  for _ in $(seq "$repeat"); do
    # shellcheck disable=SC2086
    runs+=("$("$launch" --fps filesrc location="$clip" ! avidemux ! jpegdec ! $1 fakesink name=sink sync=false |
      awk '/fps/ { print $3 }')")
  done
  printf '%s\n' "${runs[@]}" | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}

models=("$@")
[ ${#models[@]} -gt 0 ] || models=(lbp-frontalface-improved)
frames=$(gst-launch-1.0 filesrc location="$clip" ! avidemux ! fakesink silent=false -v 2>/dev/null | grep -c chain || true)
echo "clip: $clip ($size MJPEG, $frames frames); median of $repeat runs"
base=$(fps "")
printf '%-58s %8s fps\n' "decode only" "$base"
for m in "${models[@]}"; do
  g=$(fps "gpudetect model=$m $dev $params !")
  printf '%-58s %8s fps  (%s %% of decode only)\n' "gpudetect model=$m" "$g" "$(awk -v a="$g" -v b="$base" 'BEGIN { printf "%.1f", 100 * a / b }')"
  if gst-inspect-1.0 facedetect >/dev/null 2>&1; then
    path=$m
    [ -f "$path" ] || path=$(find /usr/share/opencv4 -name "$(echo "$m" | sed -E 's/^(haar|lbp)-/\1cascade_/; s/-/_/g').xml" | head -1)
    f=$(fps "videoconvert ! facedetect profile=$path scale-factor=1.1 min-neighbors=3 $params eyes-profile= nose-profile= mouth-profile= display=false !")
    printf '%-58s %8s fps  (gpudetect %s x faster)\n' "facedetect profile=$(basename "$path")" "$f" "$(awk -v a="$g" -v b="$f" 'BEGIN { printf "%.2f", a / b }')"
  fi
done
