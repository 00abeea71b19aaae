#include "filtereval.h"

#include <algorithm>

namespace gpudetect {

namespace {

constexpr int kWg = 256;  // WGF (kernels/compact.cl)
constexpr int kTile = 64; // HOG_TILE (kernels/hog.cl)

} // namespace

Error FilterEvaluator::program (const BuildEnv &env, int filters, int rows, int cols, ProgramSpec *out) {
  gpu_ = env.gpu_schedule;
  rows_ = rows;
  cols_ = cols;
  // direct or FFT correlation (tuning hog-eval; auto: the faster here)
  if (Error e = choose_fft (env, filters, rows, cols, &fft_))
    return e;
  // the candidates through the shared compaction where a work-group holds
  // WGF (256) lanes; warp votes on NVIDIA GPUs (kernels/warp.cl), retried
  // without where the driver refuses the inline PTX
  compact_ = env.gpu_schedule && env.dev.info.max_work_group >= static_cast<size_t> (kWg);
  if (compact_) {
    out->options += " -D HOG_COMPACT" + FftCorrelator::options (true);
    add_warp_ptx (env.dev.info, out);
  }
  return {};
}

Error FilterEvaluator::setup (const cl::Device &dev, const cl::Program &program, const FilterBank &bank) {
  dev_ = &dev;
  if (fft_) {
    if (Error e = fftconv_.setup (dev, program, bank, gpu_, compact_))
      return e;
  } else {
    if (Error e = gpu_ ? direct_.create (program, "hog_filters") : direct_rows_.create (program, "hog_filters_rows"))
      return e;
    // interleaved: the filters' coefficients of each feature offset together
    const size_t nf = bank.filters.size (), per = bank.filters.empty () ? 0 : bank.filters[0].size ();
    std::vector<float> coef (nf * per);
    for (size_t f = 0; f < nf; f++)
      for (size_t i = 0; i < per; i++)
        coef[i * nf + f] = bank.filters[f][i];
    if (Error e = cl::upload_vector (dev, &coef_, coef))
      return e;
  }
  return cl::make_buffer (dev, &thresholds_, std::max<size_t> (bank.filters.size (), 1) * sizeof (float));
}

Error FilterEvaluator::geometry (const std::vector<FeatureLevel> &levels, size_t plane, const cl::Mem &features,
                                     const cl::Mem &descriptors, int ndescriptors) {
  if (fft_)
    return fftconv_.geometry (levels, plane, features, thresholds_);
  // the positions of each level: the filter wholly inside its plane
  positions_ = 0;
  std::vector<cl_int4> tiles;
  for (size_t li = 0; li < levels.size (); li++) {
    const int across = std::max (levels[li].cols - cols_ + 1, 0), down = std::max (levels[li].rows - rows_ + 1, 0);
    if (across == 0 || down == 0)
      continue;
    positions_ += across * down;
    if (!gpu_)
      // tiles of up to kTile positions of each row
      for (int y = 0; y < down; y++)
        for (int x = 0; x < across; x += kTile)
          tiles.push_back ({{static_cast<cl_int> (li), y, x, std::min (kTile, across - x)}});
  }
  if (!gpu_) {
    ntiles_ = static_cast<int> (tiles.size ());
    if (Error e = cl::upload_vector (*dev_, &tiles_, tiles.empty () ? std::vector<cl_int4> (1) : tiles))
      return e;
  }
  features_ = &features;
  descriptors_ = &descriptors;
  plane_ = static_cast<cl_int> (plane);
  ndescriptors_ = ndescriptors;
  return {};
}

Error FilterEvaluator::thresholds (const std::vector<float> &least) {
  if (!dev_ || least.empty ())
    return {};
  GPUDETECT_CL_TRY (clEnqueueWriteBuffer (dev_->queue.get (), thresholds_.get (), CL_TRUE, 0,
                                          least.size () * sizeof (float), least.data (), 0, nullptr, nullptr));
  return {};
}

Error FilterEvaluator::enqueue (const FrameBuffers &frame, int phase, Launcher &l) {
  if (fft_)
    return fftconv_.enqueue (frame.candidates, frame.capacity, phase, l);
  if (positions_ == 0)
    return {};
  if (!gpu_) {
    if (Error e = direct_rows_.set (*descriptors_, tiles_, cl_int (ntiles_), *features_, plane_, coef_, thresholds_,
                                    frame.candidates, frame.capacity))
      return e;
    return l.launch (direct_rows_.get (), round_up (std::max (ntiles_, 1), 8), 8, phase);
  }
  if (Error e = direct_.set (*descriptors_, ndescriptors_, cl_int (positions_), *features_, plane_, coef_, thresholds_,
                             frame.candidates, frame.capacity))
    return e;
  const size_t local = compact_ ? kWg : 64;
  return l.launch (direct_.get (), round_up (positions_, local), local, phase);
}

} // namespace gpudetect
