#!/usr/bin/env bash
# Pipeline throughput: the same decode pipeline with and without gpudetect,
# frames per second of each (fakesink sync=false, so decoding sets the pace).
#   pipelines/benchmark.sh [CLIP] [MODEL]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
clip=${1:-${XDG_CACHE_HOME:-$HOME/.cache}/gpudetect/media/cap12_edit.webm}
model=${2:-lbp-frontalface-improved}
export GST_PLUGIN_PATH="$root/build/gst${GST_PLUGIN_PATH:+:$GST_PLUGIN_PATH}"
run () {
  local start end frames
  start=$(date +%s.%N)
  frames=$(gst-launch-1.0 filesrc location="$clip" ! decodebin ! videoconvert ! video/x-raw,format=I420 ! \
    $1 identity silent=false ! fakesink sync=false -v 2>/dev/null | grep -c "chain")
  end=$(date +%s.%N)
  awk -v n="$frames" -v a="$start" -v b="$end" -v what="$2" 'BEGIN { printf "%s: %d frames in %.2f s = %.1f fps\n", what, n, b - a, n / (b - a) }' 
}
run "" "decode only      "
run "gpudetect model=$model min-size-width=24 min-size-height=24 !" "decode + gpudetect"
