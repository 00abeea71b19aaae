#!/usr/bin/env bash
# Any file GStreamer can decode -> annotated WebM, detections as JSON lines (roijson, DL Streamer's gvametaconvert
# layout: one object per frame with every box, label, confidence and object id) on stdout or into DETECTIONS.
#   pipelines/file-to-file.sh INPUT OUTPUT.webm [MODEL] [DETECTIONS.jsonl]
# e.g. pipelines/file-to-file.sh /usr/share/doc/opencv-doc/examples/data/vtest.avi people.webm haar-fullbody
#      (AVI needs gstreamer1.0-libav for its decoder)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
[ $# -ge 2 ] || { echo "usage: $0 INPUT OUTPUT.webm [MODEL] [DETECTIONS.jsonl]" >&2; exit 2; }
export GST_PLUGIN_PATH="$root/build/gst${GST_PLUGIN_PATH:+:$GST_PLUGIN_PATH}"
export GPUDETECT_MODEL_PATH="$root/models${GPUDETECT_MODEL_PATH:+:$GPUDETECT_MODEL_PATH}"   # the project's own models, uninstalled
# -q: stdout carries the JSON lines alone
exec gst-launch-1.0 -q -e \
  filesrc location="$1" ! decodebin ! videoconvert ! video/x-raw,format=I420 ! \
  gpudetect model="${3:-lbp-frontalface-improved}" ! roijson location="${4:--}" source="$1" ! \
  roioverlay ! vp8enc deadline=1 cpu-used=8 ! webmmux ! filesink location="$2"
