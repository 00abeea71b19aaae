// Integral images of every level of the pyramid, built on the device from the
// uploaded frame, for the families that evaluate rectangle sums (OpenCV's
// cascades, WaldBoost's MB-LBP): every level resampled from the frame with
// OpenCV's bit-exact bilinear resize and its rows prefix-summed in one launch
// (pyramid_rows), the 45-degree integral where asked for (two launches), and
// the column pass of every level in one launch.  All levels lie in one buffer
// per plane with one stride (PyramidGeometry: x0, y0, stride); kernels/
// pyramid.cl.
#pragma once

#include "cl/cl.h"
#include "family.h"
#include "frame.h"
#include "pyramid.h"

#include <string>

namespace gpudetect {

class IntegralPyramid {
public:
  static constexpr int kCounterWords = 16;

  struct Planes {
    bool sqsum = false;  // squared sums (variance normalisation)
    bool tilted = false; // 45-degree integral
    bool narrow = false; // the sum plane modulo 2^16 (GPU schedule; see kernels/pyramid.cl)
  };

  // Chooses the work-group sizes for the device and schedule; the program's
  // options follow.
  void configure (const BuildEnv &env, const Planes &planes);
  const Planes &planes () const { return planes_; }
  // Build options of kernels/pyramid.cl (and of every kernel that reads the
  // planes: they share its sum_t).
  std::string options () const;
  cl::Error create_kernels (const cl::Program &program);

  // Buffers and work maps for a geometry, kernel arguments for a layout.
  cl::Error geometry (const cl::Device &dev, const PyramidGeometry &g, const FrameLayout &layout);

  // Launches for one frame.  The first resets `counters` (kCounterWords
  // words: a family's list counters) and the frame's candidates.
  cl::Error enqueue (const FrameBuffers &frame, const cl::Mem &counters, Launcher &l);

  // Level descriptors on the device (int8: x0, y0, width, height, nx, ny,
  // step, first_window) and the planes.
  const cl::Mem &levels () const { return levels_; }
  const cl::Mem &sum () const { return sum_; }
  const cl::Mem &sqsum () const { return sqsum_; }
  // The tilted plane where there is one, else the sum plane (kernels take
  // an argument either way).
  const cl::Mem &tilted () const { return planes_.tilted ? tilted_ : sum_; }
  cl_int stride () const { return stride_; }

private:
  Planes planes_;
  bool gpu_schedule_ = true;
  size_t rows_wg_ = 256;
  cl::Kernel rows_, cols_, tilt_a_, tilt_b_;
  cl::Mem levels_, xtab_, ytab_, xfirst_, yfirst_, row_map_, diag_map_, colblock_map_;
  cl::Mem sum_, sqsum_, tilted_;
  int nrowgroups_ = 0, nrows_ = 0, ncolblocks_ = 0, ndiag_ = 0, nlevels_ = 0;
  cl_int stride_ = 0;
  cl_mem bound_[3] = {}; // pyramid_rows' per-frame arguments as last set
};

} // namespace gpudetect
