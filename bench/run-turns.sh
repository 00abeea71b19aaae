#!/usr/bin/env bash
# Two builds of gpudetect's tools on the headline cases, in turns (A, B, A, B, ...), so that a change's effect is
# not confused with the device's drift: LBP-improved, Haar-default, WaldBoost (fast), the forest, dlib's detector
# (1080p-crowd, 1080p-empty), hog-people (1080p-people), and the tracker's 1000 templates of 16x16 in 143x143
# areas of a 1080p frame.  Prints each run's medians (gpudetect-bench: e2e and device time of a frame;
# gpudetect-bench-track: upload to readback, and the search) and, at the end, each case's median over the rounds.
#   bench/run-turns.sh FRAMES BUILD_A BUILD_B [ROUNDS]
# FRAMES: gpudetect-make-frames' folder; BUILD_*: folders with tools/gpudetect-bench and tools/gpudetect-bench-track.
# Env: FRAMES_N (200 timed frames), MODELS (the short names), TRACK_FRAMES (100), TRACK_WARMUP (10), DEVICE.  Needs only bash, sed, sort and awk.
set -euo pipefail
[ $# -ge 3 ] || { echo "usage: $0 FRAMES BUILD_A BUILD_B [ROUNDS]" >&2; exit 2; }
frames=$1 a=$2 b=$3 rounds=${4:-3}
n=${FRAMES_N:-200}
models=${MODELS:-"lbp-frontalface-improved haar-frontalface-default waldboost-frontalface-fast forest-frontalface dlib-frontalface hog-people"}
dev=()
[ -z "${DEVICE:-}" ] || dev=(--device "$DEVICE")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for r in $(seq "$rounds"); do
  for side in A B; do
    build=$a
    [ $side = A ] || build=$b
    for m in $models; do
      imgs=("$frames/1080p-crowd.pgm" "$frames/1080p-empty.pgm")
      [ "$m" != hog-people ] || imgs=("$frames/1080p-people.pgm")
      "$build/tools/gpudetect-bench" --model "$m" "${dev[@]}" --frames "$n" --warmup 20 --json "$tmp/j.json" \
        "${imgs[@]}" > "$tmp/out.txt" || { echo "run $r $side $m failed:"; tail -3 "$tmp/out.txt"; continue; }
      sed -n 's/.*"frame": "\([^"]*\)".*"device_ms": \([0-9.]*\), "e2e_median_ms": \([0-9.]*\).*/\1 \3 \2/p' \
        "$tmp/j.json" | while read -r f e d; do echo "run $r $side $m $f e2e $e device $d"; done
    done
    "$build/tools/gpudetect-bench-track" --templates 1000 --template 16 --area 143 --frame 1920x1080 --frames "${TRACK_FRAMES:-100}" \
      --warmup "${TRACK_WARMUP:-10}" --cpu-frames 0 > "$tmp/track.txt" 2>&1 || true
    sed -n 's/^variant.*search \([0-9.]*\) ms .*upload to readback \([0-9.]*\) ms.*/\2 \1/p' "$tmp/track.txt" |
      head -1 | while read -r e d; do echo "run $r $side track-1000x16 1080p e2e $e device $d"; done
  done
done | tee "$tmp/all.txt"
echo
echo "median over $rounds rounds (ms): case, frame, A e2e, B e2e, B/A; A device, B device, B/A"
awk '$1 == "run" { k = $4 " " $5; v[k, $3, "e"] = v[k, $3, "e"] " " $7; v[k, $3, "d"] = v[k, $3, "d"] " " $9; keys[k] = 1 }
  function med (s,    a, n, i, j, t) {
    n = split (s, a, " ")
    for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
  }
  END {
    for (k in keys) {
      ea = med (v[k, "A", "e"]); eb = med (v[k, "B", "e"]); da = med (v[k, "A", "d"]); db = med (v[k, "B", "d"])
      printf "%-45s %8.4f %8.4f %6.3f   %8.4f %8.4f %6.3f\n", k, ea, eb, ea ? eb / ea : 0, da, db, da ? db / da : 0
    }
  }' "$tmp/all.txt" | sort
