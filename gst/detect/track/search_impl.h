// The template search's state (TemplateSearch::Impl), shared by its runtime
// (search.cpp: creation, template updates, the search) and its frames
// (frames.cpp: uploads, conversions, frames another engine uploaded, the
// tools' read-backs).
#pragma once

#include "search.h"

#include "cl/kernel.h"
#include "plan.h"
#include "runtime/runtime.h"

#include <algorithm>
#include <memory>
#include <vector>

namespace gpudetect {
namespace track {

// One frame on the device and what its search needs while it runs.
struct FrameSlot {
  cl::Mem raw, rgb;
  size_t raw_size = 0, rgb_size = 0;
  int fw = 0, fh = 0;
  std::vector<cl::Event> upload_events; // its writes (profiling)
  cl::Event converted;                  // its conversion: the frame is on the device, its host memory free
  cl::Event last_use;                   // the last command that read its packed RGB (before the next upload)
  std::shared_ptr<const DeviceFrame> shared; // another engine's frame it was converted from
  // the search
  cl::Mem requests;
  size_t requests_size = 0;
  std::vector<cl_int> req;   // host side of `requests`, alive until the write is done
  std::vector<cl_uint> res;  // the results, read back without blocking
  std::vector<Grid> grids;
  std::vector<Box> predicted;
  bool searching = false;
  cl::Event search_event, reduce_event, read_event, extract_event;
};

struct TemplateSearch::Impl {
  // First member, last to go: its queues outlive every buffer below.  Its
  // upload queue, where there is one, takes uploads and conversions so that
  // they overlap searches.
  runtime::Runtime rt;
  Config cfg;
  std::shared_ptr<const cl::Program> program; // shared by the engines on the context
  // kernels/track.cl
  using Mem = cl::Mem;
  // track_convert: source, format, width, height, three planes' offsets and strides, rgb order, packed frame
  cl::TypedKernel<Mem, cl_int, cl_int, cl_int, cl_int, cl_int, cl_int, cl_int, cl_int, cl_int, cl_int4, Mem> convert;
  // track_extract: frame, width, height, requests, mask, templates
  cl::TypedKernel<Mem, cl_int, cl_int, Mem, Mem, Mem> extract;
  // track_search (rows schedule): frame, width, height, requests, templates, distances, results
  cl::TypedKernel<Mem, cl_int, cl_int, Mem, Mem, Mem, Mem> search;
  // track_search_tiles: the same with the parts' best, then parts, rows per part, the area's local memory
  cl::TypedKernel<Mem, cl_int, cl_int, Mem, Mem, Mem, Mem, Mem, cl_int, cl_int, cl::Local> tiles;
  // track_reduce_parts: distances, the parts' best, results, parts, rows per part
  cl::TypedKernel<Mem, Mem, Mem, cl_int, cl_int> reduce_parts;
  bool from_cache = false;
  bool gpu = false;
  int wg = 256, band = 0;
  Config::Schedule schedule = Config::Schedule::Rows;
  TilePlanner planner; // also the rows schedule's offsets per work-item (kx)
  bool sad_ptx = false;
  cl::Mem part_best;
  size_t part_best_size = 0;
  cl::Mem mask;
  cl::Mem templates;
  int slots = 0;
  std::vector<FrameSlot> frames;
  int current = 0; // the frame slot the tools' read_* calls look at
  cl::Mem dmap;
  size_t dmap_size = 0;
  int last_requests = 0;
  uint64_t uploads = 0, attached = 0;

  // Local memory the tiles may use: the device's, or less where the
  // configuration says so.
  size_t tiles_local_bytes () const {
    return cfg.local_bytes > 0 ? std::min<size_t> (cfg.local_bytes, rt.info ().local_mem) : rt.info ().local_mem;
  }

  size_t template_bytes () const {
    return static_cast<size_t> (cfg.geometry.template_w) * cfg.geometry.template_h * 4;
  }


  Error slot (int k, FrameSlot **out) {
    if (k < 0 || k >= static_cast<int> (frames.size ()))
      return {"no such frame slot"};
    *out = &frames[k];
    current = k;
    return {};
  }

  // Commands on the compute queue that read frame slot f's packed RGB wait
  // for its conversion where that ran on the upload queue.
  cl_uint wait_converted (const FrameSlot &f, cl_event *list) const {
    if (!rt.has_upload_queue () || !f.converted)
      return 0;
    list[0] = f.converted.get ();
    return 1;
  }

  // The conversion of frame slot f from `src` (planes at off/strides).
  Error enqueue_convert (FrameSlot &f, const cl::Mem &src, cl_int format, const size_t off[3],
                             const int strides[3], cl_int4 rgb, cl_uint nwait, const cl_event *wait) {
    const cl_int w = f.fw, h = f.fh;
    const cl_int o0 = (cl_int) off[0], o1 = (cl_int) off[1], o2 = (cl_int) off[2];
    if (Error e = convert.set (src, format, w, h, o0, cl_int (strides[0]), o1, cl_int (strides[1]), o2,
                               cl_int (strides[2]), rgb, f.rgb))
      return e;
    const size_t gws[2] = {(static_cast<size_t> (w) + 15) / 16 * 16, (static_cast<size_t> (h) + 15) / 16 * 16};
    const size_t lws[2] = {16, 16};
    GPUDETECT_CL_TRY (clEnqueueNDRangeKernel (rt.uploads (), convert.get (), 2, nullptr, gws,
                                              rt.info ().max_work_group >= 256 ? lws : nullptr, nwait,
                                              nwait ? wait : nullptr, f.converted.out ()));
    if (rt.has_upload_queue ())
      GPUDETECT_CL_TRY (clFlush (rt.uploads ()));
    return {};
  }

  // Room in frame slot f for a width x height frame; the wait list of its
  // first command (the last read of the slot's previous frame, on the
  // compute queue).
  Error prepare (FrameSlot &f, int w, int h, size_t raw_bytes, cl_event *wait, cl_uint *nwait) {
    *nwait = 0;
    if (rt.has_upload_queue () && f.last_use)
      wait[(*nwait)++] = f.last_use.get ();
    if (Error e = rt.grow (&f.raw, &f.raw_size, raw_bytes))
      return e;
    if (Error e = rt.grow (&f.rgb, &f.rgb_size, static_cast<size_t> (w) * h * 4))
      return e;
    f.fw = w;
    f.fh = h;
    f.searching = false;
    f.shared.reset ();
    f.upload_events.clear ();
    return {};
  }
};

} // namespace track
} // namespace gpudetect
