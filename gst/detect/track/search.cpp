#include "search_impl.h"

#include "kernels.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace gpudetect {
namespace track {

Geometry Geometry::square (int template_size, int radius, int alt_distance) {
  Geometry g;
  g.template_w = g.template_h = template_size;
  g.search_w = g.search_h = template_size + 2 * radius;
  g.alt_distance = alt_distance;
  return g;
}

static int32_t fixed (double v) {
  const double f = std::floor (v * 65536.0 + 0.5);
  return static_cast<int32_t> (std::clamp (f, -1073741824.0, 1073741823.0));
}

Grid grid_for (const Box &box, const Geometry &g) {
  Grid r;
  const double sx = std::max (box.w, 1.0) / g.template_w, sy = std::max (box.h, 1.0) / g.template_h;
  r.sx = std::max<int32_t> (fixed (sx), 1);
  r.sy = std::max<int32_t> (fixed (sy), 1);
  r.ox = fixed (box.x) + r.sx / 2;
  r.oy = fixed (box.y) + r.sy / 2;
  return r;
}

// The search area of a predicted box: its grid moved back by the centre offset.
static Grid area_for (const Box &predicted, const Geometry &g) {
  Grid r = grid_for (predicted, g);
  r.ox -= g.centre_x () * r.sx;
  r.oy -= g.centre_y () * r.sy;
  return r;
}

std::vector<uint8_t> default_mask (int w, int h) {
  std::vector<uint8_t> m (static_cast<size_t> (w) * h);
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++) {
      const double u = (x + 0.5) / w * 2 - 1, v = (y + 0.5) / h * 2 - 1;
      const double r = std::sqrt (u * u + v * v); // 1 on the inscribed ellipse
      double a = r <= 0.5 ? 1.0 : 1.0 - (r - 0.5) / 0.5 * (1.0 - 32.0 / 255);
      a = std::clamp (a, 32.0 / 255, 1.0);
      m[static_cast<size_t> (y) * w + x] = static_cast<uint8_t> (std::lround (a * 255));
    }
  return m;
}

cl_int4 rgb_offsets (ColorFormat f) {
  switch (f) {
  case ColorFormat::Bgrx: case ColorFormat::Bgra: return {{2, 1, 0, 0}};
  default: return {{0, 1, 2, 0}};
  }
}

// The default schedule of each kind of device, as measured
// (docs/tracking.md, "Schedules of the search"): the first row of the
// device's kind whose local memory the geometry fits.
namespace {
struct ScheduleDefault {
  bool gpu;
  TemplateSearch::Config::Schedule schedule;
  int offsets_per_item, parts;
};
using Schedule = TemplateSearch::Config::Schedule;
const ScheduleDefault schedule_defaults[] = {
    // H100, against rows 4x1: 100 templates 32x32 +-32 px 0.401 -> 0.061 ms, 1000 of 16x16 in 143x143
    // 2.219 -> 0.442 ms (bench/results/bench-track-h100-tiles.txt)
    {true, Schedule::Tiles, 4, 0},
    // PoCL, 2 shared cores, against rows 8x1: 100 templates 32x32 +-32 px 668 -> 453 ms (one part of 608
    // work-items), 1000 of 16x16 in 143x143 6.69 -> 4.14 s
    {false, Schedule::Tiles, 8, 0},
    // where the tiles do not fit the device's local memory (less than about 2 KB: the template's rows go in
    // chunks otherwise)
    {true, Schedule::Rows, 4, 1},
    {false, Schedule::Rows, 8, 1},
};
} // namespace

Error TemplateSearch::create (const Config &config, std::unique_ptr<TemplateSearch> *out) {
  auto impl = std::make_unique<Impl> ();
  Impl &m = *impl;
  m.cfg = config;
  const Geometry &g = m.cfg.geometry;
  if (g.template_w < 1 || g.template_h < 1 || g.template_w > 64 || g.template_h > 64 ||
      g.search_w < g.template_w || g.search_h < g.template_h || g.alt_distance < 1)
    return "invalid search geometry (templates 1..64 pixels a side, search area at least the template)";
  if (config.frames < 1 || config.frames > 64)
    return "frames in flight must be 1 to 64";
  if (config.offsets_per_item < 0 || config.offsets_per_item > 8 || config.parts < -1)
    return "offsets per work-item must be 0 (the device's default) to 8 and parts -1 (the default), 0 (automatic) "
             "or more";
  if (m.cfg.mask.empty ())
    m.cfg.mask = default_mask (g.template_w, g.template_h);
  if (m.cfg.mask.size () != static_cast<size_t> (g.template_w) * g.template_h)
    return "membership mask size differs from the template's";
  if (Error e = m.rt.open (config.device, config.share, config.profile))
    return e;
  const cl::DeviceInfo &dev = m.rt.info ();
  const bool gpu = runtime::many_lanes (dev);
  m.gpu = gpu;
  if (config.upload_queue > 0 || (config.upload_queue < 0 && gpu))
    if (Error e = m.rt.add_upload_queue ())
      return "could not create the upload queue: " + e.message;
  m.frames.resize (config.frames);
  // Work-group: a power of two within the device's limit.
  int wg = config.work_group > 0 ? config.work_group : 256;
  while (wg > 1 && static_cast<size_t> (wg) > dev.max_work_group)
    wg /= 2;
  if (wg & (wg - 1))
    return "the work-group size must be a power of two";
  m.wg = wg;

  // The schedules to try: the configuration's, or the device kind's defaults.
  std::vector<ScheduleDefault> choices;
  for (const ScheduleDefault &d : schedule_defaults)
    if (d.gpu == gpu && (config.schedule == Schedule::Default || config.schedule == d.schedule))
      choices.push_back (d);
  if (choices.empty ()) // a schedule the device kind has no default for
    choices.push_back ({gpu, config.schedule, gpu ? 4 : 8, gpu ? 0 : 1});
  std::string why;
  for (const ScheduleDefault &choice : choices) {
    m.schedule = choice.schedule;
    m.planner.geometry = g;
    m.planner.work_group = config.work_group;
    m.planner.compute_units = dev.compute_units;
    m.planner.kx = config.offsets_per_item > 0 ? config.offsets_per_item : choice.offsets_per_item;
    m.planner.parts = config.parts >= 0 ? config.parts : choice.parts;
    if (m.schedule == Schedule::Rows && config.schedule == Schedule::Rows && config.parts > 1) {
      return "the rows schedule searches each template in one work-group (parts 1); parts are the tiles'";
    }
    // Rows: offset rows per band, as many search-area rows as the local
    // memory budget holds beside the template and the reduction arrays.
    size_t budget = config.local_bytes > 0 ? config.local_bytes : 32768;
    const size_t fixed_bytes = m.template_bytes () + static_cast<size_t> (wg) * 8 + 256;
    if (dev.local_mem > 0)
      budget = std::min<size_t> (budget, dev.local_mem > fixed_bytes ? dev.local_mem - fixed_bytes : 0);
    const size_t row_bytes = static_cast<size_t> (g.search_w + m.planner.kx - 1) * 4; // rows padded for the last group of offsets
    const long rows = static_cast<long> (budget / row_bytes) - (g.template_h - 1);
    if (rows < 1 && m.schedule == Schedule::Rows) {
      why = "the search area's rows do not fit in the device's local memory (" + std::to_string (budget) +
            " bytes for " + std::to_string (g.search_w + m.planner.kx - 1) + "-pixel rows and a " +
            std::to_string (g.template_h) + "-row template)";
      continue;
    }
    m.band = static_cast<int> (std::clamp<long> (rows, 1, g.positions_h ()));
    if (m.schedule == Schedule::Tiles) {
      // the template's rows whole or in chunks, the area rows of one offset
      // row at least beside them (1 KB for the driver's own use and the
      // kernel's small arrays: the kernel's own count replaces it once built)
      m.planner.max_wg = std::min<size_t> (dev.max_work_group, 1024);
      if (!m.planner.choose_chunks (m.tiles_local_bytes (), 1024)) {
        why = "the tiles' area rows do not fit in the device's local memory (" +
              std::to_string (m.tiles_local_bytes ()) + " bytes)";
        continue;
      }
    }
    why.clear ();
    break;
  }
  if (!why.empty ()) {
    return why;
  }
  m.sad_ptx = m.schedule == Schedule::Tiles && config.sad_ptx != 0 &&
              dev.platform_name.find ("NVIDIA") != std::string::npos;

  ProgramSpec spec;
  spec.source = kernels::track_source;
  spec.hash = kernels::track_hash;
  const std::string opts = "-cl-std=CL1.2 -D TW=" + std::to_string (g.template_w) + " -D TH=" +
                           std::to_string (g.template_h) + " -D SW=" + std::to_string (g.search_w) + " -D SH=" +
                           std::to_string (g.search_h) + " -D BAND=" + std::to_string (m.band) + " -D WG=" +
                           std::to_string (wg) + " -D ALT_D=" + std::to_string (g.alt_distance) + " -D KX=" +
                           std::to_string (m.planner.kx);
  // Tiles: a second build where the kernel's own local memory, as the
  // driver counts it, leaves the chunks chosen no room.
  for (int attempt = 0;; attempt++) {
    spec.options =
        opts + (m.schedule == Schedule::Tiles ? " -D TILES -D TCH=" + std::to_string (m.planner.tch) : std::string ());
    // a driver that refuses the inline PTX: the integer SAD
    spec.optional_option = m.sad_ptx ? " -D SAD_PTX" : "";
    spec.options += spec.optional_option;
    if (Error e = m.rt.build (spec, {}, &m.program, &m.from_cache, &m.sad_ptx))
      return e;
    const bool tiles = m.schedule == Schedule::Tiles;
    for (Error e : {m.convert.create (*m.program, "track_convert"), m.extract.create (*m.program, "track_extract"),
                    tiles ? m.tiles.create (*m.program, "track_search_tiles")
                          : m.search.create (*m.program, "track_search"),
                    tiles ? m.reduce_parts.create (*m.program, "track_reduce_parts") : Error ()})
      if (e)
        return e;
    if (m.schedule != Schedule::Tiles)
      break;
    size_t kwg = 0;
    cl_ulong klocal = 0;
    if (clGetKernelWorkGroupInfo (m.tiles.get (), dev.id, CL_KERNEL_WORK_GROUP_SIZE, sizeof kwg, &kwg,
                                  nullptr) != CL_SUCCESS)
      kwg = dev.max_work_group;
    if (clGetKernelWorkGroupInfo (m.tiles.get (), dev.id, CL_KERNEL_LOCAL_MEM_SIZE, sizeof klocal, &klocal,
                                  nullptr) != CL_SUCCESS)
      klocal = 0;
    const size_t local = m.tiles_local_bytes ();
    if (klocal > 0) // the kernel's own local arrays, as the driver counts them
      m.planner.local_words = local > klocal + 1024 ? (local - klocal - 1024) / 4 : 0;
    m.planner.max_wg = std::min<size_t> ({kwg, dev.max_work_group, 1024});
    TilePlan plan;
    if (m.planner.plan (1, &plan))
      break;
    const size_t counted = m.planner.template_words () * 4;
    const int tch = m.planner.tch;
    if (attempt > 0 || klocal <= counted || !m.planner.choose_chunks (local, 1024 + (klocal - counted)) || m.planner.tch == tch)
    return "the tiles' area rows do not fit in the device's local memory (" + std::to_string (local) + " bytes)";
  }
  if (Error e = cl::upload_vector (m.rt.device (), &m.mask, m.cfg.mask))
    return e;
  out->reset (new TemplateSearch (std::move (impl)));
  return {};
}

TemplateSearch::TemplateSearch (std::unique_ptr<Impl> impl) : impl_ (std::move (impl)) {}

TemplateSearch::~TemplateSearch () {
  if (impl_)
    finish ();
}

const Geometry &TemplateSearch::geometry () const { return impl_->cfg.geometry; }
const cl::Device &TemplateSearch::device () const { return impl_->rt.device (); }
int TemplateSearch::work_group () const { return impl_->wg; }
int TemplateSearch::band_rows () const { return impl_->band; }
int TemplateSearch::offsets_per_item () const { return impl_->planner.kx; }
int TemplateSearch::template_chunk_rows () const {
  return impl_->schedule == Schedule::Tiles ? impl_->planner.tch : impl_->cfg.geometry.template_h;
}

TemplateSearch::Config::Schedule TemplateSearch::schedule () const { return impl_->schedule; }
bool TemplateSearch::sad_ptx () const { return impl_->sad_ptx; }

int TemplateSearch::tile_work_group (int templates) const {
  TilePlan plan;
  return impl_->schedule == Schedule::Tiles && impl_->planner.plan (std::max (templates, 1), &plan) ? plan.wg : 0;
}

int TemplateSearch::parts_for (int templates) const {
  const Impl &m = *impl_;
  if (m.schedule != Schedule::Tiles) // rows: a work-group per template
    return 1;
  TilePlan plan;
  return m.planner.plan (std::max (templates, 1), &plan) ? plan.parts : 1;
}
int TemplateSearch::capacity () const { return impl_->slots; }
bool TemplateSearch::built_from_cache () const { return impl_->from_cache; }

Error TemplateSearch::reserve (int n) {
  Impl &m = *impl_;
  if (n <= m.slots)
    return {};
  const int want = std::max (n, m.slots * 2);
  cl::Mem next;
  if (Error e = cl::make_buffer (m.rt.device (), &next, m.template_bytes () * want))
    return e;
  if (m.slots > 0)
    GPUDETECT_CL_TRY (clEnqueueCopyBuffer (m.rt.queue (), m.templates.get (), next.get (), 0, 0,
                                           m.template_bytes () * m.slots, 0, nullptr, nullptr));
  // zeroed templates (weight 0) for the new slots, so that a blend into a new slot is the new appearance
  const cl_uchar zero = 0;
  GPUDETECT_CL_TRY (clEnqueueFillBuffer (m.rt.queue (), next.get (), &zero, 1, m.template_bytes () * m.slots,
                                         m.template_bytes () * (want - m.slots), 0, nullptr, nullptr));
  GPUDETECT_CL_TRY (clFinish (m.rt.queue ()));
  m.templates = std::move (next);
  m.slots = want;
  return {};
}

Error TemplateSearch::update (const std::vector<int> &slots, const std::vector<Box> &boxes, int blend) {
  return update_in (0, slots, boxes, blend);
}

Error TemplateSearch::update_in (int frame, const std::vector<int> &slots, const std::vector<Box> &boxes,
                                     int blend) {
  Impl &m = *impl_;
  FrameSlot *fs = nullptr;
  if (Error e = m.slot (frame, &fs))
    return e;
  if (slots.size () != boxes.size ())
    return {"slots and boxes differ in number"};
  if (slots.empty ())
    return {};
  if (!fs->fw)
    return {"no frame uploaded"};
  std::vector<cl_int> req;
  int top = 0;
  for (size_t i = 0; i < slots.size (); i++) {
    if (slots[i] < 0)
      return {"negative slot"};
    top = std::max (top, slots[i] + 1);
    const Grid gr = grid_for (boxes[i], m.cfg.geometry);
    req.insert (req.end (), {slots[i], gr.ox, gr.oy, gr.sx, gr.sy, std::clamp (blend, 0, 256)});
  }
  if (Error e = reserve (top))
    return e;
  cl::Mem rq;
  if (Error e = cl::upload_vector (m.rt.device (), &rq, req))
    return e;
  const cl_int w = fs->fw, h = fs->fh;
  if (Error e = m.extract.set (fs->rgb, w, h, rq, m.mask, m.templates))
    return e;
  const size_t px = static_cast<size_t> (m.cfg.geometry.template_w) * m.cfg.geometry.template_h;
  const size_t gws[2] = {(px + 63) / 64 * 64, slots.size ()};
  const size_t lws[2] = {64, 1};
  cl_event wait[1];
  const cl_uint nwait = m.wait_converted (*fs, wait);
  GPUDETECT_CL_TRY (clEnqueueNDRangeKernel (m.rt.queue (), m.extract.get (), 2, nullptr, gws, lws, nwait,
                                            nwait ? wait : nullptr, fs->extract_event.out ()));
  fs->last_use.reset (fs->extract_event.get ());
  clRetainEvent (fs->extract_event.get ());
  GPUDETECT_CL_TRY (clFlush (m.rt.queue ()));
  return {};
}

Error TemplateSearch::search_async (int frame, const std::vector<int> &slots, const std::vector<Box> &predicted) {
  Impl &m = *impl_;
  const Geometry &g = m.cfg.geometry;
  FrameSlot *fs = nullptr;
  if (Error e = m.slot (frame, &fs))
    return e;
  fs->searching = false;
  if (slots.size () != predicted.size ())
    return {"slots and boxes differ in number"};
  m.last_requests = static_cast<int> (slots.size ());
  fs->grids.clear ();
  fs->predicted = predicted;
  fs->res.clear ();
  fs->search_event.reset ();
  fs->read_event.reset ();
  if (slots.empty ()) {
    fs->searching = true;
    return {};
  }
  if (!fs->fw)
    return {"no frame uploaded"};
  fs->req.clear ();
  fs->req.reserve (slots.size () * 5);
  for (size_t i = 0; i < slots.size (); i++) {
    if (slots[i] < 0 || slots[i] >= m.slots)
      return {"search of a template slot that holds none"};
    const Grid gr = area_for (predicted[i], g);
    fs->grids.push_back (gr);
    fs->req.insert (fs->req.end (), {slots[i], gr.ox, gr.oy, gr.sx, gr.sy});
  }
  const size_t n = slots.size ();
  if (Error e = m.rt.grow (&fs->requests, &fs->requests_size, fs->req.size () * sizeof (cl_int)))
    return e;
  if (Error e = m.rt.grow (&m.dmap, &m.dmap_size,
                            n * static_cast<size_t> (g.positions_w ()) * g.positions_h () * sizeof (cl_uint)))
    return e;
  fs->res.assign (n * 4, 0);
  cl::Mem results;
  if (Error e = cl::make_buffer (m.rt.device (), &results, fs->res.size () * sizeof (cl_uint)))
    return e;
  GPUDETECT_CL_TRY (clEnqueueWriteBuffer (m.rt.queue (), fs->requests.get (), CL_FALSE, 0,
                                          fs->req.size () * sizeof (cl_int), fs->req.data (), 0, nullptr, nullptr));
  const cl_int w = fs->fw, h = fs->fh;
  const size_t lws = m.wg, gws = n * m.wg;
  cl_event wait[1];
  const cl_uint nwait = m.wait_converted (*fs, wait);
  fs->reduce_event.reset ();
  if (m.schedule == Schedule::Tiles) {
    TilePlan plan;
    if (!m.planner.plan (static_cast<int> (n), &plan))
      return {"the tiles' area rows do not fit in the device's local memory"};
    if (Error e = m.rt.grow (&m.part_best, &m.part_best_size, n * plan.parts * 2 * sizeof (cl_uint)))
      return e;
    const cl_int tp = plan.parts, rows = plan.rows;
    if (Error e = m.tiles.set (fs->rgb, w, h, fs->requests, m.templates, m.dmap, m.part_best, results, tp, rows,
                               cl::Local {plan.scratch * sizeof (cl_uint)}))
      return e;
    const size_t tlws = plan.wg, tgws = n * plan.parts * tlws;
    GPUDETECT_CL_TRY (clEnqueueNDRangeKernel (m.rt.queue (), m.tiles.get (), 1, nullptr, &tgws, &tlws, nwait,
                                              nwait ? wait : nullptr, m.rt.profiled (&fs->search_event)));
    if (plan.parts > 1) {
      if (Error e = m.reduce_parts.set (m.dmap, m.part_best, results, tp, rows))
        return e;
      GPUDETECT_CL_TRY (clEnqueueNDRangeKernel (m.rt.queue (), m.reduce_parts.get (), 1, nullptr, &gws, &lws, 0,
                                                nullptr, m.rt.profiled (&fs->reduce_event)));
    }
  } else {
    if (Error e = m.search.set (fs->rgb, w, h, fs->requests, m.templates, m.dmap, results))
      return e;
    GPUDETECT_CL_TRY (clEnqueueNDRangeKernel (m.rt.queue (), m.search.get (), 1, nullptr, &gws, &lws, nwait,
                                              nwait ? wait : nullptr, m.rt.profiled (&fs->search_event)));
  }
  GPUDETECT_CL_TRY (clEnqueueReadBuffer (m.rt.queue (), results.get (), CL_FALSE, 0,
                                         fs->res.size () * sizeof (cl_uint), fs->res.data (), 0, nullptr,
                                         fs->read_event.out ()));
  fs->last_use.reset (fs->read_event.get ());
  clRetainEvent (fs->read_event.get ());
  GPUDETECT_CL_TRY (clFlush (m.rt.queue ()));
  if (nwait) // the search starts as soon as its frame is converted
    if (Error e = m.rt.start_after (wait[0]))
      return e;
  fs->searching = true;
  return {};
}

bool TemplateSearch::search_ready (int frame) const {
  const Impl &m = *impl_;
  if (frame < 0 || frame >= static_cast<int> (m.frames.size ()))
    return true;
  const FrameSlot &fs = m.frames[frame];
  if (!fs.searching || !fs.read_event)
    return true;
  return runtime::finished (fs.read_event.get ());
}

Error TemplateSearch::search_results (int frame, std::vector<Match> *out) {
  Impl &m = *impl_;
  const Geometry &g = m.cfg.geometry;
  out->clear ();
  FrameSlot *fs = nullptr;
  if (Error e = m.slot (frame, &fs))
    return e;
  if (!fs->searching)
    return {"no search in this frame slot"};
  fs->searching = false;
  if (fs->read_event)
    if (Error e = runtime::wait (fs->read_event.get (), "the template search failed on the device"))
      return e;
  const std::vector<cl_uint> &res = fs->res;
  const size_t n = fs->grids.size ();
  out->resize (n);
  for (size_t i = 0; i < n; i++) {
    Match &r = (*out)[i];
    r.best = res[4 * i];
    const int bi = static_cast<int> (res[4 * i + 1]);
    r.alt = res[4 * i + 2];
    r.best_x = bi % g.positions_w ();
    r.best_y = bi / g.positions_w ();
    if (res[4 * i + 3] != 0xffffffffu) {
      r.alt_x = static_cast<int> (res[4 * i + 3]) % g.positions_w ();
      r.alt_y = static_cast<int> (res[4 * i + 3]) / g.positions_w ();
    } else {
      r.alt = 0xffffffffu;
    }
    r.box = fs->predicted[i];
    r.box.x += (r.best_x - g.centre_x ()) * (fs->grids[i].sx / 65536.0);
    r.box.y += (r.best_y - g.centre_y ()) * (fs->grids[i].sy / 65536.0);
    r.confidence = r.alt == 0 || r.alt == 0xffffffffu ? (r.alt == 0 ? 0.0 : 1.0)
                                                       : std::clamp (1.0 - double (r.best) / double (r.alt), 0.0, 1.0);
  }
  return {};
}

Error TemplateSearch::search (const std::vector<int> &slots, const std::vector<Box> &predicted,
                                  std::vector<Match> *out) {
  out->clear ();
  if (Error e = search_async (0, slots, predicted))
    return e;
  return search_results (0, out);
}

void TemplateSearch::finish () { impl_->rt.finish (); }

int TemplateSearch::frames () const { return static_cast<int> (impl_->frames.size ()); }
bool TemplateSearch::uses_upload_queue () const { return impl_->rt.has_upload_queue (); }
uint64_t TemplateSearch::uploads () const { return impl_->uploads; }
uint64_t TemplateSearch::attached () const { return impl_->attached; }

} // namespace track
} // namespace gpudetect
