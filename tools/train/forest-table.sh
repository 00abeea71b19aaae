#!/usr/bin/env bash
# The random-forest family's accuracy by shrink M x levels per octave N on the
# held-out images (docs/forest.md):
#   tools/train/forest-table.sh DATA_DIR OUT_DIR
# trains the face model with shrink M = 1, 2 and 4 (the shipped recipe of
# tools/train/train-models.sh otherwise; M = 2 is the shipped model, written
# again into OUT_DIR) and measures each with N = 2, 4 and 6 levels an octave
# (the element's levels-per-octave) beside OpenCV's lbpcascade_frontalface_improved
# and the WaldBoost models, by three matching rules: centre and width (the
# default of gpudetect-eval-faces), IoU >= 0.65 and IoU >= 0.5.  Writes
# OUT_DIR/forest-table.md.  Run tools/train/fetch-data.sh DATA_DIR first.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
[ $# -eq 2 ] || { echo "usage: $0 DATA_DIR OUT_DIR" >&2; exit 2; }
data=$1 out=$2
build=${BUILD:-$root/build}
mkdir -p "$out"
ninja -C "$build" tools/train/gpudetect-train-forest tools/train/gpudetect-eval-faces >/dev/null
for m in 1 2 4; do
  [ -f "$out/forest-m$m.forest" ] ||
    bash "$root/tools/train/train-forest.sh" "$data" "$out/forest-m$m.forest" --shrink "$m" \
      > "$out/forest-m$m.train.log"
done
eval=("$build/tools/train/gpudetect-eval-faces" --data "$data")
export GPUDETECT_MODEL_PATH=$root/models
{
  for rule in "" "--iou 0.65" "--iou 0.5"; do
    read -r -a r <<< "$rule"
    echo "### ${rule:-centre and width}"
    echo
    "${eval[@]}" "${r[@]}" --model waldboost-frontalface --model waldboost-frontalface-fast \
      --opencv lbp-frontalface-improved | grep '^|'
    for n in 2 4 6; do
      "${eval[@]}" "${r[@]}" --levels-per-octave "$n" --model "$out/forest-m1.forest" \
        --model "$out/forest-m2.forest" --model "$out/forest-m4.forest" | grep '^| gpudetect'
    done
    echo
  done
} | tee "$out/forest-table.md"
