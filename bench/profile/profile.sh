#!/usr/bin/env bash
# Profiles the engine's kernels with NVIDIA Nsight Compute, which does not see
# OpenCL launches: clcapture records one launch of each kernel as
# gpudetect-bench makes it (the 11th, after warm-up), replay runs it again from
# the program's PTX through the CUDA driver, under ncu.
#
#   bench/profile/profile.sh BUILD OUTDIR [MODEL...]
#
# BUILD: a build directory with tools/gpudetect-bench and bench-frames; needs
# a C compiler, OpenCL headers, and CUDA's headers, driver and ncu
# (CUDA=/usr/local/cuda).  KERNELS (default: pyramid_rows integral_cols_blocked
# cascade_first cascade_list), FRAME (default: BUILD/bench-frames/1080p-crowd.pgm),
# SECTIONS (ncu --section names; default: the full set), METRICS (ncu --metrics
# list, instead of the sections; e.g. breakdown:l1tex__throughput.avg.pct_of_peak_sustained_elapsed
# for which stage of the L1 limits a kernel).  Models are found as gpudetect-bench
# finds them (GPUDETECT_MODEL_PATH where opencv-data is not installed).  Writes
# OUTDIR/ncu-MODEL-KERNEL.txt and OUTDIR/summary.txt: each replay's time (it starts from
# buffers restored from host memory, so kernels that read what the one before
# them wrote take longer than in the engine, where that data is still in L2).
set -euo pipefail
build=$(realpath "$1"); out=$(realpath -m "$2"); shift 2
models=("$@"); [ ${#models[@]} -gt 0 ] || models=(lbp-frontalface-improved haar-frontalface-default)
here=$(dirname "$(realpath "$0")")
CUDA=${CUDA:-/usr/local/cuda}
frame=${FRAME:-$build/bench-frames/1080p-crowd.pgm}
mkdir -p "$out"
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
cc -O2 -fPIC -shared -I"$CUDA/include" -o "$work/libclcapture.so" "$here/clcapture.c" -L"$CUDA/lib64" -ldl -lOpenCL
c++ -O2 -std=c++17 -I"$CUDA/include" "$here/replay.cpp" -o "$work/replay" -L"$CUDA/lib64/stubs" -lcuda
sections=()
if [ -n "${METRICS:-}" ]; then sections=(--metrics "$METRICS")
elif [ -n "${SECTIONS:-}" ]; then for s in $SECTIONS; do sections+=(--section "$s"); done
else sections=(--set full); fi
for m in "${models[@]}"; do
  for k in ${KERNELS:-pyramid_rows integral_cols_blocked cascade_first cascade_list}; do
    d="$work/$m-$k"
    CLCAPTURE_KERNEL=$k CLCAPTURE_SKIP=10 CLCAPTURE_DIR="$d" LD_PRELOAD="$work/libclcapture.so" \
      "$build/tools/gpudetect-bench" --model "$m" --no-opencv --frames 20 --warmup 2 "$frame" > /dev/null
    echo "== $m $k"
    "$work/replay" "$d" 50
    "$CUDA/bin/ncu" "${sections[@]}" -s 3 -c 1 "$work/replay" "$d" 4 > "$out/ncu-$m-$k.txt" 2>&1 || true
    grep -E "^ +(Duration|L1/TEX Cache Throughput|L2 Cache Throughput|Compute \(SM\) Throughput|Achieved Occupancy) |uncoalesced global accesses" \
      "$out/ncu-$m-$k.txt" | sed 's/  */ /g' || true
  done
done | tee "$out/summary.txt"
