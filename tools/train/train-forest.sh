#!/usr/bin/env bash
# The recipe of the shipped random-forest face model (models/forest-frontalface.forest):
#   tools/train/train-forest.sh DATA_DIR OUT.forest [more gpudetect-train-forest options]
# Every setting is here, none is a default that could drift; options given
# after OUT override them (tools/train/forest-table.sh trains other shrinks
# this way).  DATA_DIR: tools/train/fetch-data.sh's output.  About 6 minutes
# on 2 cores (tools/train/README.md).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
[ $# -ge 2 ] || { echo "usage: $0 DATA_DIR OUT.forest [options]" >&2; exit 2; }
data=$1 out=$2
shift 2
build=${BUILD:-$root/build}
ninja -C "$build" tools/train/gpudetect-train-forest >/dev/null
"$build/tools/train/gpudetect-train-forest" --data "$data" --name frontalface --window 20 --shrink 2 \
  --levels-per-octave 4 --depth 2 --candidates 1024 --tpr 0.97 --ramp 64 --final-tpr 0.9 --stages 2048 \
  --positives-per-face 24 --negatives 8000 --mine-levels-per-octave 16 --plane-cache-gb 6 --seed 1 \
  --threads "$(nproc)" "$@" --out "$out"
