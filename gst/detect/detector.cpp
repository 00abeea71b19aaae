// The engine's core: device, program build, slots of frames in flight,
// upload, one readback per frame, candidate decoding and timing, the same for
// every family (core/family.h).
#include "detector.h"

#include "cl/budget.h"
#include "families/registry.h"
#include "runtime/runtime.h"

#include <algorithm>
#include <chrono>
#include <cstring>

namespace gpudetect {

namespace {

using Clock = std::chrono::steady_clock;

double us_since (Clock::time_point t0) {
  return std::chrono::duration<double, std::micro> (Clock::now () - t0).count ();
}

// One frame in flight and the buffers it keeps for its whole life.
struct Slot {
  cl::Mem src;              // the frame on the device, with an upload queue (else Impl::src)
  size_t src_size = 0;
  runtime::MappedBuffer staging; // the frame, copied in by submit() (without direct_upload)
  cl::Mem cand;             // the frame's candidates on the device (core/candidates.h)
  runtime::MappedBuffer result;  // the candidates read back
  uint32_t *result_ptr = nullptr;
  uint32_t read_entries = 0; // pairs read back with the frame (the rest, if any, in collect())
  cl::Event upload, read;   // the upload's event where it ran on the upload queue or when profiling
  std::shared_ptr<DeviceFrame> frame; // share_frames: the frame on the device, shared with other engines
  std::shared_ptr<const DeviceFrame> input; // a frame another engine uploaded, read in place (held until collected)
  runtime::Timeline kernels; // profiling events of the frame's launches
  int launches = 0;
  bool busy = false;
  mutable bool seen_done = false; // its readback was seen complete (no need to ask the driver again)
  std::shared_ptr<const PyramidGeometry> geom;

  // Whether the frame's device work is done (or failed), asking the driver
  // only until it has said so once.
  bool done () const {
    if (!seen_done && read)
      seen_done = runtime::finished (read.get ());
    return seen_done || !read;
  }
};

} // namespace

struct Detector::Impl {
  // First member, last to go: its queues outlive every buffer below.
  runtime::Runtime rt;
  DetectorConfig cfg;
  bool gpu_device = false; // collect()'s wait: see there
  double last_wait_us = 20000; // none yet: the first waits can be cut short
  Tuning tuning;
  SearchParams search;
  std::unique_ptr<Family> family;
  std::shared_ptr<const cl::Program> program; // shared with every engine on the context with the same program
  bool from_cache = false;

  std::shared_ptr<const PyramidGeometry> geom;
  bool by_regions = false; // geom is a pyramid of regions (plan_regions)
  FrameLayout layout;
  bool geom_dirty = true, params_dirty = true;
  cl::Mem src; // the frame on the device when there is no upload queue
  size_t src_size = 0;

  std::vector<Slot> slots;
  uint64_t host_syncs = 0;
  uint64_t frames_collected = 0; // seeds the candidates' shuffle (DetectorConfig::candidate_order_seed)
  Detector::HostTimes host_times;
  std::shared_ptr<cl::HostAllocator> host_alloc; // page-locked frame memory, made on first use
  // Uploads on the runtime's upload queue, so that a frame's upload runs
  // while the frame before it is computed; each slot then has its own device
  // frame.  upload_mode: 0 never, 1 every frame, 2 when a frame before is
  // still on the device at submit (a driver that resolves waits across
  // queues lazily needs a flush when the upload is done, which costs the host
  // ~25 us a frame: worth it only when there is compute to overlap).
  int upload_mode = 0;
  int read_prefix = 1023; // pairs read back with the frame (the rest in collect())
  // Device memory (cl/budget.h): the budget, what setup() charged to it (the
  // model's constants) and what the last geometry did (the frames in flight,
  // the family's planes).
  uint64_t memory_limit = 0;
  uint64_t model_bytes = 0, frame_bytes = 0;
  // The device's room shared with every engine of the process on it (its
  // other streams): what this one holds, told after each allocation.
  std::unique_ptr<cl::DeviceShare> share;

  // The limit a budget applies now: max-device-memory (or its default), and
  // no more than the device has left beside the other engines.
  uint64_t limit_now () const {
    const uint64_t room = share ? share->room () : 0;
    if (room == 0)
      return memory_limit;
    return memory_limit == 0 ? room : std::min (memory_limit, room);
  }

  ~Impl () { rt.finish (); }

  const cl::Device &dev () const { return rt.device (); }

  Error build () {
    const bool gpu = tuning.schedule != Tuning::Schedule::Auto ? tuning.schedule == Tuning::Schedule::Gpu
                                                               : runtime::many_lanes (rt.info ());
    gpu_device = runtime::many_lanes (rt.info ());
    ProgramSpec spec;
    if (Error e = family->program ({dev (), tuning, gpu}, &spec))
      return e;
    spec.options = "-cl-std=CL1.2 " + spec.options;
    if (Error e = rt.build (spec, tuning.build_options, &program, &from_cache))
      return e;
    {
      cl::AllocationBudget budget (rt.info (), limit_now ());
      if (Error e = family->setup ({dev (), tuning, family->gpu_schedule ()}, *program))
        return e.kind == Error::Kind::Resource ? memory_error (std::move (e), budget, false, 0) : e;
      model_bytes = budget.used ();
      share->hold (model_bytes);
    }
    upload_mode = tuning.upload_queue >= 0 ? tuning.upload_queue : (family->gpu_schedule () ? 2 : 0);
    if (upload_mode != 0)
      if (Error e = rt.add_upload_queue ())
        return e;
    // Pairs read back with each frame (8 KB with the header); a frame with
    // more reads the rest when it is collected, one more sync.
    read_prefix = tuning.read_prefix > 0 ? tuning.read_prefix : cfg.hit_capacity;
    return {};
  }

  // The geometry of frames of this size and format, searched whole (no
  // regions) or in the regions given (Detector::submit).
  Error ensure_geometry (int w, int h, PixelFormat format, const std::vector<Region> *regions = nullptr) {
    const bool same_search = regions ? geom && by_regions && geom->regions == *regions : !by_regions;
    if (!geom_dirty && geom && w == layout.width && h == layout.height && format == layout.format && same_search)
      return {};
    // Every slot's work must be done before shared buffers are replaced.
    host_syncs++;
    if (Error e = rt.finish ())
      return e;
    // no frame runs on the family's buffers until they are whole again
    geom_dirty = true;
    auto g = std::make_shared<PyramidGeometry> (
        regions ? family->plan_regions (w, h, *regions, search) : family->plan (w, h, search));
    by_regions = regions != nullptr;
    layout = {format, w, h};
    src_size = static_cast<size_t> (layout.stride ()) * h;
    // everything for this frame size within the budget, the slots' frames
    // (made later, as frames arrive) reserved first
    cl::AllocationBudget budget (rt.info (), limit_now (), model_bytes);
    const uint64_t in_flight = in_flight_bytes ();
    Error e = budget.reserve (in_flight);
    if (!e)
      e = cl::make_buffer (dev (), &src, rt.has_upload_queue () || cfg.share_frames ? 16 : src_size, CL_MEM_READ_ONLY);
    if (!e)
      e = family->geometry (dev (), *g, layout, search);
    if (e)
      return e.kind == Error::Kind::Resource ? memory_error (std::move (e), budget, true, in_flight) : e;
    frame_bytes = budget.used () - model_bytes;
    share->hold (model_bytes + frame_bytes);
    geom = std::move (g);
    geom_dirty = false;
    params_dirty = true;
    return {};
  }

  size_t candidates_bytes () const {
    return (kCandidateHeader + 2 * static_cast<size_t> (cfg.hit_capacity)) * sizeof (cl_uint);
  }

  // The device buffers the slots hold for frames of the layout (prepare_slot,
  // prepare_frame): each its candidates, and its frame where frames are
  // uploaded to a buffer per slot (with the chroma of a shared grey frame).
  uint64_t in_flight_bytes () const {
    uint64_t frame = 0;
    if (cfg.share_frames)
      frame = src_size + (layout.format == PixelFormat::Gray8
                              ? 2 * static_cast<uint64_t> ((layout.width + 1) / 2) * ((layout.height + 1) / 2)
                              : 0);
    else if (rt.has_upload_queue ())
      frame = src_size;
    return static_cast<uint64_t> (cfg.slots) * (frame + candidates_bytes ());
  }

  // A refusal of the budget (or of the device's largest allocation) said for
  // people: what needs how much, the limit and what makes it grow.
  Error memory_error (Error e, const cl::AllocationBudget &b, bool frames, uint64_t in_flight) const {
    const ModelInfo &mi = family->info ();
    const size_t slash = mi.path.rfind ('/');
    std::string s = "not enough device memory for the " + mi.family + " model " +
                    name_for_message (slash == std::string::npos ? mi.path : mi.path.substr (slash + 1), 80);
    if (frames)
      s += " on " + std::to_string (layout.width) + "x" + std::to_string (layout.height) + " frames";
    s += ": ";
    if (b.too_large ()) {
      s += "a buffer of " + cl::size_text (b.too_large ()) + " is larger than the largest " + rt.info ().name +
           " allocates (" + cl::size_text (b.max_alloc ()) + ")";
    } else if (b.needed ()) {
      s += "it needs at least " + cl::size_text (b.needed ());
      if (frames) {
        // the planes: what the family asked for before the refusal (none
        // where the frames in flight alone were refused)
        const uint64_t planes = b.needed () - std::min (b.needed (), model_bytes + in_flight);
        s += " (model " + cl::size_text (model_bytes) + ", " + std::to_string (cfg.slots) + " frames in flight " +
             cl::size_text (in_flight) + (planes ? ", planes " + cl::size_text (planes) : std::string ()) + ")";
      }
      int others = 0;
      const uint64_t held = share ? share->others (&others) : 0;
      if (share && share->capacity () && b.limit () < memory_limit)
        s += ", over what the device has left for it: " + cl::size_text (b.limit ()) + " of its " +
             cl::size_text (share->capacity ()) + " (7/8 of its memory) beside the " + cl::size_text (held) +
             " that " + std::to_string (others) + " other engines of this process hold on it (other streams)";
      else
        s += ", over the limit of " + cl::size_text (b.limit ()) +
             (cfg.max_device_memory ? " (max-device-memory)"
                                    : " (max-device-memory's default: half the device's memory)");
    } else {
      s += e.message;
    }
    if (frames)
      s += "; it grows with the frame's area and " + family->memory_hint ();
    return {s, Error::Kind::Resource};
  }

  Error prepare_slot (Slot &s, size_t staging) {
    if (rt.has_upload_queue () && !cfg.share_frames && s.src_size < src_size) {
      if (Error e = cl::make_buffer (dev (), &s.src, src_size, CL_MEM_READ_ONLY))
        return e;
      s.src_size = src_size;
    }
    if (staging > 0 && s.staging.size () < staging) {
      host_syncs++;
      if (Error e = s.staging.create (rt, staging))
        return e;
    }
    return {};
  }

  // A slot's candidates on the device and their mapped copy, made with the
  // detector: a map waits for the queue, which later holds frames' work.
  Error prepare_results (Slot &s) {
    if (Error e = cl::make_buffer (dev (), &s.cand, candidates_bytes ()))
      return e;
    host_syncs++;
    if (Error e = s.result.create (rt, candidates_bytes ()))
      return e;
    s.result_ptr = static_cast<uint32_t *> (s.result.data ());
    return {};
  }

  // Whether another slot's frame is still on the device.
  bool device_busy (const Slot &s) const {
    for (const Slot &t : slots)
      if (&t != &s && t.busy && !t.done ())
        return true;
    return false;
  }

  // The family's launches for one frame, on the compute queue: the first
  // waits for the upload where it ran on the upload queue.
  class FrameLaunch final : public Launcher {
  public:
    FrameLaunch (Impl &m, Slot &s, cl_event uploaded) : m_ (m), s_ (s), wait_ (uploaded) {}
    Error launch (cl_kernel k, size_t global, size_t local, int phase) override {
      cl_event ev = nullptr;
      GPUDETECT_CL_TRY (clEnqueueNDRangeKernel (m_.rt.queue (), k, 1, nullptr, &global, local ? &local : nullptr,
                                                wait_ ? 1 : 0, wait_ ? &wait_ : nullptr,
                                                m_.rt.profiling () ? &ev : nullptr));
      wait_ = nullptr;
      s_.launches++;
      if (ev)
        s_.kernels.add (phase, cl::Event (ev));
      return {};
    }
    Error library (const std::function<Error (cl_command_queue)> &enqueue, int launches) override {
      if (wait_) {
        GPUDETECT_CL_TRY (clEnqueueBarrierWithWaitList (m_.rt.queue (), 1, &wait_, nullptr));
        wait_ = nullptr;
      }
      s_.launches += launches;
      return enqueue (m_.rt.queue ());
    }

  private:
    Impl &m_;
    Slot &s_;
    cl_event wait_;
  };

  // share_frames: a device frame for the slot's next upload, a new one where
  // another engine still holds the slot's last.
  Error prepare_frame (const Frame &f, Slot &s) {
    auto d = s.frame;
    if (!d || d.use_count () > 1)
      d = std::make_shared<DeviceFrame> ();
    DeviceFrame next;
    next.context = dev ().context.get ();
    next.format = f.format;
    next.chroma = f.format == PixelFormat::Gray8 ? f.chroma : ChromaLayout::None;
    next.width = f.width;
    next.height = f.height;
    next.stride[0] = layout.stride ();
    int cs[2], rows[2];
    chroma_geometry (next.chroma, f.width, f.height, cs, rows);
    next.planes = 1;
    size_t at = static_cast<size_t> (next.stride[0]) * f.height;
    for (int i = 0; i < 2; i++)
      if (rows[i] > 0) {
        next.offset[next.planes] = at;
        next.stride[next.planes] = cs[i];
        next.planes++;
        at += static_cast<size_t> (cs[i]) * rows[i];
      }
    const size_t have = d->mem ? d->bytes () : 0;
    if (!d->mem || have < at) {
      if (Error e = cl::make_buffer (dev (), &next.mem, at, CL_MEM_READ_ONLY))
        return e;
    } else {
      next.mem = std::move (d->mem);
    }
    *d = std::move (next);
    s.frame = std::move (d);
    return {};
  }

  // The frame's luma on the device, for the family.
  const cl::Mem &device_src (const Slot &s) const {
    return s.input ? s.input->mem : s.frame ? s.frame->mem : rt.has_upload_queue () ? s.src : src;
  }

  Error upload (const Frame &f, Slot &s, cl_command_queue q, cl_event *ev) {
    const size_t row = static_cast<size_t> (layout.stride ());
    const cl::Mem &dsrc = device_src (s);
    if (cfg.direct_upload) {
      // Straight from the caller's memory, which stays valid until collect().
      const size_t origin[3] = {0, 0, 0}, region[3] = {row, static_cast<size_t> (f.height), 1};
      if (static_cast<size_t> (f.stride) == row)
        GPUDETECT_CL_TRY (clEnqueueWriteBuffer (q, dsrc.get (), CL_FALSE, 0, row * f.height, f.data, 0, nullptr, ev));
      else
        GPUDETECT_CL_TRY (clEnqueueWriteBufferRect (q, dsrc.get (), CL_FALSE, origin, origin, region, row, 0,
                                                    static_cast<size_t> (f.stride), 0, f.data, 0, nullptr, ev));
      return {};
    }
    uint8_t *dst = static_cast<uint8_t *> (s.staging.data ());
    const auto t0 = Clock::now ();
    for (int y = 0; y < f.height; y++)
      std::memcpy (dst + y * row, f.data + static_cast<size_t> (y) * f.stride, row);
    host_times.copy_us += us_since (t0);
    GPUDETECT_CL_TRY (clEnqueueWriteBuffer (q, dsrc.get (), CL_FALSE, 0, src_size, dst, 0, nullptr, ev));
    return {};
  }

  // share_frames: the chroma planes after the luma (straight from the
  // caller's memory with direct_upload, else before submit() returns), and a
  // marker for other engines to wait on.
  Error upload_chroma (const Frame &f, Slot &s, cl_command_queue q) {
    DeviceFrame &d = *s.frame;
    for (int i = 1; i < d.planes; i++) {
      const uint8_t *p = f.chroma_data[i - 1];
      const int stride = f.chroma_stride[i - 1];
      const size_t w = static_cast<size_t> (d.stride[i]), rows = static_cast<size_t> ((f.height + 1) / 2);
      if (!p || stride < d.stride[i])
        return {"invalid chroma plane"};
      const size_t origin[3] = {0, 0, 0}, dorigin[3] = {d.offset[i], 0, 0}, region[3] = {w, rows, 1};
      GPUDETECT_CL_TRY (clEnqueueWriteBufferRect (q, d.mem.get (), cfg.direct_upload ? CL_FALSE : CL_TRUE, dorigin,
                                                  origin, region, w, 0, static_cast<size_t> (stride), 0, p, 0, nullptr,
                                                  nullptr));
    }
    GPUDETECT_CL_TRY (clEnqueueMarkerWithWaitList (q, 0, nullptr, d.uploaded.out ()));
    return {};
  }

  Error enqueue (const Frame &f, Slot &s) {
    s.upload.reset ();
    s.read.reset ();
    s.kernels.clear ();
    s.launches = 0;
    s.seen_done = false;
    // the upload on the second queue, overlapping the frame before
    const bool overlap = !s.input && rt.has_upload_queue () && (upload_mode == 1 || device_busy (s));
    cl_command_queue uq = overlap ? rt.uploads () : rt.queue ();
    if (cfg.share_frames && !s.input)
      if (Error e = prepare_frame (f, s))
        return e;
    if (!s.input) {
      if (Error e = upload (f, s, uq, rt.profiling () || overlap ? s.upload.out () : nullptr))
        return e;
      if (cfg.share_frames)
        if (Error e = upload_chroma (f, s, uq))
          return e;
    }
    // the frame another engine uploaded: the first launch waits for its upload
    const cl_event uploaded = s.input ? s.input->uploaded.get () : overlap ? s.upload.get () : nullptr;
    if (overlap)
      GPUDETECT_CL_TRY (clFlush (uq));
    cl_event done = nullptr;
    if (!geom->levels.empty ()) {
      FrameLaunch launcher (*this, s, uploaded);
      if (Error e = family->enqueue ({device_src (s), s.cand, static_cast<cl_uint> (cfg.hit_capacity)}, launcher))
        return e;
      // the header and the first read_prefix pairs; collect() reads the rest
      // where there are more
      s.read_entries = static_cast<uint32_t> (std::min (cfg.hit_capacity, read_prefix));
      GPUDETECT_CL_TRY (clEnqueueReadBuffer (rt.queue (), s.cand.get (), CL_FALSE, 0,
                                             (kCandidateHeader + 2 * static_cast<size_t> (s.read_entries)) *
                                                 sizeof (cl_uint),
                                             s.result_ptr, 0, nullptr, &done));
    } else {
      // no level fits the frame: nothing to run, nothing found
      s.result_ptr[0] = s.result_ptr[1] = 0;
      GPUDETECT_CL_TRY (clEnqueueMarkerWithWaitList (rt.queue (), uploaded ? 1 : 0, uploaded ? &uploaded : nullptr,
                                                     &done));
    }
    s.read.reset (done);
    GPUDETECT_CL_TRY (clFlush (rt.queue ()));
    if (uploaded)
      return rt.start_after (uploaded);
    return {};
  }

  Error submit (const Frame &f, const std::vector<Region> *regions, int *ticket,
                std::shared_ptr<const DeviceFrame> input = nullptr);

  // A pyramid of regions' objects: each region's hits grouped by the family
  // as those of an image of the region's size, then moved into the frame.
  void finish_regions (const PyramidGeometry &g, FrameResult *out) const {
    std::vector<std::vector<RawHit>> by_region (g.regions.size ());
    for (const RawHit &h : out->hits)
      by_region[g.levels[h.level].region].push_back (h);
    PyramidGeometry view; // the levels, without the tables finish() does not read
    view.window_width = g.window_width;
    view.window_height = g.window_height;
    view.levels = g.levels;
    view.cell = g.cell;
    for (size_t r = 0; r < g.regions.size (); r++) {
      if (by_region[r].empty ())
        continue;
      const Region &reg = g.regions[r];
      view.image_width = reg.width;
      view.image_height = reg.height;
      for (Detection d : family->finish (by_region[r], view, search)) {
        d.rect.x += reg.x;
        d.rect.y += reg.y;
        d.region = static_cast<int> (r);
        out->objects.push_back (d);
      }
    }
    for (RawHit &h : out->hits) {
      h.rect.x += g.regions[g.levels[h.level].region].x;
      h.rect.y += g.regions[g.levels[h.level].region].y;
    }
    out->regions_left_out = g.regions_left_out;
  }

  void times (const Slot &s, StageTimes *t) const {
    cl_ulong first = ~0ull, last = 0;
    t->upload = runtime::span_us (s.upload, &first, &last);
    t->phases.assign (family->phases ().size (), 0.0);
    s.kernels.sum (&t->phases, &first, &last);
    t->readback = runtime::span_us (s.read, &first, &last);
    t->total_device = last > first ? (last - first) / 1000.0 : 0;
    t->launches = s.launches;
  }
};

Detector::Detector (std::unique_ptr<Impl> impl) : impl_ (std::move (impl)) {}
Detector::~Detector () = default;

Error Detector::create (const DetectorConfig &config, std::unique_ptr<Detector> *out) {
  using Kind = Error::Kind;
  auto impl = std::make_unique<Impl> ();
  Impl &m = *impl;
  m.cfg = config;
  m.cfg.slots = std::clamp (config.slots, 1, 64);
  m.cfg.hit_capacity = std::clamp (config.hit_capacity, 16, 1 << 24);
  if (!m.cfg.interrupt)
    m.cfg.interrupt = std::make_shared<runtime::Interrupt> (); // one wait, whoever uses the detector
  if (!(config.scale_factor > 1.0))
    return {"scale factor must be greater than 1", Kind::Config};
  if (Error e = make_tuning (config.tuning, &m.tuning, family_option_keys ()))
    return std::move (e).as (Kind::Config);
  if (config.levels_per_octave < 0 || config.levels_per_octave > 32 || config.shrink < 0 || config.shrink > 8)
    return {"levels per octave must be 0 to 32 and shrink 0 to 8 (0: the model's)", Kind::Config};
  m.search = {config.scale_factor, config.min_size, config.max_size, config.min_neighbors, config.threshold,
              config.levels_per_octave, config.shrink};
  const std::string path = resolve_model (config.model);
  if (path.empty ()) {
    std::string why;
    unresolved_model (config.model, &why);
    return {why, Kind::Model};
  }
  if (Error e = load_family (path, &m.family))
    return std::move (e).as (Kind::Model);
  if (Error e = m.family->options (m.tuning))
    return std::move (e).as (Kind::Config);
  // Frames' work on a queue the shared device hands out in turn (queues=N)
  // rather than the detector's own.
  if (Error e = m.rt.open (config.device, config.share, config.profile, m.tuning.queues))
    return std::move (e).as (Kind::Device);
  m.memory_limit = config.max_device_memory ? config.max_device_memory : cl::default_memory_budget (m.rt.info ());
  m.share = std::make_unique<cl::DeviceShare> (m.rt.info ());
  if (Error e = m.build ())
    return e.kind == Kind::Resource ? e : std::move (e).as (Kind::Build);
  m.slots.resize (m.cfg.slots);
  for (Slot &s : m.slots)
    if (Error e = m.prepare_results (s))
      return std::move (e).as (Kind::Device);
  out->reset (new Detector (std::move (impl)));
  return {};
}

Error Detector::submit (const Frame &f, int *ticket) { return impl_->submit (f, nullptr, ticket); }

namespace {
// The part of r inside a w x h frame; a region with nothing left stays,
// empty, so that the objects' region indices are the caller's.
Region clip_region (const Region &r, int w, int h) {
  const int x0 = std::clamp (r.x, 0, w), y0 = std::clamp (r.y, 0, h);
  const int x1 = std::clamp (r.x + std::max (r.width, 0), x0, w);
  const int y1 = std::clamp (r.y + std::max (r.height, 0), y0, h);
  return {x0, y0, x1 - x0, y1 - y0};
}
} // namespace

Error Detector::submit (const Frame &f, const std::vector<Region> &regions, int *ticket) {
  if (!impl_->family->searches_regions ())
    return {"the " + impl_->family->info ().family + " family searches whole frames only, not regions of them",
            Error::Kind::Config};
  std::vector<Region> clipped;
  clipped.reserve (regions.size ());
  for (const Region &r : regions)
    clipped.push_back (clip_region (r, f.width, f.height));
  return impl_->submit (f, &clipped, ticket);
}

bool Detector::searches_regions () const { return impl_->family->searches_regions (); }

Error Detector::submit (std::shared_ptr<const DeviceFrame> frame, const std::vector<Region> &regions, int *ticket) {
  Impl &m = *impl_;
  if (!frame || !frame->mem || frame->context != m.dev ().context.get ())
    return {"the frame does not lie on this detector's OpenCL context", Error::Kind::Config};
  if (frame->offset[0] != 0 || frame->stride[0] != frame->width * bytes_per_pixel (frame->format))
    return {"the device frame's first plane is not packed at its start", Error::Kind::Config};
  if (!m.family->searches_regions ())
    return {"the " + m.family->info ().family + " family searches whole frames only, not regions of them",
            Error::Kind::Config};
  Frame f; // its layout: the pixels are on the device
  f.width = frame->width;
  f.height = frame->height;
  f.format = frame->format;
  f.stride = frame->stride[0];
  std::vector<Region> clipped;
  clipped.reserve (regions.size ());
  for (const Region &r : regions)
    clipped.push_back (clip_region (r, f.width, f.height));
  return m.submit (f, &clipped, ticket, std::move (frame));
}

Error Detector::Impl::submit (const Frame &f, const std::vector<Region> *regions, int *ticket,
                              std::shared_ptr<const DeviceFrame> input) {
  Impl &m = *this;
  if ((!f.data && !input) || f.width <= 0 || f.height <= 0 || f.stride < f.width * bytes_per_pixel (f.format))
    return "invalid frame";
  auto it = std::find_if (m.slots.begin (), m.slots.end (), [] (const Slot &s) { return !s.busy; });
  if (it == m.slots.end ())
    return "no free slot";
  if (Error e = m.ensure_geometry (f.width, f.height, f.format, regions))
    return e;
  if (m.params_dirty) {
    if (Error e = m.family->parameters (m.search))
      return e;
    m.params_dirty = false;
  }
  if (Error e = m.prepare_slot (*it, m.cfg.direct_upload || input ? 0 : m.src_size))
    return e;
  const auto t0 = Clock::now ();
  const double copy0 = m.host_times.copy_us;
  it->input = std::move (input);
  Error enqueue_error = m.enqueue (f, *it);
  m.host_times.enqueue_us += us_since (t0) - (m.host_times.copy_us - copy0);
  m.host_times.frames++;
  if (enqueue_error) {
    clFinish (m.rt.queue ());
    it->input.reset ();
    return enqueue_error;
  }
  it->busy = true;
  it->geom = m.geom;
  *ticket = static_cast<int> (it - m.slots.begin ());
  return {};
}

Error Detector::prepare (int width, int height, PixelFormat format) {
  if (width <= 0 || height <= 0)
    return "invalid frame size";
  return impl_->ensure_geometry (width, height, format);
}

bool Detector::ready (int ticket) const {
  const Slot &s = impl_->slots.at (ticket);
  return !s.busy || s.done ();
}

Error Detector::collect (int ticket, FrameResult *out) {
  Impl &m = *impl_;
  Slot &s = m.slots.at (ticket);
  if (!s.busy)
    return "slot is not in use";
  s.busy = false;
  m.host_syncs++;
  const auto t0 = Clock::now ();
  // GPUs: the driver's own wait once a frame took under 20 ms (the fastest,
  // not interruptible), else one that a stop cuts short (runtime::wait).
  Error failed = m.gpu_device && m.last_wait_us < 20000
                     ? runtime::wait (s.read.get (), "device work failed")
                     : runtime::wait (s.read.get (), "device work failed", m.cfg.interrupt, m.gpu_device);
  m.last_wait_us = us_since (t0);
  m.host_times.wait_us += m.last_wait_us;
  if (failed && failed.kind == Error::Kind::Interrupted)
    s.busy = true; // still in flight (discard(), wait_idle())
  if (failed) {
    if (failed.kind != Error::Kind::Interrupted)
      s.input.reset ();
    return failed;
  }
  s.input.reset ();
  // More candidates than were read with the frame: the rest from the slot's
  // own buffer (on the upload queue where there is one, so as not to wait
  // for frames queued after it).
  const uint32_t n = std::min<uint32_t> (s.result_ptr[0], static_cast<uint32_t> (m.cfg.hit_capacity));
  if (n > s.read_entries) {
    m.host_syncs++;
    const auto t1 = Clock::now ();
    const size_t at = kCandidateHeader + 2 * static_cast<size_t> (s.read_entries);
    const cl_int st = clEnqueueReadBuffer (m.rt.uploads (), s.cand.get (), CL_TRUE, at * sizeof (cl_uint),
                                           2 * static_cast<size_t> (n - s.read_entries) * sizeof (cl_uint),
                                           s.result_ptr + at, 0, nullptr, nullptr);
    m.host_times.wait_us += us_since (t1);
    if (st != CL_SUCCESS)
      return std::string ("reading the candidates back failed: ") + cl::status_to_string (st);
  }
  *out = FrameResult ();
  if (m.rt.profiling ())
    m.times (s, &out->times);
  out->truncated = s.result_ptr[0] > static_cast<uint32_t> (m.cfg.hit_capacity);
  out->lost = s.result_ptr[1];
  if (m.cfg.candidate_order_seed)
    shuffle_candidates (s.result_ptr + kCandidateHeader, n, m.cfg.candidate_order_seed + m.frames_collected);
  m.frames_collected++;
  out->hits = decode_candidates (*s.geom, s.result_ptr + kCandidateHeader, n);
  const auto g0 = Clock::now ();
  if (s.geom->regions.empty ())
    out->objects = m.family->finish (out->hits, *s.geom, m.search);
  else
    m.finish_regions (*s.geom, out);
  out->group_us = us_since (g0);
  return {};
}

void Detector::discard (int ticket) {
  Slot &s = impl_->slots.at (ticket);
  if (!s.busy)
    return;
  if (s.read) {
    const auto t0 = Clock::now ();
    runtime::wait (s.read.get (), "discarded frame"); // its result is dropped either way
    impl_->host_times.wait_us += us_since (t0);
  }
  s.input.reset ();
  s.busy = false;
}

void Detector::wait_idle () {
  for (Slot &s : impl_->slots)
    if (s.busy && s.read)
      runtime::wait (s.read.get (), "frame"); // its result is dropped either way
  impl_->rt.finish ();
}

Error Detector::detect (const Frame &frame, FrameResult *out) {
  int t = -1;
  if (Error e = submit (frame, &t))
    return e;
  return collect (t, out);
}

std::shared_ptr<const DeviceFrame> Detector::device_frame (int ticket) const {
  if (ticket < 0 || ticket >= static_cast<int> (impl_->slots.size ()) || !impl_->slots[ticket].busy)
    return nullptr;
  const Slot &s = impl_->slots[ticket];
  if (s.input)
    return s.input;
  return s.frame;
}

int Detector::free_slots () const {
  return static_cast<int> (std::count_if (impl_->slots.begin (), impl_->slots.end (),
                                          [] (const Slot &s) { return !s.busy; }));
}
int Detector::slots () const { return static_cast<int> (impl_->slots.size ()); }

void Detector::set_search (double scale_factor, Size2 min_size, Size2 max_size) {
  Impl &m = *impl_;
  if (scale_factor > 1.0)
    m.search.scale_factor = scale_factor;
  m.search.min_size = min_size;
  m.search.max_size = max_size;
  m.geom_dirty = true;
}
void Detector::set_min_neighbors (int n) { impl_->search.min_neighbors = n; }
void Detector::set_threshold (std::optional<double> threshold) {
  impl_->search.threshold = threshold;
  impl_->params_dirty = true;
}

uint64_t Detector::device_memory () const { return impl_->model_bytes + impl_->frame_bytes; }
uint64_t Detector::device_memory_limit () const { return impl_->memory_limit; }
const cl::DeviceInfo &Detector::device () const { return impl_->rt.info (); }
cl_context Detector::context () const { return impl_->rt.device ().context.get (); }
const std::vector<std::string> &Detector::phases () const { return impl_->family->phases (); }
const ModelInfo &Detector::model () const { return impl_->family->info (); }
const char *Detector::threshold_meaning () const { return impl_->family->threshold_meaning (); }
const char *Detector::lost_hint () const { return impl_->family->lost_hint (); }
bool Detector::gpu_schedule () const { return impl_->family->gpu_schedule (); }
const PyramidGeometry *Detector::geometry () const { return impl_->geom.get (); }
bool Detector::built_from_cache () const { return impl_->from_cache; }
uint64_t Detector::program_builds () const { return impl_->rt.program_builds (); }
uint64_t Detector::host_syncs () const { return impl_->host_syncs; }
Detector::HostTimes Detector::host_times () const { return impl_->host_times; }

Error Detector::host_allocator (std::shared_ptr<cl::HostAllocator> *out) {
  Impl &m = *impl_;
  if (!m.host_alloc)
    if (Error e = cl::HostAllocator::create (m.dev (), &m.host_alloc))
      return e;
  *out = m.host_alloc;
  return {};
}

} // namespace gpudetect
