// A bank of linear filters evaluated at every position of every level of a
// feature pyramid (one plane per dimension, every level's rectangle at its
// offset: fftconv.h's FeatureLevel), each (position, filter) whose score
// reaches the filter's threshold appended to the frame's candidates as
// window (first_window + y * across + x) * filters + filter.  Directly
// (kernels/hog.cl: hog_filters, a work-item per position of every level,
// candidates through the shared compaction where a work-group holds WGF
// lanes; CPU schedule: hog_filters_rows, a work-item per tile of up to
// HOG_TILE positions of a row) or through the frequency domain
// (FftCorrelator), as tuning hog-eval and the measured crossover choose
// (choose_fft).
//
// The families bring the features and, for the direct kernels, their
// device's level descriptors (hog.cl's int16: s10 the plane's columns, s11
// its offset, s14 the level's first window, s15 its windows across x
// filters) and the kernels' -D options for the filters' size and feature
// dimensions (HOG_FH, HOG_FW, HOG_NF, HOG_FILTER_DIMS, HOG_ACC_DOUBLE).
#pragma once

#include "core/family.h"
#include "fftconv.h"

#include <vector>

namespace gpudetect {

class FilterEvaluator {
public:
  // Chooses the evaluation of `filters` filters of rows x cols under `env`
  // and adds the options it needs to the program (HOG_COMPACT and the FFT
  // path's where the candidates go through the compaction, the warp votes'
  // PTX on NVIDIA GPUs).  The program's source must hold hog.cl and
  // FftCorrelator::add_source.
  Error program (const BuildEnv &env, int filters, int rows, int cols, ProgramSpec *out);
  bool fft () const { return fft_; }
  const char *evaluation () const { return fft_ ? "FFT correlation" : "direct correlation"; }

  Error setup (const cl::Device &dev, const cl::Program &program, const FilterBank &bank);
  // (Re)plans for a frame, after setup: the levels (in the order of the
  // descriptors), their planes `plane` floats apart in `features`;
  // `descriptors` holds `ndescriptors` level descriptors (direct
  // evaluation). Buffers stay the caller's and must outlive the launches.
  Error geometry (const std::vector<FeatureLevel> &levels, size_t plane, const cl::Mem &features,
                      const cl::Mem &descriptors, int ndescriptors);
  // The least score each filter keeps (one per filter, in the bank's order);
  // nothing before setup.
  Error thresholds (const std::vector<float> &least);
  // The frame's evaluation, after the launches that make its features,
  // under the caller's phase `phase`.
  Error enqueue (const FrameBuffers &frame, int phase, Launcher &l);

private:
  const cl::Device *dev_ = nullptr;
  bool gpu_ = true, compact_ = false, fft_ = false;
  int rows_ = 0, cols_ = 0; // the filters' size
  FftCorrelator fftconv_;
  // kernels/hog.cl: hog_filters (GPU schedule): levels, nlevels, positions, features, plane, coefficients,
  // thresholds, candidates; hog_filters_rows: levels, tiles, ntiles, then the same
  using Mem = cl::Mem;
  cl::TypedKernel<Mem, cl_int, cl_int, Mem, cl_int, Mem, Mem, Mem, cl_uint> direct_;
  cl::TypedKernel<Mem, Mem, cl_int, Mem, cl_int, Mem, Mem, Mem, cl_uint> direct_rows_;
  cl::Mem coef_, thresholds_, tiles_;
  int ntiles_ = 0, positions_ = 0;
  // the caller's buffers (geometry)
  const cl::Mem *features_ = nullptr, *descriptors_ = nullptr;
  cl_int plane_ = 0, ndescriptors_ = 0;
};

} // namespace gpudetect
