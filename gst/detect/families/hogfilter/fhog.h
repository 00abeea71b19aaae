// Felzenszwalb's HOG (FHOG, 31 dimensions) over dlib's image pyramid, as
// dlib's scan_fhog_pyramid<pyramid_down<N>> computes it: the plan of the
// levels (their sizes, dlib's resampling tables, their cells and padded
// feature planes packed one after the other), the host reference of every
// step (what kernels/hog.cl computes, value for value), and the device side
// shared by every user of the features (the hogfilter family, the tests).
//
// dlib (image_transforms/fhog.h, image_pyramid.h, interpolation.h):
// - level 0 is the frame's grey image; level k + 1 has floor ((N - 1) *
//   rows / N) x floor ((N - 1) * cols / N) pixels, resampled bilinearly from
//   level k (resize_image of 8-bit grey images: a 4-lane float loop, then a
//   scalar tail in double); levels are added while dlib's rect_down of the
//   frame's rectangle stays at least min_level wide and high, up to
//   max_levels;
// - a level of R x C pixels has round (R / cell) x round (C / cell) cells;
//   every pixel's gradient (central differences), snapped to 18 orientations,
//   votes its length into the 4 nearest cells (bilinear weights); a cell's
//   energy is the sum over 9 orientations of the squared sum of both signs;
// - the features of the cells but the outer ring (cells - 2 each way), each
//   normalised by its 4 blocks of 2 x 2 cells: 18 signed and 9 unsigned
//   orientations and 4 texture energies, in a plane padded for a filter of
//   pr x pc cells ((pr - 1) / 2 rows of zeros above, pr / 2 below; the same
//   across).
#pragma once

#include "cl/cl.h"
#include "cl/kernel.h"
#include "core/family.h"

#include <cstdint>
#include <string>
#include <vector>

namespace gpudetect {

constexpr int kFhogDims = 31;
constexpr int kFhogCellFloats = 20; // a cell on the device: 18 bins, its energy, one unused
constexpr int kFhogBand = 8;        // rows of cells of a work-item on the CPU schedule (HOG_BAND)

struct FhogParams {
  int cell = 8;
  int pyramid_down = 6;            // N of dlib's pyramid_down<N>
  int min_level_width = 64, min_level_height = 64;
  int max_levels = 1000;
  int pad_rows = 1, pad_cols = 1;  // the filter's size in cells (1, 1: no padding)
};

struct FhogLevel {
  int width = 0, height = 0;       // pixels
  size_t pixel_offset = 0;
  int cells_y = 0, cells_x = 0;    // dlib's cells_nr, cells_nc
  size_t cell_offset = 0;          // in cells
  int visible_rows = 0, visible_cols = 0;
  int simd_end = 0;                // columns below it are in dlib's 8-lane gradient loop
  int feat_rows = 0, feat_cols = 0; // the padded plane (0 x 0 when dlib's is empty)
  size_t feat_offset = 0;          // in floats of one dimension's plane
  // resampling from the level before (empty for level 0)
  std::vector<cl_int4> down_rows, down_cols;
  std::vector<double> down_tb;
};

struct FhogPlan {
  FhogParams params;
  int image_width = 0, image_height = 0;
  std::vector<FhogLevel> levels;
  size_t pixels = 0, cells = 0, feat_plane = 0; // totals
};

// The levels of dlib's pyramid for a frame (create_fhog_pyramid).
FhogPlan plan_fhog (int width, int height, const FhogParams &p);

// Host reference, step by step (dlib's arithmetic, as kernels/hog.cl):
// level `li` (li >= 1) from level li - 1's pixels;
std::vector<uint8_t> fhog_down (const FhogLevel &from, const std::vector<uint8_t> &src, const FhogLevel &to);
// a level's cells (kFhogCellFloats floats each, row-major);
std::vector<float> fhog_cells (const FhogLevel &l, const std::vector<uint8_t> &pixels, int cell);
// its padded feature planes (31 planes of feat_rows x feat_cols, one after
// the other).
std::vector<float> fhog_features (const FhogLevel &l, const std::vector<float> &cells, const FhogParams &p);

// The device side: the program's source and options, the kernels, the
// buffers of a plan, and a frame's launches (luma, one resampling per level
// after the first, gradients, cells, features).
class FhogDevice {
public:
  // The program's sources: the core's and kernels/hog.cl.
  static void add_sources (ProgramSpec *out);
  // -D options for a program built for `p` (and its filters' count); the
  // device decides the rounding options.
  static std::string options (const cl::Device &dev, const FhogParams &p, int filters);

  // rows: the CPU schedule's kernels (a work-item per row of a level rather
  // than per pixel for the resampling, per band of kFhogBand rows of cells
  // for the gradients and cells together).
  Error setup (const cl::Program &program, bool rows = false);
  // (Re)allocates for a plan; `extra` int16 components 14, 15 of each level
  // (first window, windows across) are the caller's.
  Error geometry (const cl::Device &dev, const FhogPlan &plan, const FrameLayout &layout,
                      const std::vector<std::pair<int, int>> &windows = {});
  // Launched under the caller's phases `pyramid` (resampling) and `features`.
  Error enqueue (const cl::Mem &src, const cl::Mem &candidates, int pyramid, int features, Launcher &l);

  const cl::Mem &levels () const { return levels_; }
  const cl::Mem &features () const { return feats_; }
  const cl::Mem &pixels () const { return pix_; }
  int nlevels () const { return nlevels_; }

private:
  const cl::Program *program_ = nullptr; // the caller's, alive while this is
  // kernels/hog.cl
  using Mem = cl::Mem;
  // hog_luma: src, src stride, bpp, rgb, width, height, pixels, candidates
  cl::TypedKernel<Mem, cl_int, cl_int, cl_int4, cl_int, cl_int, Mem, Mem> luma_;
  // hog_gradients: pixels, levels, nlevels, npixels, gradient lengths, orientations
  cl::TypedKernel<Mem, Mem, cl_int, cl_int, Mem, Mem> gradients_;
  // hog_cells: gradient lengths, orientations, levels, nlevels, ncells, cells;
  // hog_cells_rows: pixels, levels, cell rows, rows, cells
  cl::TypedKernel<Mem, Mem, Mem, cl_int, cl_int, Mem> cells_;
  cl::TypedKernel<Mem, Mem, Mem, cl_int, Mem> cells_rows_;
  // hog_features: levels, nlevels, items, cells, features, plane
  cl::TypedKernel<Mem, cl_int, cl_int, Mem, Mem, cl_int> features_;
  // hog_down (one per level after the first): pixels, source offset and width, offset, width and height, the
  // rows' taps and weights, the columns' taps; hog_down_rows: the same, then the 8-column chunks and their count
  using Down = cl::TypedKernel<Mem, cl_int, cl_int, cl_int, cl_int, cl_int, Mem, Mem, Mem>;
  using DownRows = cl::TypedKernel<Mem, cl_int, cl_int, cl_int, cl_int, cl_int, Mem, Mem, Mem, Mem, cl_int>;
  std::vector<Down> down_;
  std::vector<DownRows> down_rows_;
  FrameLayout layout_;
  cl_int image_width_ = 0, image_height_ = 0;
  std::vector<cl::Mem> down_tabs_;
  cl::Mem levels_, pix_, grad_len_, grad_o_, cells_buf_, feats_, cell_rows_; // no gradients on rows
  bool rows_ = false;
  int ncell_rows_ = 0;
  int nlevels_ = 0, pixels0_ = 0, npixels_ = 0, ncells_ = 0, nfeat_ = 0;
  std::vector<int> down_items_;
};

} // namespace gpudetect
