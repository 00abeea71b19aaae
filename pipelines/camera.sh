#!/usr/bin/env bash
# Live faces from a V4L2 camera, drawn on screen.  skip-when-busy keeps the
# camera at full rate when the device cannot keep up: frames pass undetected
# instead of queueing; expire-overlay keeps boxes on those frames.
#   pipelines/camera.sh [/dev/video0]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
export GST_PLUGIN_PATH="$root/build/gst${GST_PLUGIN_PATH:+:$GST_PLUGIN_PATH}"
export GPUDETECT_MODEL_PATH="$root/models${GPUDETECT_MODEL_PATH:+:$GPUDETECT_MODEL_PATH}"   # the project's own models, uninstalled
exec gst-launch-1.0 v4l2src device="${1:-/dev/video0}" ! videoconvert ! video/x-raw,format=NV12 ! \
  gpudetect model=lbp-frontalface-improved min-size-width=40 min-size-height=40 skip-when-busy=true ! \
  roioverlay expire-overlay=200000000 ! videoconvert ! autovideosink sync=false
