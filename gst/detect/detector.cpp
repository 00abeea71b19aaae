// The engine's core: device, program build, slots of frames in flight,
// upload, one readback per frame, candidate decoding and timing, the same for
// every family (core/family.h).
#include "detector.h"

#include "cl/shared.h"
#include "families/registry.h"

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
  cl::Mem staging;          // pinned, mapped for the life of the slot
  void *staging_ptr = nullptr;
  size_t staging_size = 0;
  cl::Mem cand;             // the frame's candidates on the device (core/candidates.h)
  cl::Mem result;           // pinned, mapped: the candidates read back
  uint32_t *result_ptr = nullptr;
  uint32_t read_entries = 0; // pairs read back with the frame (the rest, if any, in collect())
  cl::Event upload, read;   // the upload's event where it ran on the upload queue or when profiling
  std::shared_ptr<DeviceFrame> frame; // share_frames: the frame on the device, shared with other engines
  std::vector<std::pair<Phase, cl::Event>> kernels; // profiling events of the frame's launches
  int launches = 0;
  bool busy = false;
  mutable bool seen_done = false; // its readback was seen complete (no need to ask the driver again)
  std::shared_ptr<const PyramidGeometry> geom;

  // Whether the frame's device work is done (or failed), asking the driver
  // only until it has said so once.
  bool done () const {
    if (seen_done || !read)
      return true;
    cl_int st = CL_QUEUED;
    clGetEventInfo (read.get (), CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, nullptr);
    seen_done = st <= CL_COMPLETE;
    return seen_done;
  }
};

} // namespace

struct Detector::Impl {
  DetectorConfig cfg;
  Tuning tuning;
  SearchParams search;
  std::unique_ptr<Family> family;
  cl::Device dev;
  std::shared_ptr<const cl::Program> program; // shared with every engine on the context with the same program
  bool from_cache = false;

  std::shared_ptr<const PyramidGeometry> geom;
  FrameLayout layout;
  bool geom_dirty = true, params_dirty = true;
  cl::Mem src; // the frame on the device when there is no upload queue
  size_t src_size = 0;

  std::vector<Slot> slots;
  uint64_t host_syncs = 0;
  uint64_t frames_collected = 0; // seeds the candidates' shuffle (DetectorConfig::candidate_order_seed)
  Detector::HostTimes host_times;
  std::shared_ptr<cl::HostAllocator> host_alloc; // page-locked frame memory, made on first use
  // Uploads on a queue of their own, so that a frame's upload runs while the
  // frame before it is computed; each slot then has its own device frame.
  // upload_mode: 0 never, 1 every frame, 2 when a frame before is still on
  // the device at submit (a driver that resolves waits across queues lazily
  // needs a flush when the upload is done, which costs the host ~25 us a
  // frame: worth it only when there is compute to overlap).
  cl::Queue upload_queue;
  int upload_mode = 0;
  int read_prefix = 1023; // pairs read back with the frame (the rest in collect())

  ~Impl () {
    if (upload_queue)
      clFinish (upload_queue.get ());
    if (dev.queue)
      clFinish (dev.queue.get ());
    for (Slot &s : slots) {
      if (s.staging_ptr)
        clEnqueueUnmapMemObject (dev.queue.get (), s.staging.get (), s.staging_ptr, 0, nullptr, nullptr);
      if (s.result_ptr)
        clEnqueueUnmapMemObject (dev.queue.get (), s.result.get (), s.result_ptr, 0, nullptr, nullptr);
    }
    if (dev.queue)
      clFinish (dev.queue.get ());
  }

  cl::Error build () {
    bool gpu = (dev.info.type & CL_DEVICE_TYPE_GPU) || (dev.info.type & CL_DEVICE_TYPE_ACCELERATOR);
    if (tuning.schedule != Tuning::Schedule::Auto)
      gpu = tuning.schedule == Tuning::Schedule::Gpu;
    ProgramSpec spec;
    if (cl::Error e = family->program ({dev, tuning, gpu}, &spec))
      return e;
    std::string opts = "-cl-std=CL1.2 " + spec.options;
    if (!tuning.build_options.empty ())
      opts += " " + tuning.build_options;
    cl::Error built = cl::build_shared_program (dev, spec.source, spec.hash, opts, &program, &from_cache,
                                                spec.ptx_register_limits);
    if (built && !spec.optional_option.empty () && opts.find (spec.optional_option) != std::string::npos) {
      opts.erase (opts.find (spec.optional_option), spec.optional_option.size ());
      built = cl::build_shared_program (dev, spec.source, spec.hash, opts, &program, &from_cache);
    }
    if (built)
      return built;
    if (cl::Error e = family->setup ({dev, tuning, family->gpu_schedule ()}, *program))
      return e;
    upload_mode = tuning.upload_queue >= 0 ? tuning.upload_queue : (family->gpu_schedule () ? 2 : 0);
    if (upload_mode != 0) {
      cl_int st = CL_SUCCESS;
      upload_queue.reset (
          clCreateCommandQueue (dev.context.get (), dev.info.id, cfg.profile ? CL_QUEUE_PROFILING_ENABLE : 0, &st));
      GPUDETECT_CL_TRY (st);
    }
    // Pairs read back with each frame (8 KB with the header); a frame with
    // more reads the rest when it is collected, one more sync.
    read_prefix = tuning.read_prefix > 0 ? tuning.read_prefix : cfg.hit_capacity;
    return {};
  }

  cl::Error ensure_geometry (int w, int h, PixelFormat format) {
    if (!geom_dirty && geom && w == layout.width && h == layout.height && format == layout.format)
      return {};
    // Every slot's work must be done before shared buffers are replaced.
    host_syncs++;
    if (upload_queue)
      GPUDETECT_CL_TRY (clFinish (upload_queue.get ()));
    GPUDETECT_CL_TRY (clFinish (dev.queue.get ()));
    auto g = std::make_shared<PyramidGeometry> (family->plan (w, h, search));
    layout = {format, w, h};
    src_size = static_cast<size_t> (layout.stride ()) * h;
    if (cl::Error e = cl::make_buffer (dev, &src, upload_queue || cfg.share_frames ? 16 : src_size, CL_MEM_READ_ONLY))
      return e;
    if (cl::Error e = family->geometry (dev, *g, layout, search))
      return e;
    geom = std::move (g);
    geom_dirty = false;
    params_dirty = true;
    return {};
  }

  cl::Error map_pinned (cl::Mem *m, size_t size, void **ptr) {
    if (cl::Error e = cl::make_buffer (dev, m, size, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR))
      return e;
    cl_int st = CL_SUCCESS;
    host_syncs++;
    *ptr = clEnqueueMapBuffer (dev.queue.get (), m->get (), CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, size, 0,
                               nullptr, nullptr, &st);
    GPUDETECT_CL_TRY (st);
    return {};
  }

  size_t candidates_bytes () const {
    return (kCandidateHeader + 2 * static_cast<size_t> (cfg.hit_capacity)) * sizeof (cl_uint);
  }

  cl::Error prepare_slot (Slot &s, size_t staging) {
    if (upload_queue && !cfg.share_frames && s.src_size < src_size) {
      if (cl::Error e = cl::make_buffer (dev, &s.src, src_size, CL_MEM_READ_ONLY))
        return e;
      s.src_size = src_size;
    }
    if (staging > 0 && s.staging_size < staging) {
      if (s.staging_ptr)
        clEnqueueUnmapMemObject (dev.queue.get (), s.staging.get (), s.staging_ptr, 0, nullptr, nullptr);
      s.staging_ptr = nullptr;
      s.staging_size = 0;
      if (cl::Error e = map_pinned (&s.staging, staging, &s.staging_ptr))
        return e;
      s.staging_size = staging;
    }
    if (!s.cand)
      if (cl::Error e = cl::make_buffer (dev, &s.cand, candidates_bytes ()))
        return e;
    if (!s.result_ptr) {
      void *p = nullptr;
      if (cl::Error e = map_pinned (&s.result, candidates_bytes (), &p))
        return e;
      s.result_ptr = static_cast<uint32_t *> (p);
    }
    return {};
  }

  // Called by the OpenCL runtime when a frame's upload is done: flushing the
  // compute queue makes a driver that checks waits across queues only at API
  // calls start the frame's kernels now rather than at the next call.
  // The callback holds its own reference to the queue.
  static void CL_CALLBACK upload_done (cl_event, cl_int, void *queue) {
    clFlush (static_cast<cl_command_queue> (queue));
    clReleaseCommandQueue (static_cast<cl_command_queue> (queue));
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
    cl::Error launch (cl_kernel k, size_t global, size_t local, Phase phase) override {
      cl_event ev = nullptr;
      GPUDETECT_CL_TRY (clEnqueueNDRangeKernel (m_.dev.queue.get (), k, 1, nullptr, &global, local ? &local : nullptr,
                                                wait_ ? 1 : 0, wait_ ? &wait_ : nullptr,
                                                m_.cfg.profile ? &ev : nullptr));
      wait_ = nullptr;
      s_.launches++;
      if (ev)
        s_.kernels.emplace_back (phase, cl::Event (ev));
      return {};
    }
    cl::Error library (const std::function<cl::Error (cl_command_queue)> &enqueue, int launches) override {
      if (wait_) {
        GPUDETECT_CL_TRY (clEnqueueBarrierWithWaitList (m_.dev.queue.get (), 1, &wait_, nullptr));
        wait_ = nullptr;
      }
      s_.launches += launches;
      return enqueue (m_.dev.queue.get ());
    }

  private:
    Impl &m_;
    Slot &s_;
    cl_event wait_;
  };

  // share_frames: a device frame for the slot's next upload, a new one where
  // another engine still holds the slot's last.
  cl::Error prepare_frame (const Frame &f, Slot &s) {
    auto d = s.frame;
    if (!d || d.use_count () > 1)
      d = std::make_shared<DeviceFrame> ();
    DeviceFrame next;
    next.context = dev.context.get ();
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
      if (cl::Error e = cl::make_buffer (dev, &next.mem, at, CL_MEM_READ_ONLY))
        return e;
    } else {
      next.mem = std::move (d->mem);
    }
    *d = std::move (next);
    s.frame = std::move (d);
    return {};
  }

  cl::Error upload (const Frame &f, Slot &s, cl_command_queue q, cl_event *ev) {
    const size_t row = static_cast<size_t> (layout.stride ());
    const cl::Mem &dsrc = s.frame ? s.frame->mem : upload_queue ? s.src : src;
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
    uint8_t *dst = static_cast<uint8_t *> (s.staging_ptr);
    const auto t0 = Clock::now ();
    for (int y = 0; y < f.height; y++)
      std::memcpy (dst + y * row, f.data + static_cast<size_t> (y) * f.stride, row);
    host_times.copy_us += us_since (t0);
    GPUDETECT_CL_TRY (clEnqueueWriteBuffer (q, dsrc.get (), CL_FALSE, 0, src_size, s.staging_ptr, 0, nullptr, ev));
    return {};
  }

  // share_frames: the chroma planes after the luma (straight from the
  // caller's memory with direct_upload, else before submit() returns), and a
  // marker for other engines to wait on.
  cl::Error upload_chroma (const Frame &f, Slot &s, cl_command_queue q) {
    DeviceFrame &d = *s.frame;
    for (int i = 1; i < d.planes; i++) {
      const uint8_t *p = f.chroma_data[i - 1];
      const int stride = f.chroma_stride[i - 1];
      const size_t w = static_cast<size_t> (d.stride[i]), rows = static_cast<size_t> ((f.height + 1) / 2);
      if (!p || stride < d.stride[i])
        return {"invalid chroma plane"};
      const size_t origin[3] = {0, 0, 0}, dorigin[3] = {d.offset[i], 0, 0}, region[3] = {w, rows, 1};
      GPUDETECT_CL_TRY (clEnqueueWriteBufferRect (q, d.mem.get (), cfg.direct_upload ? CL_FALSE : CL_TRUE, dorigin, origin, region, w, 0,
                                                  static_cast<size_t> (stride), 0, p, 0, nullptr, nullptr));
    }
    GPUDETECT_CL_TRY (clEnqueueMarkerWithWaitList (q, 0, nullptr, d.uploaded.out ()));
    return {};
  }

  cl::Error enqueue (const Frame &f, Slot &s) {
    s.upload.reset ();
    s.read.reset ();
    s.kernels.clear ();
    s.launches = 0;
    s.seen_done = false;
    // the upload on the second queue, overlapping the frame before
    const bool overlap = upload_queue && (upload_mode == 1 || device_busy (s));
    cl_command_queue uq = overlap ? upload_queue.get () : dev.queue.get ();
    if (cfg.share_frames)
      if (cl::Error e = prepare_frame (f, s))
        return e;
    if (cl::Error e = upload (f, s, uq, cfg.profile || overlap ? s.upload.out () : nullptr))
      return e;
    if (cfg.share_frames)
      if (cl::Error e = upload_chroma (f, s, uq))
        return e;
    const cl_event uploaded = overlap ? s.upload.get () : nullptr;
    if (overlap)
      GPUDETECT_CL_TRY (clFlush (uq));
    cl_event done = nullptr;
    if (!geom->levels.empty ()) {
      FrameLaunch launcher (*this, s, uploaded);
      if (cl::Error e = family->enqueue ({s.frame ? s.frame->mem : upload_queue ? s.src : src, s.cand,
                                          static_cast<cl_uint> (cfg.hit_capacity)},
                                         launcher))
        return e;
      // the header and the first read_prefix pairs; collect() reads the rest
      // where there are more
      s.read_entries = static_cast<uint32_t> (std::min (cfg.hit_capacity, read_prefix));
      GPUDETECT_CL_TRY (clEnqueueReadBuffer (dev.queue.get (), s.cand.get (), CL_FALSE, 0,
                                             (kCandidateHeader + 2 * static_cast<size_t> (s.read_entries)) *
                                                 sizeof (cl_uint),
                                             s.result_ptr, 0, nullptr, &done));
    } else {
      // no level fits the frame: nothing to run, nothing found
      s.result_ptr[0] = s.result_ptr[1] = 0;
      GPUDETECT_CL_TRY (clEnqueueMarkerWithWaitList (dev.queue.get (), uploaded ? 1 : 0, uploaded ? &uploaded : nullptr,
                                                     &done));
    }
    s.read.reset (done);
    GPUDETECT_CL_TRY (clFlush (dev.queue.get ()));
    if (uploaded) {
      GPUDETECT_CL_TRY (clRetainCommandQueue (dev.queue.get ()));
      if (cl_int st = clSetEventCallback (uploaded, CL_COMPLETE, upload_done, dev.queue.get ()); st != CL_SUCCESS) {
        clReleaseCommandQueue (dev.queue.get ());
        GPUDETECT_CL_TRY (st);
      }
    }
    return {};
  }

  static double event_us (const cl::Event &e, cl_ulong *first, cl_ulong *last) {
    if (!e)
      return 0;
    cl_ulong a = 0, b = 0;
    if (clGetEventProfilingInfo (e.get (), CL_PROFILING_COMMAND_START, sizeof a, &a, nullptr) != CL_SUCCESS ||
        clGetEventProfilingInfo (e.get (), CL_PROFILING_COMMAND_END, sizeof b, &b, nullptr) != CL_SUCCESS)
      return 0;
    *first = std::min (*first, a);
    *last = std::max (*last, b);
    return (b - a) / 1000.0;
  }

  static void times (const Slot &s, StageTimes *t) {
    cl_ulong first = ~0ull, last = 0;
    t->upload = event_us (s.upload, &first, &last);
    for (const auto &[phase, ev] : s.kernels) {
      const double us = event_us (ev, &first, &last);
      switch (phase) {
      case Phase::Pyramid: t->pyramid += us; break;
      case Phase::Integral: t->integral += us; break;
      case Phase::Tilted: t->tilted += us; break;
      case Phase::First: t->first += us; break;
      case Phase::Rest: t->rest += us; break;
      default: break;
      }
    }
    t->readback = event_us (s.read, &first, &last);
    t->total_device = last > first ? (last - first) / 1000.0 : 0;
    t->launches = s.launches;
  }
};

Detector::Detector (std::unique_ptr<Impl> impl) : impl_ (std::move (impl)) {}
Detector::~Detector () = default;

std::unique_ptr<Detector> Detector::create (const DetectorConfig &config, std::string *error, CreateError *kind) {
  CreateError dummy;
  if (!kind)
    kind = &dummy;
  *kind = CreateError::None;
  auto fail = [&] (CreateError k, const std::string &e) {
    *kind = k;
    *error = e;
    return nullptr;
  };
  auto impl = std::make_unique<Impl> ();
  Impl &m = *impl;
  m.cfg = config;
  m.cfg.slots = std::clamp (config.slots, 1, 64);
  m.cfg.hit_capacity = std::clamp (config.hit_capacity, 16, 1 << 24);
  if (!(config.scale_factor > 1.0))
    return fail (CreateError::Config, "scale factor must be greater than 1");
  if (std::string e = make_tuning (config.tuning, &m.tuning); !e.empty ())
    return fail (CreateError::Config, e);
  if (config.levels_per_octave < 0 || config.levels_per_octave > 32 || config.shrink < 0 || config.shrink > 8)
    return fail (CreateError::Config, "levels per octave must be 0 to 32 and shrink 0 to 8 (0: the model's)");
  m.search = {config.scale_factor, config.min_size, config.max_size, config.min_neighbors, config.threshold,
              config.levels_per_octave, config.shrink};
  std::vector<std::string> tried;
  const std::string path = resolve_model (config.model, &tried);
  if (path.empty ()) {
    std::string where;
    for (const std::string &d : model_search_path ())
      where += (where.empty () ? "" : ", ") + d;
    return fail (CreateError::Model, "model '" + config.model + "' not found (searched " + where + ")");
  }
  if (std::string e = load_family (path, &m.family); !e.empty ())
    return fail (CreateError::Model, e);
  if (cl::Error e = config.share ? cl::attach_device (*config.share, config.profile, &m.dev)
                                 : cl::open_device (config.device, config.profile, &m.dev))
    return fail (CreateError::Device, e.message);
  // Frames' work on a queue the shared device hands out in turn (queues=N)
  // rather than the detector's own.
  if (config.share && m.tuning.queues > 0 && m.dev.queues)
    if (cl::Error e = m.dev.queues->next (m.dev, m.tuning.queues, config.profile, &m.dev.queue))
      return fail (CreateError::Device, e.message);
  if (cl::Error e = m.build ())
    return fail (CreateError::Build, e.message);
  m.slots.resize (m.cfg.slots);
  return std::unique_ptr<Detector> (new Detector (std::move (impl)));
}

std::string Detector::submit (const Frame &f, int *ticket) {
  Impl &m = *impl_;
  if (!f.data || f.width <= 0 || f.height <= 0 || f.stride < f.width * bytes_per_pixel (f.format))
    return "invalid frame";
  auto it = std::find_if (m.slots.begin (), m.slots.end (), [] (const Slot &s) { return !s.busy; });
  if (it == m.slots.end ())
    return "no free slot";
  if (cl::Error e = m.ensure_geometry (f.width, f.height, f.format))
    return e.message;
  if (m.params_dirty) {
    if (cl::Error e = m.family->parameters (m.search))
      return e.message;
    m.params_dirty = false;
  }
  if (cl::Error e = m.prepare_slot (*it, m.cfg.direct_upload ? 0 : m.src_size))
    return e.message;
  const auto t0 = Clock::now ();
  const double copy0 = m.host_times.copy_us;
  cl::Error enqueue_error = m.enqueue (f, *it);
  m.host_times.enqueue_us += us_since (t0) - (m.host_times.copy_us - copy0);
  m.host_times.frames++;
  if (cl::Error e = enqueue_error) {
    clFinish (m.dev.queue.get ());
    return e.message;
  }
  it->busy = true;
  it->geom = m.geom;
  *ticket = static_cast<int> (it - m.slots.begin ());
  return {};
}

bool Detector::ready (int ticket) const {
  const Slot &s = impl_->slots.at (ticket);
  return !s.busy || s.done ();
}

std::string Detector::collect (int ticket, FrameResult *out) {
  Impl &m = *impl_;
  Slot &s = m.slots.at (ticket);
  if (!s.busy)
    return "slot is not in use";
  s.busy = false;
  cl_event e = s.read.get ();
  m.host_syncs++;
  const auto t0 = Clock::now ();
  cl_int st = clWaitForEvents (1, &e);
  m.host_times.wait_us += us_since (t0);
  if (st != CL_SUCCESS) {
    // the command's own status says what failed, where the driver reports it
    cl_int exec = CL_COMPLETE;
    clGetEventInfo (e, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof exec, &exec, nullptr);
    return std::string ("device work failed: ") + cl::status_to_string (exec < 0 ? exec : st);
  }
  // More candidates than were read with the frame: the rest from the slot's
  // own buffer (on the upload queue where there is one, so as not to wait
  // for frames queued after it).
  const uint32_t n = std::min<uint32_t> (s.result_ptr[0], static_cast<uint32_t> (m.cfg.hit_capacity));
  if (n > s.read_entries) {
    m.host_syncs++;
    const auto t1 = Clock::now ();
    cl_command_queue q = m.upload_queue ? m.upload_queue.get () : m.dev.queue.get ();
    const size_t at = kCandidateHeader + 2 * static_cast<size_t> (s.read_entries);
    st = clEnqueueReadBuffer (q, s.cand.get (), CL_TRUE, at * sizeof (cl_uint),
                              2 * static_cast<size_t> (n - s.read_entries) * sizeof (cl_uint), s.result_ptr + at, 0,
                              nullptr, nullptr);
    m.host_times.wait_us += us_since (t1);
    if (st != CL_SUCCESS)
      return std::string ("reading the candidates back failed: ") + cl::status_to_string (st);
  }
  *out = FrameResult ();
  if (m.cfg.profile)
    Impl::times (s, &out->times);
  out->truncated = s.result_ptr[0] > static_cast<uint32_t> (m.cfg.hit_capacity);
  out->lost = s.result_ptr[1];
  if (m.cfg.candidate_order_seed)
    shuffle_candidates (s.result_ptr + kCandidateHeader, n, m.cfg.candidate_order_seed + m.frames_collected);
  m.frames_collected++;
  out->hits = decode_candidates (*s.geom, s.result_ptr + kCandidateHeader, n);
  const auto g0 = Clock::now ();
  out->objects = m.family->finish (out->hits, *s.geom, m.search);
  out->group_us = us_since (g0);
  return {};
}

void Detector::discard (int ticket) {
  Slot &s = impl_->slots.at (ticket);
  if (!s.busy)
    return;
  if (cl_event e = s.read.get ()) {
    const auto t0 = Clock::now ();
    clWaitForEvents (1, &e);
    impl_->host_times.wait_us += us_since (t0);
  }
  s.busy = false;
}

std::string Detector::detect (const Frame &frame, FrameResult *out) {
  int t = -1;
  if (std::string e = submit (frame, &t); !e.empty ())
    return e;
  return collect (t, out);
}

std::shared_ptr<const DeviceFrame> Detector::device_frame (int ticket) const {
  if (ticket < 0 || ticket >= static_cast<int> (impl_->slots.size ()) || !impl_->slots[ticket].busy)
    return nullptr;
  return impl_->slots[ticket].frame;
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

const cl::DeviceInfo &Detector::device () const { return impl_->dev.info; }
cl_context Detector::context () const { return impl_->dev.context.get (); }
const ModelInfo &Detector::model () const { return impl_->family->info (); }
const char *Detector::threshold_meaning () const { return impl_->family->threshold_meaning (); }
const char *Detector::lost_hint () const { return impl_->family->lost_hint (); }
bool Detector::gpu_schedule () const { return impl_->family->gpu_schedule (); }
const PyramidGeometry *Detector::geometry () const { return impl_->geom.get (); }
bool Detector::built_from_cache () const { return impl_->from_cache; }
uint64_t Detector::program_builds () const { return cl::program_builds (impl_->dev); }
uint64_t Detector::host_syncs () const { return impl_->host_syncs; }
Detector::HostTimes Detector::host_times () const { return impl_->host_times; }

std::shared_ptr<cl::HostAllocator> Detector::host_allocator (std::string *error) {
  Impl &m = *impl_;
  if (!m.host_alloc)
    if (cl::Error e = cl::HostAllocator::create (m.dev, &m.host_alloc); e && error)
      *error = e.message;
  return m.host_alloc;
}

} // namespace gpudetect
