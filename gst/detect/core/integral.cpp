#include "integral.h"

#include <algorithm>

namespace gpudetect {

void IntegralPyramid::configure (const BuildEnv &env, const Planes &planes) {
  planes_ = planes;
  gpu_schedule_ = env.gpu_schedule;
  // pyramid_rows' work-group: 256 lanes, or the largest power of two the
  // device allows
  rows_wg_ = std::min<size_t> (256, env.dev.info.max_work_group);
  size_t p2 = 1;
  while (p2 * 2 <= rows_wg_)
    p2 *= 2;
  rows_wg_ = p2;
}

std::string IntegralPyramid::options () const {
  std::string o = " -D WG=" + std::to_string (rows_wg_);
  if (planes_.sqsum)
    o += " -D HAVE_SQSUM";
  if (planes_.narrow)
    o += " -D NARROW_SUM";
  return o;
}

Error IntegralPyramid::create_kernels (const cl::Program &program) {
  if (Error e = gpu_schedule_ ? rows_.create (program, "pyramid_rows") : rows_seq_.create (program, "pyramid_rows_seq"))
    return e;
  if (Error e = gpu_schedule_ ? cols_.create (program, "integral_cols_blocked")
                              : cols_rows_.create (program, "integral_cols_rows"))
    return e;
  if (Error e = tilt_a_.create (program, "tilted_anti"))
    return e;
  return tilt_b_.create (program, "tilted_diag");
}

Error IntegralPyramid::geometry (const cl::Device &dev, const PyramidGeometry &g, const FrameLayout &layout) {
  if (layout.height >= (1 << 17))
    return {"frames of " + std::to_string (layout.height) + " rows are not supported (at most 131071)"};
  std::vector<cl_int8> lv;
  std::vector<int32_t> diag, colblocks, rowgroups;
  for (size_t li = 0; li < g.levels.size (); li++) {
    const PyramidLevel &l = g.levels[li];
    const int32_t idx = static_cast<int32_t> (li);
    lv.push_back ({{l.x0, l.y0, l.width, l.height, l.nx, l.ny, l.step, l.first_window}});
    if (planes_.tilted)
      for (int k = 0; k <= l.width + l.height; k++)
        diag.push_back (idx | (k << 10));
    // pyramid_rows (GPU schedule): 2^sh lanes per row, rows_wg >> sh rows per
    // work-group; a lane takes 8 pixels per pass (kernels/pyramid.cl, RK)
    int sh = 3;
    while ((1 << sh) < static_cast<int> (rows_wg_) && (1 << sh) * 8 < l.width)
      sh++;
    for (int y = 0; y < l.height; y += static_cast<int> (rows_wg_) >> sh)
      rowgroups.push_back (idx | (y << 10) | (sh << 27));
    for (int b = 0; b * 32 <= l.width; b++)
      colblocks.push_back (idx | (b << 10));
  }
  nlevels_ = static_cast<int> (g.levels.size ());
  ndiag_ = static_cast<int> (diag.size ());
  ncolblocks_ = static_cast<int> (colblocks.size ());
  nrowgroups_ = static_cast<int> (rowgroups.size ());
  nrows_ = g.total_rows;
  stride_ = g.stride;
  if (Error e = cl::upload_vector (dev, &levels_, lv)) return e;
  if (Error e = cl::upload_vector (dev, &xtab_, g.xtab)) return e;
  if (Error e = cl::upload_vector (dev, &ytab_, g.ytab)) return e;
  if (Error e = cl::upload_vector (dev, &xfirst_, g.xtab_first)) return e;
  if (Error e = cl::upload_vector (dev, &yfirst_, g.ytab_first)) return e;
  if (Error e = cl::upload_vector (dev, &row_map_, gpu_schedule_ ? rowgroups : g.row_map)) return e;
  if (Error e = cl::upload_vector (dev, &diag_map_, diag)) return e;
  if (Error e = cl::upload_vector (dev, &colblock_map_, colblocks)) return e;
  const size_t plane = static_cast<size_t> (std::max (g.rows, 1)) * std::max (g.stride, 1) * sizeof (cl_uint);
  // The CPU schedule's vector loads for 16 windows reach up to 32 values past
  // the last window's: room for them after the last level.
  const size_t slack = 64 * sizeof (cl_uint);
  if (Error e = cl::make_buffers (dev, {{&sum_, (planes_.narrow ? plane / 2 : plane) + slack},
                                        {&sqsum_, planes_.sqsum ? plane + slack : 16},
                                        {&tilted_, planes_.tilted ? plane : 16}}))
    return e;

  src_stride_ = layout.stride ();
  src_bpp_ = layout.bpp ();
  rgb_ = rgb_offsets (layout.format);
  return {};
}

Error IntegralPyramid::enqueue (const FrameBuffers &frame, const cl::Mem &counters, const Phases &phases,
                                Launcher &l) {
  if (gpu_schedule_) {
    if (Error e = rows_.set (frame.src, src_stride_, src_bpp_, rgb_, levels_, xtab_, ytab_, xfirst_, yfirst_, row_map_,
                             sum_, sqsum_, stride_, counters, frame.candidates))
      return e;
    if (Error e = l.launch (rows_.get (), static_cast<size_t> (nrowgroups_) * rows_wg_, rows_wg_, phases.pyramid))
      return e;
  } else {
    if (Error e = rows_seq_.set (frame.src, src_stride_, src_bpp_, rgb_, levels_, xtab_, ytab_, xfirst_, yfirst_,
                                 row_map_, cl_int (nrows_), sum_, sqsum_, stride_, counters, frame.candidates))
      return e;
    if (Error e = l.launch (rows_seq_.get (), round_up (nrows_, 16), 16, phases.pyramid))
      return e;
  }
  if (planes_.tilted)
    for (auto *k : {&tilt_a_, &tilt_b_}) {
      if (Error e = k->set (levels_, diag_map_, cl_int (ndiag_), sum_, tilted_, stride_))
        return e;
      if (Error e = l.launch (k->get (), round_up (ndiag_, 64), 64, phases.tilted))
        return e;
    }
  if (gpu_schedule_) {
    if (Error e = cols_.set (levels_, colblock_map_, sum_, sqsum_, stride_))
      return e;
    return l.launch (cols_.get (), static_cast<size_t> (ncolblocks_) * 256, 256, phases.integral);
  }
  if (Error e = cols_rows_.set (levels_, colblock_map_, cl_int (ncolblocks_), sum_, sqsum_, stride_))
    return e;
  return l.launch (cols_rows_.get (), round_up (ncolblocks_, 8), 8, phases.integral);
}

} // namespace gpudetect
