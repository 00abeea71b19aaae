#!/usr/bin/env bash
# Instructions of track_search_tiles (kernels/track.cl) compiled for an NVIDIA GPU, without one: clang's OpenCL
# front end makes PTX (work-item functions mapped onto NVVM's registers by a small header), ptxas assembles it for
# ARCH (sm_90 by default) and reports registers and spills; the kernel's code size in 16-byte instructions follows.
# The tiles' inner loop is unrolled along the template row, so the difference between K = 4 and K = 8 divided by
# 32 x 4 more pixel-offsets per row is the cost of one pixel and offset.
#   bench/track-sass-size.sh [-D SAD_PTX] [-D KX=4] ...       (defaults: 32x32 template, 96x96 area, K 4)
# Needs clang (OpenCL C, the NVPTX back end), ptxas (CUDA toolkit: $PTXAS or /usr/local/cuda/bin/ptxas), readelf.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
ptxas=${PTXAS:-/usr/local/cuda/bin/ptxas}
arch=${ARCH:-sm_90}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat > "$tmp/shim.h" <<'EOF'
#define get_local_id(d) ((size_t) ((d) == 0 ? __nvvm_read_ptx_sreg_tid_x () : __nvvm_read_ptx_sreg_tid_y ()))
#define get_group_id(d) ((size_t) ((d) == 0 ? __nvvm_read_ptx_sreg_ctaid_x () : __nvvm_read_ptx_sreg_ctaid_y ()))
#define get_local_size(d) ((size_t) ((d) == 0 ? __nvvm_read_ptx_sreg_ntid_x () : __nvvm_read_ptx_sreg_ntid_y ()))
#define get_global_id(d) (get_group_id (d) * get_local_size (d) + get_local_id (d))
#define barrier(f) __nvvm_bar_sync (0)
#define abs(x) ((uint) __builtin_abs (x))
#define min(a, b) ((a) < (b) ? (a) : (b))
#define max(a, b) ((a) > (b) ? (a) : (b))
#define clamp(x, lo, hi) min (max ((x), (lo)), (hi))
#define convert_uint4(v) ((uint4) ((uint) (v).x, (uint) (v).y, (uint) (v).z, (uint) (v).w))
#define convert_uchar4(v) ((uchar4) ((uchar) (v).x, (uchar) (v).y, (uchar) (v).z, (uchar) (v).w))
#define asm __asm__
EOF
defs=(-D TILES -D TW=32 -D TH=32 -D SW=96 -D SH=96 -D BAND=54 -D WG=256 -D ALT_D=8)
case " $* " in *" KX="*|*" -DKX="*) ;; *) defs+=(-D KX=4) ;; esac
clang -x cl -cl-std=CL1.2 -target nvptx64-nvidia-nvcl -mcpu=sm_80 -Xclang -finclude-default-header \
  -include "$tmp/shim.h" -O3 -S -o "$tmp/track.ptx" "${defs[@]}" "$@" "$root/kernels/track.cl" 2> "$tmp/clang.log" ||
  { cat "$tmp/clang.log" >&2; exit 1; }
sed -i "s/^\.target .*/.target $arch/; s/^\.version .*/.version 7.8/" "$tmp/track.ptx"
"$ptxas" -arch="$arch" -c -v -o "$tmp/track.o" "$tmp/track.ptx" 2>&1 | grep -i -A2 "function properties for track_search_tiles" |
  tail -2 | sed 's/^ *//'
size=$(readelf -S -W "$tmp/track.o" 2>/dev/null | awk '$2 == ".text.track_search_tiles" { print $6 }')
echo "track_search_tiles: $((16#$size / 16)) instructions"
