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
#include "cl/kernel.h"
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
  Error create_kernels (const cl::Program &program);

  // Buffers and work maps for a geometry, kernel arguments for a layout.
  Error geometry (const cl::Device &dev, const PyramidGeometry &g, const FrameLayout &layout);

  // The caller's phases (Family::phases) of the launches: resampling with
  // the rows' sums, the 45-degree integral, the columns' sums.
  struct Phases {
    int pyramid, tilted, integral;
  };
  // Launches for one frame.  The first resets `counters` (kCounterWords
  // words: a family's list counters) and the frame's candidates.
  Error enqueue (const FrameBuffers &frame, const cl::Mem &counters, const Phases &phases, Launcher &l);

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
  using Mem = cl::Mem;
  // kernels/pyramid.cl: pyramid_rows (GPU schedule) and pyramid_rows_seq (CPU): src, src_stride, src_bpp, rgb,
  // levels, xtab, ytab, xfirst, yfirst, row_map, [nrows,] sum, sqsum, stride, counters, hits
  cl::TypedKernel<Mem, cl_int, cl_int, cl_int4, Mem, Mem, Mem, Mem, Mem, Mem, Mem, Mem, cl_int, Mem, Mem> rows_;
  cl::TypedKernel<Mem, cl_int, cl_int, cl_int4, Mem, Mem, Mem, Mem, Mem, Mem, cl_int, Mem, Mem, cl_int, Mem, Mem>
      rows_seq_;
  // integral_cols_blocked: levels, colblock_map, sum, sqsum, stride; integral_cols_rows: levels, colblock_map,
  // nblocks, sum, sqsum, stride
  cl::TypedKernel<Mem, Mem, Mem, Mem, cl_int> cols_;
  cl::TypedKernel<Mem, Mem, cl_int, Mem, Mem, cl_int> cols_rows_;
  // tilted_anti, tilted_diag: levels, diag_map, ndiag, rowsum, tilted, stride
  cl::TypedKernel<Mem, Mem, cl_int, Mem, Mem, cl_int> tilt_a_, tilt_b_;
  cl_int src_stride_ = 0, src_bpp_ = 0;
  cl_int4 rgb_ = {};
  cl::Mem levels_, xtab_, ytab_, xfirst_, yfirst_, row_map_, diag_map_, colblock_map_;
  cl::Mem sum_, sqsum_, tilted_;
  int nrowgroups_ = 0, nrows_ = 0, ncolblocks_ = 0, ndiag_ = 0, nlevels_ = 0;
  cl_int stride_ = 0;
};

} // namespace gpudetect
