// Dalal and Triggs' HOG as OpenCV's HOGDescriptor computes it (objdetect,
// hog.cpp, 4.6: detectMultiScale on a grey cv::Mat, no padding, the window
// stride = the block stride), over OpenCV's pyramid for it: the plan of the
// levels, the host reference of every step (what kernels/hog_dt.cl computes,
// value for value), and the device side (levels, gradients, block features).
//
// OpenCV:
// - level k is the frame resized (cv::resize, INTER_LINEAR_EXACT) to
//   cvRound (W / s) x cvRound (H / s), s = scale^k (a double multiplied by
//   `scale` at each level), while that is at least the window, up to
//   max_levels (nlevels) levels;
// - a pixel's gradient: the [-1, 0, 1] differences of sqrt (grey) (gamma
//   correction; the grey level itself without), the image mirrored at its
//   edges (BORDER_REFLECT_101); its length and OpenCV's fastAtan2 angle
//   (cartToPolar), unsigned, split between the two nearest of `bins`
//   orientation bins in proportion;
// - a block of 2 x 2 cells of 8 x 8 pixels every 8 pixels (block stride) of
//   the level: each of its 16 x 16 pixels votes its two parts, times a
//   Gaussian weight (sigma = win_sigma) of its place in the block, into the
//   cells around it (bilinear in x and y, HOGCache's pixel table order), and
//   the block's 36 values are normalised L2-Hys (L2, clipped at l2hys, L2
//   again);
// - a window of 64 x 128 pixels every 8 pixels: the 7 x 15 blocks under it;
//   its score is the SVM's dot product with them plus rho (a linear filter of
//   7 x 15 block positions over 36 feature planes, which the hogfilter
//   family's filter kernels evaluate; dthog's family).
//
// The arithmetic is OpenCV's AVX2 build's (the fused multiply-adds of its
// vectorised magnitude and arctangent included): every level pixel,
// gradient and block feature of the device equals OpenCV's bit for bit
// (test-hog-dt).  Colour: OpenCV takes the strongest gradient of three
// channels; the engine sees the frame's luma (grey frames as they are), so
// OpenCV's answer on the grey image is the reference.
#pragma once

#include "cl/cl.h"
#include "cl/kernel.h"
#include "core/family.h"

#include <cstdint>
#include <string>
#include <vector>

namespace gpudetect {

struct DtHogParams {
  int cell = 8, block = 16, block_stride = 8, bins = 9; // only these so far (kernels/hog_dt.cl)
  double win_sigma = 4; // sigma of the Gaussian weight over a block (OpenCV: (block w + block h) / 8)
  double l2hys = 0.2;   // L2HysThreshold
  bool gamma = true;    // gammaCorrection: sqrt of the grey levels
  double scale = 1.05;  // between levels
  int max_levels = 64;  // nlevels
  int group = 2;        // groupRectangles' groupThreshold (finalThreshold)
  double group_eps = 0.2;
  int cells_per_block () const { return (block / cell) * (block / cell); }
  int dims () const { return bins * cells_per_block (); }
};

constexpr int kDtDims = 36; // dims () of the only parameters the kernels take

struct DtLevel {
  double scale = 1;               // OpenCV's levelScale (double)
  int width = 0, height = 0;      // pixels
  size_t pixel_offset = 0;
  int blocks_x = 0, blocks_y = 0; // block positions: (width - block) / stride + 1, ...
  size_t block_offset = 0;        // in values of one feature plane
  int windows_x = 0, windows_y = 0;
  int first_window = 0;
  // OpenCV's INTER_LINEAR_EXACT tables from the frame (core/pyramid.h:
  // source index * 512 + weight of the next source pixel in 1/256)
  std::vector<int32_t> xtab, ytab;
};

struct DtPlan {
  DtHogParams params;
  int image_width = 0, image_height = 0;
  int filter_rows = 0, filter_cols = 0; // the window in block positions
  int window_width = 0, window_height = 0;
  std::vector<DtLevel> levels;
  size_t pixels = 0, blocks = 0;
  int windows = 0;
};

// OpenCV's levels for a frame (detectMultiScale), for a window of
// filter_rows x filter_cols block positions; levels whose window in frame
// pixels (cvRound (window * s)) is under min_size are left out, and the scan
// stops at one over max_size (0: unbounded; OpenCV has neither bound).
// tables: the resampling tables too.
DtPlan plan_dt (int width, int height, const DtHogParams &p, int filter_rows, int filter_cols, Size2 min_size = {},
                Size2 max_size = {}, bool tables = true);

// OpenCV's box of a window (level pixels x, y) in the frame:
// Rect (cvRound (x * s), cvRound (y * s), cvRound (64 * s), cvRound (128 * s)).
Rect dt_window_rect (const DtPlan &plan, int level, int x, int y);

// HOGCache's pixel table: a block's pixels in the order OpenCV adds their
// votes (those voting into one cell, into two, into four; each group column
// by column), each with its place in the block and its weight (the Gaussian
// weight times the bilinear one) for each of the block's cells (0 where it
// does not vote into it).  Cells are numbered as OpenCV's block histogram
// holds them: (cell x * 2 + cell y), the 9 bins of cell c at 9 c.
struct DtPixel {
  int y = 0, x = 0;
  float w[4] = {};
};
std::vector<DtPixel> dt_block_pixels (const DtHogParams &p);

// Host reference, step by step:
// a level's pixels from the frame (grey, `stride` bytes a row);
std::vector<uint8_t> dt_level_pixels (const DtLevel &l, const uint8_t *frame, int stride);
// its gradients: two values a pixel (the length's parts for the two bins)
// and the two bins;
void dt_gradients (const DtHogParams &p, const std::vector<uint8_t> &px, int width, int height,
                   std::vector<float> *grad, std::vector<uint8_t> *bins);
// its block features: dims () planes of blocks_y x blocks_x, one after the
// other (feature d of a block: bin d % 9 of its cell d / 9).
std::vector<float> dt_blocks (const DtHogParams &p, const DtLevel &l, const std::vector<float> &grad,
                              const std::vector<uint8_t> &bins);

// The device side: the program's source and options, the kernels, the
// buffers of a plan, and a frame's launches (levels, gradients, blocks).
// The CPU schedule's kernels compute the grey levels' square roots in vector
// lanes where the others read OpenCV's table: the same IEEE square roots.
class DtDevice {
public:
  // The program's sources: the core's, kernels/hog.cl and hog_dt.cl.
  static void add_sources (ProgramSpec *out);
  // -D options for a program built for `p`; the device decides the
  // rounding options.
  static std::string options (const cl::Device &dev, const DtHogParams &p);

  // rows: the CPU schedule's kernels (a work-item per row rather than per
  // pixel or block).
  Error setup (const cl::Device &dev, const cl::Program &program, const DtHogParams &p, bool rows = false);
  // (Re)allocates for a plan.  Level descriptors (int16): s0 width, s1
  // height, s2 pixel offset, s3 xtab first, s4 ytab first, s5 first column
  // of OpenCV's scalar arctangent (the width where none), s9 blocks down,
  // s10 blocks across, s11 block offset (= s12, its first block item), s14
  // first window, s15 windows across: components 10, 11, 14, 15 as
  // kernels/hog.cl's filters read them.
  Error geometry (const cl::Device &dev, const DtPlan &plan, const FrameLayout &layout);
  // The first launch resets the frame's candidates.
  // Launched under the caller's phases `pyramid` (resampling) and `features`.
  Error enqueue (const cl::Mem &src, const cl::Mem &candidates, int pyramid, int features, Launcher &l);

  const cl::Mem &levels () const { return levels_; }
  const cl::Mem &pixels () const { return pix_; }
  const cl::Mem &gradients () const { return grad_; }
  const cl::Mem &bins () const { return bins_; }
  const cl::Mem &features () const { return feats_; }
  int nlevels () const { return nlevels_; }
  size_t plane () const { return plane_; } // values of one feature plane (all levels)

private:
  // kernels/hog_dt.cl, each with a CPU-schedule variant over rows (_rows) in place of the item counts
  using Mem = cl::Mem;
  // dt_resample: src, src stride, bpp, rgb, src width, levels, nlevels, npixels, xtab, ytab, pixels, candidates
  cl::TypedKernel<Mem, cl_int, cl_int, cl_int4, cl_int, Mem, cl_int, cl_int, Mem, Mem, Mem, Mem> resample_;
  cl::TypedKernel<Mem, cl_int, cl_int, cl_int4, cl_int, Mem, Mem, cl_int, Mem, Mem, Mem, Mem> resample_rows_;
  // dt_gradients: pixels, levels, nlevels, npixels, lut, gradients, bins
  cl::TypedKernel<Mem, Mem, cl_int, cl_int, Mem, Mem, Mem> gradients_;
  cl::TypedKernel<Mem, Mem, Mem, cl_int, Mem, Mem, Mem> gradients_rows_;
  // dt_blocks: gradients, bins, levels, nlevels, nblocks, ptab, weights, l2hys, features, plane
  cl::TypedKernel<Mem, Mem, Mem, cl_int, cl_int, Mem, Mem, cl_float, Mem, cl_int> blocks_;
  cl::TypedKernel<Mem, Mem, Mem, Mem, cl_int, Mem, Mem, cl_float, Mem, cl_int> blocks_rows_;
  FrameLayout layout_;
  cl_int image_width_ = 0;
  cl::Mem levels_, xtab_, ytab_, lut_, ptab_, ptab_w_, pix_, grad_, bins_, feats_, pix_rows_, block_rows_;
  bool rows_ = false;
  float l2hys_ = 0.2f;
  int nlevels_ = 0, npixels_ = 0, nblocks_ = 0, npix_rows_ = 0, nblock_rows_ = 0;
  size_t plane_ = 0;
};

} // namespace gpudetect
