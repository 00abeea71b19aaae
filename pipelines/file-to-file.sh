#!/usr/bin/env bash
# Any file GStreamer can decode -> annotated WebM, detections printed as JSON lines.
#   pipelines/file-to-file.sh INPUT OUTPUT.webm [MODEL]
# e.g. pipelines/file-to-file.sh /usr/share/doc/opencv-doc/examples/data/vtest.avi people.webm haar-fullbody
#      (AVI needs gstreamer1.0-libav for its decoder)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
[ $# -ge 2 ] || { echo "usage: $0 INPUT OUTPUT.webm [MODEL]" >&2; exit 2; }
export GST_PLUGIN_PATH="$root/build/gst${GST_PLUGIN_PATH:+:$GST_PLUGIN_PATH}"
export GPUDETECT_MODEL_PATH="$root/models${GPUDETECT_MODEL_PATH:+:$GPUDETECT_MODEL_PATH}"   # the project's own models, uninstalled
exec "$root/build/tools/gpudetect-launch" --json \
  filesrc location="$1" ! decodebin ! videoconvert ! video/x-raw,format=I420 ! \
  gpudetect model="${3:-lbp-frontalface-improved}" message-mode=every-frame ! \
  roioverlay ! vp8enc deadline=1 cpu-used=8 ! webmmux ! filesink location="$2"
