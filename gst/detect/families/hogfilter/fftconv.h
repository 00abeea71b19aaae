// Linear filters evaluated in the frequency domain: F filters of rows x cols
// x D correlated with the D-dimensional feature planes of every level of a
// pyramid, whatever the features (FHOG, Dalal-Triggs blocks, DPM levels).
//
// Per frame (kernels/hog_fft.cl): the levels' planes laid into patchworks
// (patchwork.h; one launch), one batched forward transform of every
// patchwork's D planes (VkFFT), one multiply-accumulate launch (F spectra per
// patchwork), one batched inverse transform of the patchworks x F spectra,
// and one launch that reads the scores at every level's valid positions back
// out and appends those reaching their filter's threshold to the frame's
// candidates (the shared compaction, compact.cl).  The filters' spectra are
// made once per patchwork size, when the geometry is (re)planned, and kept on
// the device; VkFFT's kernels are compiled then too, plans cached by size.
//
// Scores: score(level, filter, y, x) = sum over d, m < rows, n < cols of
// filter[d][m][n] * feature[d][y + m][x + n], for the positions whose filter
// lies wholly inside the level's plane ((plane rows - rows + 1) x (plane cols
// - cols + 1)): the same as a direct correlation, to the rounding of a float
// FFT (docs/benchmarks.md: the measured error).  scores() holds them all
// after a frame's launches, for detectors that read more than thresholded
// candidates (DPM's parts).
#pragma once

#include "cl/cl.h"
#include "cl/kernel.h"
#include "core/family.h"
#include "patchwork.h"
#include "vkfft.h"

#include <memory>
#include <string>
#include <vector>

namespace gpudetect {

struct FilterBank {
  int rows = 0, cols = 0, dims = 0;
  // each dims planes of rows x cols, row-major, plane after plane
  std::vector<std::vector<float>> filters;
};

// A level's plane in the caller's feature buffer: dimension d's value at
// (y, x) is features[d * plane + offset + y * cols + x].
struct FeatureLevel {
  int rows = 0, cols = 0;   // its padding included
  size_t offset = 0;
  int first_window = 0;     // candidates: window (first_window + y * across + x) * filters + filter
};

// Whether the frequency domain is the faster way to evaluate `filters`
// filters of rows x cols on a device (gpu: the GPU schedule): where rows x
// cols >= a / filters + b, the constants fitted by gpudetect-hog-sweep to
// the crossover it measured on the device's kind (docs/benchmarks.md).  The
// FFT path costs mostly a part per frame (the forward transforms) and a part
// per filter (its multiply-accumulate and inverse transform), the direct one
// a part per filter and cell; both grow alike with the feature dimensions.
bool fft_preferred (bool gpu, int filters, int rows, int cols);

// Tuning hog-eval's choice for `filters` filters of rows x cols under `env`
// (auto: fft_preferred where this build has the FFT evaluation): *fft; an
// error where fft is asked for and this build has none.
Error choose_fft (const BuildEnv &env, int filters, int rows, int cols, bool *fft);

// hog-eval=direct|fft|auto (Tuning::family): the filters correlated directly,
// through the frequency domain, or by the measured crossover (default).  The
// knob of every family whose filters go through FilterEvaluator or the
// correlator (HOG filters, DPM).
enum class HogEval { Direct, Fft, Auto };
extern const char kHogEvalKey[];
Error hog_eval_option (const Tuning &t, HogEval *out);
// The check of the families that read it (Family::options).
inline Error check_hog_eval (const Tuning &t) {
  HogEval eval;
  return hog_eval_option (t, &eval);
}

class FftCorrelator {
public:
  static bool available () { return VkfftPlan::available (); }
  // kernels/hog_fft.cl (after compact.cl and candidates.cl in a program),
  // and its options; compact (GPU schedule): candidates through work-groups
  // of WGF lanes.
  static void add_source (ProgramSpec *out);
  static std::string options (bool compact);
  // A program of its own: the core kernels it needs, then hog_fft.cl.
  static void add_program_sources (ProgramSpec *out);

  // gpu: the GPU schedule's kernels (a work-item per float, frequency or
  // position), else the CPU schedule's (a work-item per row).
  Error setup (const cl::Device &dev, const cl::Program &program, const FilterBank &bank, bool gpu, bool compact);
  // (Re)plans for a frame's levels (their planes `plane` floats apart in
  // `features`); thresholds: one float per filter, the least score kept.
  // Buffers stay the caller's and must outlive the launches.
  Error geometry (const std::vector<FeatureLevel> &levels, size_t plane, const cl::Mem &features,
                      const cl::Mem &thresholds);
  // Launched under the caller's phase `phase` (Family::phases).
  Error enqueue (const cl::Mem &candidates, cl_uint capacity, int phase, Launcher &l);
  // Instead of candidates: every valid score written into the caller's
  // planes, filter f's at plane first_plane + f (`plane` floats apart), each
  // level's at its features' offset and row length (the feature planes'
  // layout; DPM's responses).  The thresholds are not read.
  Error enqueue_dense (const cl::Mem &out, size_t plane, int first_plane, int phase, Launcher &l);

  const PatchworkPlan &patchworks () const { return plan_; }
  // Launches a frame takes (0 where no level has a position).
  int launches () const;
  int positions () const { return positions_; }
  // After a frame's launches: patchworks x filters planes of R x (C + 2)
  // floats; where a level's score lies in it.
  const cl::Mem &scores () const { return out_; }
  size_t score_index (int level, int filter, int y, int x) const;

private:
  Error plan_for (int rows, int cols, int batches, VkfftPlan::Direction dir, const VkfftPlan **out);
  Error filter_spectra ();

  const cl::Device *dev_ = nullptr;
  FilterBank bank_;
  bool gpu_ = true, compact_ = false;
  Error enqueue_scores (int phase, Launcher &l);

  // kernels/hog_fft.cl, the CPU schedule's over rows (_rows)
  using Mem = cl::Mem;
  // fft_pack: features, plane, dims, map, items, patch floats, patches; fft_pack_rows: ..., rows, rows, stride, ...
  cl::TypedKernel<Mem, cl_int, cl_int, Mem, cl_int, cl_int, Mem> pack_;
  cl::TypedKernel<Mem, cl_int, cl_int, Mem, cl_int, cl_int, cl_int, Mem> pack_rows_;
  // fft_place_filters: coefficients, filter rows and columns, items, rows, stride, scale, spectra
  cl::TypedKernel<Mem, cl_int, cl_int, cl_int, cl_int, cl_int, cl_float, Mem> place_;
  // fft_mac(_rows): patches' spectra, filters' spectra, products, then five counts
  cl::TypedKernel<Mem, Mem, Mem, cl_int, cl_int, cl_int, cl_int, cl_int> mac_;
  // fft_extract: levels, nlevels, items, scores, rows, stride, filters, thresholds, candidates;
  // fft_extract_rows: levels, position rows, rows, then the same
  cl::TypedKernel<Mem, cl_int, cl_int, Mem, cl_int, cl_int, cl_int, Mem, Mem, cl_uint> extract_;
  cl::TypedKernel<Mem, Mem, cl_int, Mem, cl_int, cl_int, cl_int, Mem, Mem, cl_uint> extract_rows_;
  // fft_dense: levels, nlevels, items, scores, rows, stride, filters, filter columns, out, plane, first plane
  cl::TypedKernel<Mem, cl_int, cl_int, Mem, cl_int, cl_int, cl_int, cl_int, Mem, cl_int, cl_int> dense_;
  const cl::Mem *thresholds_ = nullptr; // the caller's (geometry)
  cl::Mem coef_;
  PatchworkPlan plan_;
  std::vector<PatchworkPlace> places_; // per level
  cl::Mem map_, levels_, prows_, patches_, spectra_, out_;
  int spectra_rows_ = 0, spectra_cols_ = 0; // the size spectra_ was made for
  std::vector<std::unique_ptr<VkfftPlan>> plans_; // cached, most recent last
  const VkfftPlan *fwd_ = nullptr, *inv_ = nullptr;
  int positions_ = 0, nlevels_ = 0, pack_items_ = 0, mac_items_ = 0, extract_items_ = 0, rows_ = 0, stride_ = 0;
};

} // namespace gpudetect
