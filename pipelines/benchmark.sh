#!/usr/bin/env bash
# Pipeline throughput, steady state (first to last buffer at the sink, so
# start-up is not counted), median of REPEAT runs (default 5), taking turns:
#   - the decode pipeline alone (filesrc ! avidemux ! jpegdec ! fakesink),
#   - the same with gpudetect inline (decoding and detection overlap through
#     gpudetect's asynchronous submit/generate_output, max-in-flight frames),
#   - with gst-plugins-bad's facedetect (OpenCV, CPU) using the same cascade and
#     parameters, when that element is installed (gstreamer1.0-opencv).  The eye,
#     nose and mouth cascades it also loads by default are not in Debian's
#     opencv-data, so it runs the face cascade alone, as gpudetect does.
# The clip is 1080p MJPEG made once from the demo clip (upscaled), so decoding
# is real work; SIZE=640x480 makes a VGA one instead.  Besides the ratio of
# the medians, each turn's run with gpudetect is divided by that turn's
# decode-only run, and the median of those ratios is printed: the host's speed
# drifts between turns more than within one.  Each run also gives the CPU time
# per frame of its streaming thread (which decodes and runs gpudetect), which
# leaves out the time the thread waits for a CPU: decode only's share of it is
# what the decoding thread keeps for decoding.
#   pipelines/benchmark.sh [CASCADE-FILE-OR-NAME...]     (default: lbp-frontalface-improved)
# Env: SIZE (1920x1080), REPEAT (5), FRAMES (the clip's first FRAMES frames only: shorter runs, more
# turns in the same time), DEVICE (gpudetect's device property), PROPS (more gpudetect properties,
# e.g. PROPS="max-in-flight=4"), BUILD (build), PIN (a CPU list, e.g. 2-5: every run is bound to those
# CPUs with taskset, so that the pipelines compared run on the same cores), PAIR (two CPU lists, e.g.
# "2-5 6-9": instead of taking turns, each run with gpudetect goes at the same time as a decode-only run,
# each bound to one of the two lists, which swap every turn; the ratio of each pair is measured under the
# same load on the host, whose speed drifts between runs).
# Run pipelines/demo.sh once first (it fetches the source clip).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
size=${SIZE:-1920x1080}
repeat=${REPEAT:-5}
media=${XDG_CACHE_HOME:-$HOME/.cache}/gpudetect/media
src_clip=$media/cap12_edit.webm
nframes=${FRAMES:-}
clip=$media/cap12-$size${nframes:+-$nframes}.mjpeg.avi
build=${BUILD:-$root/build}
export GST_PLUGIN_PATH="$build/gst${GST_PLUGIN_PATH:+:$GST_PLUGIN_PATH}"
export GPUDETECT_MODEL_PATH="$root/models${GPUDETECT_MODEL_PATH:+:$GPUDETECT_MODEL_PATH}"   # the project's own models, uninstalled
launch=$build/tools/gpudetect-launch
if [ ! -f "$clip" ]; then
  [ -f "$src_clip" ] || { echo "no $src_clip: run pipelines/demo.sh once" >&2; exit 2; }
  # shellcheck disable=SC2086
  gst-launch-1.0 -q filesrc location="$src_clip" ! matroskademux ! vp8dec ! ${nframes:+identity eos-after=$nframes !} videoscale ! \
    video/x-raw,width=${size%x*},height=${size#*x} ! jpegenc quality=90 ! avimux ! filesink location="$clip.part"
  mv "$clip.part" "$clip"
fi
params="min-size-width=24 min-size-height=24"
dev="${DEVICE:+device=$DEVICE} ${PROPS:-}"

tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
# One run's fps of: filesrc ! avidemux ! jpegdec ! $1 fakesink; the CPU time
# per frame of its streaming thread (decoding and gpudetect) goes to the
# list named $2, where one is named.
fps_once () {
  local out
  # shellcheck disable=SC2086
  out=$(${PIN:+taskset -c "$PIN"} "$launch" --fps filesrc location="$clip" ! avidemux ! jpegdec ! $1 fakesink name=sink sync=false | grep fps)
  echo "$out" | awk '{ print $3 }'
  [ -z "${2:-}" ] ||
    echo "$out" | awk '{ for (i = 1; i + 3 <= NF; i++) if ($(i + 1) == "ms" && $(i + 3) == "CPU") print $i }' >> "$tmp/cpu-$2"
}
cpu_list () { tr '\n' ' ' < "$tmp/cpu-$1"; }
median () { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
cpu_median () { local -a v; mapfile -t v < "$tmp/cpu-$1"; median "${v[@]}"; }
# Median over the turns of (fps with the element) / (decode-only fps of the same turn), in %.
turn_ratio () {
  local -a a b r=()
  read -ra a <<< "$1"
  read -ra b <<< "$2"
  local i
  for i in "${!a[@]}"; do
    r+=("$(awk -v x="${a[$i]}" -v y="${b[$i]}" 'BEGIN { printf "%.1f", 100 * x / y }')")
  done
  median "${r[@]}"
}
ratio () { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", 100 * a / b }'; }

models=("$@")
[ ${#models[@]} -gt 0 ] || models=(lbp-frontalface-improved)
frames=$(gst-launch-1.0 filesrc location="$clip" ! avidemux ! fakesink silent=false -v 2>/dev/null | grep -c chain || true)
if [ -n "${PAIR:-}" ]; then
  read -r cpus_a cpus_b <<< "$PAIR"
  echo "clip: $clip ($size MJPEG, $frames frames); $repeat pairs per model, each run with gpudetect at the same time as a decode-only one, on CPUs $cpus_a and $cpus_b (swapped every turn)"
  declare -A runs
  for t in $(seq "$repeat"); do
    for m in "${models[@]}"; do
      on_base=$cpus_a on_g=$cpus_b
      [ $((t % 2)) = 1 ] || { on_base=$cpus_b on_g=$cpus_a; }
      PIN=$on_base fps_once "" "b-$m" > "$tmp/base" &
      PIN=$on_g fps_once "gpudetect model=$m $dev $params !" "g-$m" > "$tmp/g"
      wait
      runs[b-$m]+=" $(cat "$tmp/base")"
      runs[g-$m]+=" $(cat "$tmp/g")"
    done
  done
  for m in "${models[@]}"; do
    # shellcheck disable=SC2086
    printf '%-58s %8s fps  (runs:%s; streaming thread %s ms CPU per frame, runs: %s)\n' \
      "decode only, beside gpudetect model=$m" "$(median ${runs[b-$m]})" "${runs[b-$m]}" \
      "$(cpu_median "b-$m")" "$(cpu_list "b-$m")"
    # shellcheck disable=SC2086
    printf '%-58s %8s fps  (median of the pairs'"'"' ratios %s %% of decode only; runs:%s; streaming thread %s ms CPU per frame, median of the pairs'"'"' ratios of decode only'"'"'s to it %s %%; runs: %s)\n' \
      "gpudetect model=$m $dev" "$(median ${runs[g-$m]})" "$(turn_ratio "${runs[g-$m]}" "${runs[b-$m]}")" "${runs[g-$m]}" \
      "$(cpu_median "g-$m")" "$(turn_ratio "$(cpu_list "b-$m")" "$(cpu_list "g-$m")")" "$(cpu_list "g-$m")"
  done
  exit 0
fi
echo "clip: $clip ($size MJPEG, $frames frames); median of $repeat runs, the pipelines taking turns${PIN:+, on CPUs $PIN}"
have_facedetect=0
gst-inspect-1.0 facedetect >/dev/null 2>&1 && have_facedetect=1
declare -A runs
for _ in $(seq "$repeat"); do
  runs[base]+=" $(fps_once "" base)"
  for m in "${models[@]}"; do
    runs[g-$m]+=" $(fps_once "gpudetect model=$m $dev $params !" "g-$m")"
    if [ $have_facedetect = 1 ]; then
      path=$m
      [ -f "$path" ] || path=$(find /usr/share/opencv4 -name "$(echo "$m" | sed -E 's/^(haar|lbp)-/\1cascade_/; s/-/_/g').xml" | head -1)
      runs[f-$m]+=" $(fps_once "videoconvert ! facedetect profile=$path scale-factor=1.1 min-neighbors=3 flags=0 $params display=false !" 2>/dev/null)"
    fi
  done
done
# shellcheck disable=SC2086
base=$(median ${runs[base]})
base_cpu=$(cpu_median base)
printf '%-58s %8s fps  (runs:%s; streaming thread %s ms CPU per frame, runs: %s)\n' "decode only" "$base" "${runs[base]}" \
  "$base_cpu" "$(cpu_list base)"
for m in "${models[@]}"; do
  # shellcheck disable=SC2086
  g=$(median ${runs[g-$m]})
  g_cpu=$(cpu_median "g-$m")
  printf '%-58s %8s fps  (%s %% of decode only; median of the turns'"'"' ratios %s %%; runs:%s; streaming thread %s ms CPU per frame, decode only'"'"'s %s %% of it, median of the turns'"'"' ratios %s %%; runs: %s)\n' \
    "gpudetect model=$m $dev" "$g" "$(ratio "$g" "$base")" "$(turn_ratio "${runs[g-$m]}" "${runs[base]}")" "${runs[g-$m]}" \
    "$g_cpu" "$(ratio "$base_cpu" "$g_cpu")" "$(turn_ratio "$(cpu_list base)" "$(cpu_list "g-$m")")" "$(cpu_list "g-$m")"
  if [ $have_facedetect = 1 ]; then
    # shellcheck disable=SC2086
    f=$(median ${runs[f-$m]})
    printf '%-58s %8s fps  (gpudetect %s x faster; runs:%s)\n' "facedetect, same cascade and parameters" "$f" \
      "$(awk -v a="$g" -v b="$f" 'BEGIN { printf "%.2f", a / b }')" "${runs[f-$m]}"
  fi
done
