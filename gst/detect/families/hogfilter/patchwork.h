// Patchworks: the feature planes of every level of a pyramid packed into a
// few planes of one fixed size, so that a frame's features are transformed
// by one batched FFT whatever the number of levels (fftconv.h).
//
// Each level's plane (rows x cols, the padding its detector wants already
// in it) is copied whole into a patchwork at (y, x); planes never overlap.
// The correlation of a filter of r x c with the patchwork, read back at the
// level's valid positions ((rows - r + 1) x (cols - c + 1), the filter wholly
// inside the plane), reads only the level's own rectangle, so no gap is
// needed between levels and no position wraps around the patchwork's edges
// (the correlation the FFT computes is circular).  Everything outside the
// levels' rectangles is zero.
//
// Packing: the planes, tallest first, each at the lowest (then leftmost)
// place of the skyline of the first patchwork it fits in, a new patchwork
// where it fits in none.  Size: among sizes 2^a 3^b 5^c with b <= 2, c <= 1
// and b + c <= 2 (patchwork_friendly; columns even, for the real-to-complex
// transform) from the largest plane to twice it each way, the one of least
// estimated work (patchworks x area x (the transforms' log factor + the
// multiply-accumulate), fftconv.h), whose buffers fit the given limits.
// VkFFT transforms those sizes fastest for their area: sizes with more
// factors 3 or 5, or a factor 7 (all VkFFT radices), took up to 1.7 times as
// long per value on PoCL (162 x 432 against 192 x 256; gpudetect-fft-sizes,
// docs/benchmarks.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace gpudetect {

struct PatchworkRect {
  int rows = 0, cols = 0;
};

struct PatchworkPlace {
  int patch = -1; // -1: not placed (an empty plane)
  int y = 0, x = 0;
};

struct PatchworkPlan {
  int rows = 0, cols = 0; // every patchwork's size
  int count = 0;          // patchworks
  std::vector<PatchworkPlace> places; // one per plane, in the caller's order
  double cost = 0;        // the estimate the size was chosen by
};

// Packs `planes` into patchworks of rows x cols.  False where a plane is
// larger than a patchwork.  Empty planes (0 rows or columns) are not placed.
bool pack_patchworks (const std::vector<PatchworkRect> &planes, int rows, int cols, PatchworkPlan *out);

// What the size choice weighs and must respect.
struct PatchworkWork {
  int dims = 1;    // feature dimensions: forward transforms per patchwork
  int filters = 1; // inverse transforms and multiply-accumulates per patchwork and dimension
  // Limits in bytes: one buffer of floats (the device's largest allocation),
  // and the transforms' three buffers together (patchworks x dims, filters
  // x dims, patchworks x filters planes of rows x (cols + 2) floats).
  uint64_t max_buffer = uint64_t (1) << 30;
  uint64_t max_total = uint64_t (3) << 30;
};

// The size of least estimated work (above); count 0 where no size fits the
// limits or the planes are all empty.
PatchworkPlan plan_patchworks (const std::vector<PatchworkRect> &planes, const PatchworkWork &work);

// Whether n is 2^a 3^b 5^c with b <= 2, c <= 1 and b + c <= 2.
bool patchwork_friendly (int n);

} // namespace gpudetect
