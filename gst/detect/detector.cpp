#include "detector.h"

#include "families/cascade/codegen.h"
#include "kernels.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <numeric>

namespace gpudetect {

namespace {

// Device layouts of the model (must match kernels/cascade.cl).
struct DevStage {
  cl_int first_tree, ntrees;
  cl_float threshold, pad;
};
struct DevTree {
  cl_int first_node, node_count, first_leaf, pad;
};
struct DevNode {
  cl_int left, right, feature;
  cl_float threshold;
};
struct DevStump {
  cl_int feature;
  cl_float threshold, left, right;
};
struct DevHaarFeature {
  cl_int r[3][4];
  cl_float w[4];
};

enum Cmd { kUpload, kRows, kCols, kTiltA, kTiltB, kFirst, kRest, kRead, kCmdCount };

struct Slot {
  cl::Mem src;              // the frame on the device, with an upload queue (else Impl::src)
  size_t src_size = 0;
  cl::Mem staging;          // pinned, mapped for the life of the slot
  void *staging_ptr = nullptr;
  size_t staging_size = 0;
  cl::Mem hits;             // the frame's hits on the device: [count, window indices...]
  cl::Mem result;           // pinned, mapped: the hits read back
  uint32_t *result_ptr = nullptr;
  uint32_t read_entries = 0; // window indices read back with the frame (the rest, if any, in collect())
  std::array<cl::Event, kCmdCount> events;
  bool busy = false;
  mutable bool seen_done = false; // its readback was seen complete (no need to ask the driver again)
  std::shared_ptr<const PyramidGeometry> geom;

  // Whether the frame's device work is done (or failed), asking the driver
  // only until it has said so once.
  bool done () const {
    if (seen_done || !events[kRead])
      return true;
    cl_int st = CL_QUEUED;
    clGetEventInfo (events[kRead].get (), CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, nullptr);
    seen_done = st <= CL_COMPLETE;
    return seen_done;
  }
};

int bytes_per_pixel (PixelFormat f) { return f == PixelFormat::Gray8 ? 1 : 4; }

// Byte offsets of R, G, B inside a 4-byte pixel.
cl_int4 rgb_offsets (PixelFormat f) {
  switch (f) {
  case PixelFormat::Rgba: case PixelFormat::Rgbx: return {{0, 1, 2, 0}};
  case PixelFormat::Bgra: case PixelFormat::Bgrx: return {{2, 1, 0, 0}};
  case PixelFormat::Argb: case PixelFormat::Xrgb: return {{1, 2, 3, 0}};
  case PixelFormat::Abgr: case PixelFormat::Xbgr: return {{3, 2, 1, 0}};
  default: return {{0, 0, 0, 0}};
  }
}

size_t round_up (size_t v, size_t m) { return (v + m - 1) / m * m; }

} // namespace

struct Detector::Impl {
  DetectorConfig cfg;
  CascadeModel model;
  cl::Device dev;
  cl::Program program;
  bool from_cache = false;
  size_t rows_wg = 256;
  int rows_rk = 8;          // pyramid_rows: pixels per lane and pass (1 for Haar when not staged)
  bool rows_packed = true;  // pyramid_rows: narrow rows share work-groups (not for Haar when not staged)
  bool gpu_schedule = true; // many lanes: first + list; else one work-item per row (CPU)
  bool features_by_tree = false; // stump models, GPU schedule: features[] in tree order (FEATURES_BY_TREE)
  bool narrow_sum = false;       // the sum plane modulo 2^16 (NARROW_SUM)
  size_t list_groups = 0;   // persistent work-groups of cascade_list
  cl::Kernel k_rows, k_cols, k_tilt_a, k_tilt_b, k_first, k_list, k_rows_cascade;
  int seg_windows = 256;  // cascade_first: a work-group's segment is as many rows as hold this many windows

  // model buffers
  cl::Mem stages, trees, nodes, stumps, leaves, features, subsets;

  // geometry-dependent device buffers (shared by all slots: one in-order queue)
  std::shared_ptr<const PyramidGeometry> geom;
  int frame_w = 0, frame_h = 0, frame_bpp = 0;
  bool geom_dirty = true;
  cl::Mem src, levels, xtab, ytab, xfirst, yfirst, row_map, diag_map, colblock_map, seg_map, wrow_map;
  cl::Mem sum, sqsum, tilted, list, counters, fofs;
  int ndiag = 0, ncolblocks = 0, nsegs = 0, nwrows = 0, nrowgroups = 0;
  size_t src_size = 0;
  bool args_bound = false;           // kernel arguments set for this geometry and args_format
  PixelFormat args_format = PixelFormat::Gray8;

  std::vector<Slot> slots;
  uint64_t host_syncs = 0;
  Detector::HostTimes host_times;
  std::shared_ptr<cl::HostAllocator> host_alloc; // page-locked frame memory, made on first use
  // Uploads on a queue of their own, so that a frame's upload runs while the
  // frame before it is computed; each slot then has its own device frame.
  // upload_mode: 0 never, 1 every frame, 2 (GPU schedule) when a frame
  // before is still on the device at submit (a driver that resolves waits
  // across queues lazily needs a flush when the upload is done, which costs
  // the host ~25 us a frame: worth it only when there is compute to overlap).
  cl::Queue upload_queue;
  int upload_mode = 0;
  int read_prefix = 1023;            // hits read back with the frame (the rest in collect())

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

  cl::Error buffer (cl::Mem *m, size_t size, cl_mem_flags flags = CL_MEM_READ_WRITE, const void *init = nullptr) {
    cl_int st = CL_SUCCESS;
    size = std::max<size_t> (size, 16);
    m->reset (clCreateBuffer (dev.context.get (), flags | (init ? CL_MEM_COPY_HOST_PTR : 0), size,
                              const_cast<void *> (init), &st));
    if (st != CL_SUCCESS)
      return {"cannot allocate " + std::to_string (size) + " bytes on " + dev.info.name + ": " +
              cl::status_to_string (st)};
    return {};
  }

  template <typename T> cl::Error upload_vec (cl::Mem *m, const std::vector<T> &v) {
    if (v.empty ()) {
      static const uint32_t zero[4] = {};
      return buffer (m, 16, CL_MEM_READ_ONLY, zero);
    }
    return buffer (m, v.size () * sizeof (T), CL_MEM_READ_ONLY, v.data ());
  }

  cl::Error build () {
    const bool haar = model.feature_type == CascadeModel::FeatureType::Haar;
    const char *sched = std::getenv ("GPUDETECT_SCHEDULE");
    if (sched && std::string (sched) == "gpu")
      gpu_schedule = true;
    else if (sched && std::string (sched) == "cpu")
      gpu_schedule = false;
    else
      gpu_schedule = (dev.info.type & CL_DEVICE_TYPE_GPU) || (dev.info.type & CL_DEVICE_TYPE_ACCELERATOR);
    rows_wg = std::min<size_t> (256, dev.info.max_work_group);
    size_t p2 = 1;
    while (p2 * 2 <= rows_wg)
      p2 *= 2;
    rows_wg = p2;
    // pyramid_rows stages each pass in local memory (GPUDETECT_ROWS_STAGED=0:
    // lanes keep their runs in registers, with one pixel per lane and one row
    // per work-group when there are squared sums: tuning knob)
    int rows_staged = 1;
    if (const char *c = std::getenv ("GPUDETECT_ROWS_STAGED"))
      rows_staged = std::atoi (c) != 0;
    rows_rk = haar && !rows_staged ? 1 : 8;
    if (const char *c = std::getenv ("GPUDETECT_ROWS_RK"); c && rows_staged && std::atoi (c) > 0)
      rows_rk = std::atoi (c); // tuning knob: pixels per lane and pass
    rows_packed = !haar || rows_staged;
    std::string opts = "-cl-std=CL1.2 -D WG=" + std::to_string (rows_wg) + " -D RK=" + std::to_string (rows_rk) +
                       " -D ROWS_STAGED=" + std::to_string (rows_staged);
    opts += haar ? " -D FEATURE_HAAR -D HAVE_SQSUM" : " -D FEATURE_LBP";
    opts += " -D MAX_NODES=" + std::to_string (model.max_nodes_per_tree);
    opts += " -D WIN_W=" + std::to_string (model.window_width) + " -D WIN_H=" + std::to_string (model.window_height);
    if (dev.info.fp64)
      opts += " -D HAVE_FP64";
    if (model.has_tilted)
      opts += " -D HAVE_TILTED";
    // Windows per work-group step of cascade_list: its local memory holds an
    // offset (and for Haar a normalisation factor) and two list entries each.
    // LBP 1024 (H100, 1080p: `later` 0.175-0.181 to 0.171-0.177 ms; Haar
    // default went the other way, 0.737-0.961 to 0.772-0.975 ms).
    size_t chunk = haar ? 512 : 1024;
    if (const char *c = std::getenv ("GPUDETECT_LIST_CHUNK"); c && std::atoi (c) >= 256)
      chunk = static_cast<size_t> (std::atoi (c)); // tuning knob
    const size_t per_window = (haar ? 8 : 4) + 4, fixed = 256 * 8 + 64;
    while (chunk > 256 && chunk * per_window + fixed > std::min<cl_ulong> (dev.info.local_mem, 32 * 1024))
      chunk /= 2;
    if (gpu_schedule && (rows_wg < 256 || chunk * per_window + fixed > dev.info.local_mem))
      gpu_schedule = false; // too small for the GPU schedule's work-groups
    // CPU: a load of a precomputed offset costs less than its arithmetic; GPUs
    // are bound by loads (GPUDETECT_FOFS=0/1 overrides: tuning knob).
    const char *fofs_env = std::getenv ("GPUDETECT_FOFS");
    const bool use_fofs = fofs_env ? std::atoi (fofs_env) != 0 : !gpu_schedule;
    if (use_fofs)
      opts += " -D USE_FOFS";
    // LBP stump models on the GPU schedule: each tree's feature copied into
    // tree order, so that a lane loads a tree's stump and feature at once
    // instead of one after the other (H100, 1080p: LBP-improved `later` 0.338
    // to 0.327 ms; haar-frontalface-default's stumps 1.115 to 1.167 ms, so not
    // for Haar).  GPUDETECT_FEATURES_BY_TREE=0|1: tuning knob (stump models).
    features_by_tree = gpu_schedule && !haar;
    if (const char *c = std::getenv ("GPUDETECT_FEATURES_BY_TREE"))
      features_by_tree = std::atoi (c) != 0;
    features_by_tree = features_by_tree && !use_fofs && model.max_nodes_per_tree == 1;
    if (features_by_tree)
      opts += " -D FEATURES_BY_TREE";
    // The GPU schedule keeps the sum plane modulo 2^16 (NARROW_SUM): the
    // cascade kernels' loads, scattered as they are, then move half the
    // bytes.  The corners of a rectangle of at most 257 pixels still give its
    // exact sum (every LBP block of OpenCV's LBP cascades; all but 75 of
    // haar-frontalface-default's 6383 rectangles), larger ones are summed in
    // bands, the squared sums stay 32-bit.  Not for tilted features (their
    // plane stays 32-bit, and the kernels choose no plane per rectangle), nor
    // on the CPU schedule, whose vector stages load 32-bit lanes.
    // GPUDETECT_NARROW_SUM=0|1: tuning knob.
    bool narrow_fits = true;
    for (const CascadeModel::LbpFeature &f : model.lbp_features)
      narrow_fits = narrow_fits && f.w * f.h <= 257;
    for (const CascadeModel::HaarFeature &f : model.haar_features)
      for (const CascadeModel::HaarRect &r : f.rect)
        narrow_fits = narrow_fits && r.w <= 257 && narrow_band_height (r.w, r.h) < 256; // 8 bits each
    narrow_fits = narrow_fits && model.window_width - 2 <= 257 && !model.has_tilted;
    narrow_sum = gpu_schedule;
    if (const char *c = std::getenv ("GPUDETECT_NARROW_SUM"))
      narrow_sum = std::atoi (c) != 0;
    narrow_sum = narrow_sum && gpu_schedule && narrow_fits;
    if (narrow_sum)
      opts += " -D NARROW_SUM";
    opts += " -D LIST_CHUNK=" + std::to_string (chunk);
    // cascade_list's lanes per window when few windows remain (tuning knobs)
    if (const char *c = std::getenv ("GPUDETECT_LIST_MAXG"); c && std::atoi (c) > 0)
      opts += " -D LIST_MAXG=" + std::to_string (std::atoi (c));
    if (const char *c = std::getenv ("GPUDETECT_LIST_FILL"); c && std::atoi (c) > 0)
      opts += " -D LIST_FILL=" + std::to_string (std::atoi (c));
    // cascade_list's trees evaluated together per lane (their loads in flight
    // at once): 4 for LBP models (H100, 1080p: `later` 0.351 to 0.337 ms; 2
    // the same as 1, 8 in between), 2 for Haar models (haar-frontalface-default
    // 1.145 to 1.116 ms, alt2 1.005 to 0.991 ms; 4 the same as 1).
    // GPUDETECT_LIST_UNROLL: tuning knob.  CPUs: 1 (cascade_rows shares the
    // code; not measured there).
    int list_unroll = haar ? 2 : 4;
    if (const char *c = std::getenv ("GPUDETECT_LIST_UNROLL"); c && std::atoi (c) > 0)
      list_unroll = std::atoi (c);
    opts += " -D LIST_UNROLL=" + std::to_string (gpu_schedule ? list_unroll : 1);
    // NVIDIA GPUs: cascade_first's scans through warp votes and shuffles
    // (inline PTX) instead of local memory and two barriers per step
    // (kernels/warp.cl; H100, 1080p: `first` 0.152 to 0.141 ms for LBP-improved,
    // 0.219 to 0.188 ms for haar-frontalface-default).  GPUDETECT_WARP_PTX=0|1:
    // tuning knob.
    // (NVIDIA's own OpenCL platform: another implementation on an NVIDIA GPU
    // need not take PTX, and a build that fails with it is retried without.)
    bool warp_ptx = gpu_schedule && dev.info.platform_name.find ("NVIDIA") != std::string::npos;
    if (const char *c = std::getenv ("GPUDETECT_WARP_PTX"))
      warp_ptx = gpu_schedule && std::atoi (c) != 0;
    if (warp_ptx)
      opts += " -D WARP_PTX";
    // cascade_list keeps a stage's survivors in order by groups of 32 lanes
    // (H100, 1080p: `later` 0.273 to 0.261 ms for LBP-improved, 1.004 to 0.951
    // ms for haar-frontalface-default).  GPUDETECT_LIST_ORDERED=0|1: tuning knob.
    if (const char *c = std::getenv ("GPUDETECT_LIST_ORDERED"))
      opts += std::string (" -D LIST_ORDERED=") + (std::atoi (c) != 0 ? "1" : "0");
    // Extra OpenCL build options (developers: e.g. -cl-nv-verbose; the tests use
    // it to check how a kernel build failure is reported).
    if (const char *extra = std::getenv ("GPUDETECT_BUILD_OPTIONS"))
      opts += std::string (" ") + extra;
    int groups_per_cu = 8;
    if (const char *c = std::getenv ("GPUDETECT_LIST_GROUPS"); c && std::atoi (c) > 0)
      groups_per_cu = std::atoi (c); // tuning knob: persistent work-groups per compute unit
    list_groups = static_cast<size_t> (std::max<cl_uint> (dev.info.compute_units, 1)) * groups_per_cu;
    // The first stages as generated code.  GPUs: cascade_first runs the first
    // of them over every window passing stage 0, gathered WGF at a time
    // (GPUDETECT_FIRST_STAGES; default 2, but 1 for LBP where the scans go
    // through local memory: on an H100 at 1080p, stage 1 there made alt2 11 %
    // faster and LBP-improved 5 % slower with those scans, and LBP-improved
    // 2-3 % faster with the warp votes; a third stage took haar-frontalface-
    // default's 1080p-crowd from 1.40 to 1.35 ms but alt2's from 1.31 to
    // 1.53 ms, docs/benchmarks.md); cascade_list reads the later stages from
    // memory.
    // GPUDETECT_LIST_SPEC_TREES=N generates the stages within N trees, which
    // cascade_list then runs as code where one lane takes a window: on an H100
    // that made both kernels slower for all three face models (LBP-improved
    // `later` 0.35 to 0.57 ms, Haar default `first` 0.24 to 0.60 ms), so the
    // default is 0: only cascade_first's.  CPUs: Haar models up to 256 trees
    // (2.4x faster on PoCL for frontalface_alt2's small trees, 1.3x for
    // frontalface_default's stumps; a few seconds to build, once, thanks to the
    // binary cache); LBP stage 0 (its stump models run vector stages, below).
    // GPUDETECT_SPEC_TREES: the stages within this many trees instead (tuning
    // knobs).
    int spec_trees = haar ? 256 : 1, first = -1;
    if (gpu_schedule) {
      first = haar || warp_ptx ? 2 : 1;
      if (const char *c = std::getenv ("GPUDETECT_FIRST_STAGES"); c && std::atoi (c) > 0)
        first = std::atoi (c);
      int first_trees = 0;
      for (int si = 0; si < first && si < static_cast<int> (model.stages.size ()); si++)
        first_trees += model.stages[si].ntrees;
      int list_trees = 0;
      if (const char *c = std::getenv ("GPUDETECT_LIST_SPEC_TREES"); c && std::atoi (c) >= 0)
        list_trees = std::atoi (c);
      spec_trees = std::max (first_trees, list_trees);
    }
    if (const char *c = std::getenv ("GPUDETECT_SPEC_TREES"); c && std::atoi (c) >= 0)
      spec_trees = std::atoi (c);
    // GPUDETECT_UPLOAD_QUEUE=0|1|2: uploads on a second queue never, always,
    // or when the device is busy (tuning knob; 2 on the GPU schedule)
    upload_mode = gpu_schedule ? 2 : 0;
    if (const char *c = std::getenv ("GPUDETECT_UPLOAD_QUEUE"))
      upload_mode = std::clamp (std::atoi (c), 0, 2);
    if (upload_mode != 0) {
      cl_int st = CL_SUCCESS;
      upload_queue.reset (
          clCreateCommandQueue (dev.context.get (), dev.info.id, cfg.profile ? CL_QUEUE_PROFILING_ENABLE : 0, &st));
      GPUDETECT_CL_TRY (st);
    }
    // Hits read back with each frame (4 KB with the count); a frame with more
    // reads the rest when it is collected, one more sync.
    // GPUDETECT_READ_PREFIX=N (0: the whole capacity): tuning knob.
    if (const char *c = std::getenv ("GPUDETECT_READ_PREFIX"); c && std::atoi (c) >= 0)
      read_prefix = std::atoi (c) > 0 ? std::atoi (c) : cfg.hit_capacity;
    seg_windows = 256;
    if (const char *c = std::getenv ("GPUDETECT_SEG_WINDOWS"); c && std::atoi (c) > 0)
      seg_windows = std::atoi (c); // tuning knob: windows per work-group of cascade_first
    const GeneratedStages gen = generate_stages (model, spec_trees, first, narrow_sum);
    // CPUs, LBP stump models and Haar models without tilted features: the
    // first stages over 16 windows at once.  LBP: 3 stages; Haar: the stages
    // within the first 100 trees, e.g. 4 of haar-frontalface-default, 6 of
    // alt2 (measured on PoCL).  GPUDETECT_VEC_STAGES: how many; 0 turns it
    // off (tuning knob).
    int vec_stages = haar ? stages_within_trees (model, 100) : 3;
    if (const char *c = std::getenv ("GPUDETECT_VEC_STAGES"); c && std::atoi (c) >= 0)
      vec_stages = std::atoi (c);
    const GeneratedStages vec = generate_vector_stages (model, gpu_schedule ? 0 : vec_stages);
    std::string source = std::string (kernels::warp_source) + "\n" + kernels::pyramid_source + "\n" +
                         kernels::cascade_types_source + "\n" +
                         kernels::cascade_eval_source + "\n" + gen.source + "\n" + vec.source + "\n" +
                         kernels::cascade_source;
    uint64_t hash = kernels::warp_hash;
    for (uint64_t h :
         {kernels::pyramid_hash, kernels::cascade_types_hash, kernels::cascade_eval_hash, kernels::cascade_hash})
      hash = cl::fnv1a (&h, sizeof h, hash);
    hash = cl::fnv1a (gen.source.data (), gen.source.size (), hash);
    hash = cl::fnv1a (vec.source.data (), vec.source.size (), hash);
    // NVIDIA GPUs: register limits written into the PTX (the driver ignores
    // -cl-nv-maxrregcount), so that 5 work-groups of 256 fit an SM instead of 4
    // (H100, 1080p, docs/results/tune-ptx-regs-h100.txt): cascade_first 48 for
    // every model (`first` 0.179-0.180 to 0.170-0.171 ms for LBP-improved,
    // 0.175 to 0.159 ms for alt2, 0.188 to 0.184 ms for Haar default; LBP frontal
    // face 0.141-0.142 to 0.142-0.144 ms), cascade_list 48 for Haar stump models
    // (haar-frontalface-default `later` 0.956 to 0.928-0.930 ms; LBP's went from
    // 0.171 to 0.192 ms and alt2's trees from 0.933 to 0.939 ms, so not theirs).
    // With a third stage in cascade_first, 48 registers made it slower (Haar
    // default 0.340 to 0.626 ms), so the limit is for up to 2 stages.
    // GPUDETECT_PTX_REGS="kernel=N,..." (empty: none): tuning knob.
    std::string ptx_regs;
    if (warp_ptx) {
      std::vector<std::string> limits;
      if (first <= 2)
        limits.push_back ("cascade_first=48");
      if (haar && model.max_nodes_per_tree == 1)
        limits.push_back ("cascade_list=48");
      for (const std::string &l : limits)
        ptx_regs += (ptx_regs.empty () ? "" : ",") + l;
      if (const char *c = std::getenv ("GPUDETECT_PTX_REGS"))
        ptx_regs = c;
    }
    cl::Error built = cl::build_program (dev, source, hash, opts, &program, &from_cache, ptx_regs);
    if (built && warp_ptx) {
      const std::string flag = " -D WARP_PTX";
      opts.erase (opts.find (flag), flag.size ());
      built = cl::build_program (dev, source, hash, opts, &program, &from_cache);
    }
    if (built)
      return built;
    std::vector<std::pair<cl::Kernel *, const char *>> ks = {
        {&k_rows, gpu_schedule ? "pyramid_rows" : "pyramid_rows_seq"},
        {&k_cols, gpu_schedule ? "integral_cols_blocked" : "integral_cols_rows"},
        {&k_tilt_a, "tilted_anti"}, {&k_tilt_b, "tilted_diag"}};
    if (gpu_schedule) {
      ks.push_back ({&k_first, "cascade_first"});
      ks.push_back ({&k_list, "cascade_list"});
    } else {
      ks.push_back ({&k_rows_cascade, "cascade_rows"});
    }
    for (const auto &[k, name] : ks)
      if (cl::Error e = cl::create_kernel (program, name, k))
        return e;
    return {};
  }

  cl::Error upload_model () {
    std::vector<DevStage> st;
    for (const CascadeModel::Stage &s : model.stages)
      st.push_back ({s.first_tree, s.ntrees, s.threshold, 0});
    std::vector<DevTree> tr;
    for (const CascadeModel::Tree &t : model.trees)
      tr.push_back ({t.first_node, t.node_count, t.first_leaf, 0});
    std::vector<DevNode> nd;
    std::vector<uint32_t> sub;
    for (const CascadeModel::Node &n : model.nodes) {
      nd.push_back ({n.left, n.right, n.feature, n.threshold});
      if (model.feature_type == CascadeModel::FeatureType::Lbp)
        sub.insert (sub.end (), n.subset, n.subset + 8);
    }
    if (cl::Error e = upload_vec (&stages, st)) return e;
    if (cl::Error e = upload_vec (&trees, tr)) return e;
    if (cl::Error e = upload_vec (&nodes, nd)) return e;
    // Stump models: one record per tree (node threshold and both leaves).
    std::vector<DevStump> sp;
    if (model.max_nodes_per_tree == 1)
      for (const CascadeModel::Tree &t : model.trees) {
        const CascadeModel::Node &n = model.nodes[t.first_node];
        sp.push_back ({n.feature, n.threshold, model.leaves[t.first_leaf - n.left],
                       model.leaves[t.first_leaf - n.right]});
      }
    if (cl::Error e = upload_vec (&stumps, sp)) return e;
    if (cl::Error e = upload_vec (&leaves, model.leaves)) return e;
    if (cl::Error e = upload_vec (&subsets, sub)) return e;
    // the features in the model's order, or in tree order (one per stump)
    std::vector<int> order;
    if (features_by_tree) {
      for (const CascadeModel::Tree &t : model.trees)
        order.push_back (model.nodes[t.first_node].feature);
    } else {
      order.resize (model.feature_type == CascadeModel::FeatureType::Haar ? model.haar_features.size ()
                                                                          : model.lbp_features.size ());
      std::iota (order.begin (), order.end (), 0);
    }
    if (model.feature_type == CascadeModel::FeatureType::Haar) {
      std::vector<DevHaarFeature> f;
      for (int fi : order) {
        const CascadeModel::HaarFeature &h = model.haar_features[fi];
        DevHaarFeature d{};
        for (int i = 0; i < 3; i++) {
          d.r[i][0] = h.rect[i].x, d.r[i][1] = h.rect[i].y, d.r[i][2] = h.rect[i].w, d.r[i][3] = h.rect[i].h;
          d.w[i] = h.rect[i].weight;
        }
        d.w[3] = h.tilted ? 1.f : 0.f;
        if (narrow_sum) { // the rectangles' band heights (kernels/cascade_eval.cl, rect_sum_n)
          int32_t hb = 0;
          for (int i = 0; i < 3; i++)
            hb |= narrow_band_height (h.rect[i].w, h.rect[i].h) << (8 * i);
          std::memcpy (&d.w[3], &hb, sizeof hb);
        }
        f.push_back (d);
      }
      return upload_vec (&features, f);
    }
    std::vector<cl_int4> f;
    for (int fi : order) {
      const CascadeModel::LbpFeature &l = model.lbp_features[fi];
      f.push_back ({{l.x, l.y, l.w, l.h}});
    }
    return upload_vec (&features, f);
  }

  cl::Error ensure_geometry (int w, int h, int bpp) {
    if (!geom_dirty && geom && w == frame_w && h == frame_h && bpp == frame_bpp)
      return {};
    // Every slot's work must be done before shared buffers are replaced.
    host_syncs++;
    if (upload_queue)
      GPUDETECT_CL_TRY (clFinish (upload_queue.get ()));
    GPUDETECT_CL_TRY (clFinish (dev.queue.get ()));
    auto g = std::make_shared<PyramidGeometry> (plan_pyramid (
        w, h, model.window_width, model.window_height, cfg.scale_factor, cfg.min_size, cfg.max_size));
    std::vector<cl_int8> lv;
    for (const PyramidLevel &l : g->levels)
      lv.push_back ({{l.x0, l.y0, l.width, l.height, l.nx, l.ny, l.step, l.first_window}});
    std::vector<int32_t> diag;
    for (size_t li = 0; li < g->levels.size (); li++)
      for (int k = 0; k <= g->levels[li].width + g->levels[li].height; k++)
        diag.push_back (static_cast<int32_t> (li) | (k << 10));
    ndiag = model.has_tilted ? static_cast<int> (diag.size ()) : 0;
    std::vector<int32_t> colblocks, wrows, rowgroups;
    std::vector<cl_int2> segs; // cascade_first: (level | nrows << 10, first row)
    if (h >= (1 << 17))
      return {"frames of " + std::to_string (h) + " rows are not supported (at most 131071)"};
    for (size_t li = 0; li < g->levels.size (); li++) {
      const PyramidLevel &l = g->levels[li];
      const int32_t lv = static_cast<int32_t> (li);
      // pyramid_rows (GPU schedule): 2^sh lanes per row, rows_wg >> sh rows per work-group
      int sh = 3;
      while ((1 << sh) < static_cast<int> (rows_wg) && ((1 << sh) * rows_rk < l.width || !rows_packed))
        sh++;
      for (int y = 0; y < l.height; y += static_cast<int> (rows_wg) >> sh)
        rowgroups.push_back (lv | (y << 10) | (sh << 27));
      for (int b = 0; b * 32 <= l.width; b++)
        colblocks.push_back (lv | (b << 10));
      // A segment is one row of windows, or as many rows as hold seg_windows.
      const int rows_per_seg = l.nx > 0 ? std::max (1, seg_windows / l.nx) : 1;
      for (int iy = 0; iy < l.ny; iy += rows_per_seg)
        segs.push_back ({{lv | (std::min (rows_per_seg, l.ny - iy) << 10), iy}});
      for (int iy = 0; iy < l.ny; iy++)
        wrows.push_back (lv | (iy << 10));
    }
    ncolblocks = static_cast<int> (colblocks.size ());
    nrowgroups = static_cast<int> (rowgroups.size ());
    nsegs = static_cast<int> (segs.size ());
    nwrows = static_cast<int> (wrows.size ());
    src_size = static_cast<size_t> (w) * h * bpp;
    if (cl::Error e = buffer (&src, src_size, CL_MEM_READ_ONLY)) return e;
    const size_t plane = static_cast<size_t> (std::max (g->rows, 1)) * std::max (g->stride, 1) * sizeof (cl_uint);
    const bool haar = model.feature_type == CascadeModel::FeatureType::Haar;
    if (cl::Error e = upload_vec (&levels, lv)) return e;
    if (cl::Error e = upload_vec (&xtab, g->xtab)) return e;
    if (cl::Error e = upload_vec (&ytab, g->ytab)) return e;
    if (cl::Error e = upload_vec (&xfirst, g->xtab_first)) return e;
    if (cl::Error e = upload_vec (&yfirst, g->ytab_first)) return e;
    if (cl::Error e = upload_vec (&row_map, gpu_schedule ? rowgroups : g->row_map)) return e;
    if (cl::Error e = upload_vec (&diag_map, model.has_tilted ? diag : std::vector<int32_t> ())) return e;
    if (cl::Error e = upload_vec (&colblock_map, colblocks)) return e;
    if (cl::Error e = upload_vec (&seg_map, segs)) return e;
    if (cl::Error e = upload_vec (&wrow_map, wrows)) return e;
    // cascade_rows' vector stages' loads for 16 windows reach up to 32 values past the
    // last window's: room for them after the last level (sum, and squared sum for Haar).
    if (cl::Error e = buffer (&sum, (narrow_sum ? plane / 2 : plane) + 64 * sizeof (cl_uint))) return e;
    if (cl::Error e = buffer (&sqsum, haar ? plane + 64 * sizeof (cl_uint) : 16)) return e;
    if (cl::Error e = buffer (&tilted, model.has_tilted ? plane : 16)) return e;
    // the list: (window index, integral offset) pairs
    if (cl::Error e = buffer (&list, gpu_schedule ? static_cast<size_t> (g->total_windows) * 8 : 16)) return e;
    if (cl::Error e = buffer (&counters, 4 * sizeof (cl_uint))) return e;
    if (cl::Error e = upload_vec (&fofs, feature_offsets (g->stride))) return e;
    geom = std::move (g);
    args_bound = false;
    frame_w = w, frame_h = h, frame_bpp = bpp;
    geom_dirty = false;
    return {};
  }

  // Corner offsets of every feature for a row stride, as OpenCV's setOffsets:
  // Haar 3 rectangles x 4 corners (tilted ones in the tilted plane), LBP the
  // 4x4 grid of integral points.
  std::vector<cl_int> feature_offsets (int s) const {
    std::vector<cl_int> o;
    if (model.feature_type == CascadeModel::FeatureType::Lbp) {
      for (const CascadeModel::LbpFeature &f : model.lbp_features)
        for (int j = 0; j < 4; j++)
          for (int i = 0; i < 4; i++)
            o.push_back (f.x + i * f.w + s * (f.y + j * f.h));
      return o;
    }
    for (const CascadeModel::HaarFeature &f : model.haar_features)
      for (const CascadeModel::HaarRect &r : f.rect) {
        if (f.tilted) {
          o.insert (o.end (), {r.x + s * r.y, r.x - r.h + s * (r.y + r.h), r.x + r.w + s * (r.y + r.w),
                               r.x + r.w - r.h + s * (r.y + r.w + r.h)});
        } else {
          o.insert (o.end (), {r.x + s * r.y, r.x + r.w + s * r.y, r.x + s * (r.y + r.h), r.x + r.w + s * (r.y + r.h)});
        }
      }
    return o;
  }

  cl::Error map_pinned (cl::Mem *m, size_t size, void **ptr) {
    if (cl::Error e = buffer (m, size, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR))
      return e;
    cl_int st = CL_SUCCESS;
    host_syncs++;
    *ptr = clEnqueueMapBuffer (dev.queue.get (), m->get (), CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, size, 0,
                               nullptr, nullptr, &st);
    GPUDETECT_CL_TRY (st);
    return {};
  }

  cl::Error prepare_slot (Slot &s, size_t staging) {
    if (upload_queue && s.src_size < src_size) {
      if (cl::Error e = buffer (&s.src, src_size, CL_MEM_READ_ONLY))
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
    if (!s.hits)
      if (cl::Error e = buffer (&s.hits, (1 + static_cast<size_t> (cfg.hit_capacity)) * sizeof (cl_uint)))
        return e;
    if (!s.result_ptr) {
      void *p = nullptr;
      if (cl::Error e = map_pinned (&s.result, (1 + static_cast<size_t> (cfg.hit_capacity)) * sizeof (cl_uint), &p))
        return e;
      s.result_ptr = static_cast<uint32_t *> (p);
    }
    return {};
  }

  // Enqueues a kernel on the compute queue, after `wait` when given.
  cl::Error launch (cl_kernel k, size_t global, size_t local, Slot &s, Cmd c, cl_event wait = nullptr) {
    cl_event *ev = cfg.profile ? s.events[c].out () : nullptr;
    GPUDETECT_CL_TRY (clEnqueueNDRangeKernel (dev.queue.get (), k, 1, nullptr, &global, local ? &local : nullptr,
                                              wait ? 1 : 0, wait ? &wait : nullptr, ev));
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

  // The hits buffer's argument index in the kernel that resets its count and
  // in the one that appends to it (the order of bind_args' lists); enqueue()
  // sets it to the frame's slot.
  static constexpr cl_uint kRowsHitsArg = 14, kRowsSeqHitsArg = 15, kListHitsArg = 15, kRowsCascadeHitsArg = 16;

  // Sets every kernel's arguments: they change only with the geometry (all
  // buffers but the frame's source and hits are shared by the slots) and the
  // pixel format.
  cl::Error bind_args (PixelFormat format, const cl::Mem &hits) {
    const PyramidGeometry &g = *geom;
    const int bpp = bytes_per_pixel (format);
    const cl_int stride = g.stride, src_stride = g.image_width * bpp, src_bpp = bpp;
    const cl_int cap = cfg.hit_capacity, nstages = static_cast<cl_int> (model.stages.size ());
    const cl_int4 rgb = rgb_offsets (format);
    const cl::Mem &tilt = model.has_tilted ? tilted : sum;
    if (gpu_schedule) {
      GPUDETECT_CL_TRY (cl::set_args (k_rows.get (), src, src_stride, src_bpp, rgb, levels, xtab, ytab, xfirst, yfirst,
                                      row_map, sum, sqsum, stride, counters, hits));
      GPUDETECT_CL_TRY (cl::set_args (k_cols.get (), levels, colblock_map, sum, sqsum, stride));
      GPUDETECT_CL_TRY (cl::set_args (k_first.get (), levels, seg_map, sum, sqsum, tilt, stride, stages, nstages, trees,
                                      nodes, stumps, leaves, features, fofs, subsets, list, counters));
      GPUDETECT_CL_TRY (cl::set_args (k_list.get (), sum, sqsum, tilt, stride, stages, nstages, trees,
                                      nodes, stumps, leaves, features, fofs, subsets, list, counters, hits,
                                      static_cast<cl_uint> (cap)));
    } else {
      const cl_int nrows = g.total_rows, nb = ncolblocks, nw = nwrows;
      GPUDETECT_CL_TRY (cl::set_args (k_rows.get (), src, src_stride, src_bpp, rgb, levels, xtab, ytab, xfirst, yfirst,
                                      row_map, nrows, sum, sqsum, stride, counters, hits));
      GPUDETECT_CL_TRY (cl::set_args (k_cols.get (), levels, colblock_map, nb, sum, sqsum, stride));
      GPUDETECT_CL_TRY (cl::set_args (k_rows_cascade.get (), levels, wrow_map, nw, sum, sqsum, tilt, stride, stages,
                                      nstages, trees, nodes, stumps, leaves, features, fofs, subsets, hits,
                                      static_cast<cl_uint> (cap)));
    }
    if (model.has_tilted)
      for (cl_kernel k : {k_tilt_a.get (), k_tilt_b.get ()})
        GPUDETECT_CL_TRY (cl::set_args (k, levels, diag_map, ndiag, sum, tilted, stride));
    args_format = format;
    args_bound = true;
    return {};
  }

  // Whether another slot's frame is still on the device.
  bool device_busy (const Slot &s) const {
    for (const Slot &t : slots)
      if (&t != &s && t.busy && !t.done ())
        return true;
    return false;
  }

  cl::Error enqueue (const Frame &f, Slot &s) {
    const PyramidGeometry &g = *geom;
    const size_t row = static_cast<size_t> (f.width) * bytes_per_pixel (f.format);
    for (cl::Event &e : s.events)
      e.reset ();
    GPUDETECT_CL_TRY (cl::set_arg (k_rows.get (), gpu_schedule ? kRowsHitsArg : kRowsSeqHitsArg, s.hits));
    GPUDETECT_CL_TRY (gpu_schedule ? cl::set_arg (k_list.get (), kListHitsArg, s.hits)
                                   : cl::set_arg (k_rows_cascade.get (), kRowsCascadeHitsArg, s.hits));
    s.seen_done = false;
    // the upload on the second queue, overlapping the frame before
    const bool overlap = upload_queue && (upload_mode == 1 || device_busy (s));
    cl_event *up = cfg.profile || overlap ? s.events[kUpload].out () : nullptr;
    cl_command_queue uq = overlap ? upload_queue.get () : dev.queue.get ();
    const cl::Mem &dsrc = upload_queue ? s.src : src;
    if (upload_queue)
      GPUDETECT_CL_TRY (cl::set_arg (k_rows.get (), 0, dsrc));
    if (cfg.direct_upload) {
      // Straight from the caller's memory, which stays valid until collect().
      const size_t origin[3] = {0, 0, 0}, region[3] = {row, static_cast<size_t> (f.height), 1};
      if (static_cast<size_t> (f.stride) == row)
        GPUDETECT_CL_TRY (clEnqueueWriteBuffer (uq, dsrc.get (), CL_FALSE, 0, row * f.height, f.data, 0, nullptr, up));
      else
        GPUDETECT_CL_TRY (clEnqueueWriteBufferRect (uq, dsrc.get (), CL_FALSE, origin, origin, region, row, 0,
                                                    static_cast<size_t> (f.stride), 0, f.data, 0, nullptr, up));
    } else {
      uint8_t *dst = static_cast<uint8_t *> (s.staging_ptr);
      const auto t0 = std::chrono::steady_clock::now ();
      for (int y = 0; y < f.height; y++)
        std::memcpy (dst + y * row, f.data + static_cast<size_t> (y) * f.stride, row);
      host_times.copy_us +=
          std::chrono::duration<double, std::micro> (std::chrono::steady_clock::now () - t0).count ();
      GPUDETECT_CL_TRY (clEnqueueWriteBuffer (uq, dsrc.get (), CL_FALSE, 0, src_size, s.staging_ptr, 0, nullptr, up));
    }
    const cl_event uploaded = overlap ? s.events[kUpload].get () : nullptr;
    if (overlap)
      GPUDETECT_CL_TRY (clFlush (uq));
    const int nlevels = static_cast<int> (g.levels.size ());
    if (nlevels > 0) {
      const int nwin = g.total_windows;
      if (gpu_schedule) {
        if (cl::Error e = launch (k_rows.get (), static_cast<size_t> (nrowgroups) * rows_wg, rows_wg, s, kRows, uploaded))
          return e;
      } else {
        if (cl::Error e = launch (k_rows.get (), round_up (g.total_rows, 16), 16, s, kRows, uploaded))
          return e;
      }
      if (model.has_tilted) {
        for (auto [k, c] : {std::pair (k_tilt_a.get (), kTiltA), std::pair (k_tilt_b.get (), kTiltB)})
          if (cl::Error e = launch (k, round_up (ndiag, 64), 64, s, c))
            return e;
      }
      if (gpu_schedule) {
        if (cl::Error e = launch (k_cols.get (), static_cast<size_t> (ncolblocks) * 256, 256, s, kCols))
          return e;
        if (nwin > 0) {
          if (cl::Error e = launch (k_first.get (), static_cast<size_t> (nsegs) * 256, 256, s, kFirst))
            return e;
          if (cl::Error e = launch (k_list.get (), list_groups * 256, 256, s, kRest))
            return e;
        }
      } else {
        if (cl::Error e = launch (k_cols.get (), round_up (ncolblocks, 8), 8, s, kCols))
          return e;
        if (nwin > 0)
          if (cl::Error e = launch (k_rows_cascade.get (), round_up (nwrows, 8), 8, s, kFirst))
            return e;
      }
    } else {
      s.result_ptr[0] = 0;
    }
    cl_event done = nullptr;
    if (nlevels > 0) {
      // the count and the first read_prefix hits; collect() reads the rest
      // where there are more
      s.read_entries = static_cast<uint32_t> (std::min (cfg.hit_capacity, read_prefix));
      GPUDETECT_CL_TRY (clEnqueueReadBuffer (dev.queue.get (), s.hits.get (), CL_FALSE, 0,
                                             (1 + static_cast<size_t> (s.read_entries)) * sizeof (cl_uint),
                                             s.result_ptr, 0, nullptr, &done));
    } else {
      GPUDETECT_CL_TRY (clEnqueueMarkerWithWaitList (dev.queue.get (), uploaded ? 1 : 0, uploaded ? &uploaded : nullptr,
                                                     &done));
    }
    s.events[kRead].reset (done);
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

  double event_us (const cl::Event &e, cl_ulong *first, cl_ulong *last) const {
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

  void times (const Slot &s, StageTimes *t) const {
    cl_ulong first = ~0ull, last = 0;
    t->upload = event_us (s.events[kUpload], &first, &last);
    t->pyramid = event_us (s.events[kRows], &first, &last);
    t->integral = event_us (s.events[kCols], &first, &last);
    t->tilted = event_us (s.events[kTiltA], &first, &last) + event_us (s.events[kTiltB], &first, &last);
    t->first = event_us (s.events[kFirst], &first, &last);
    t->rest = event_us (s.events[kRest], &first, &last);
    t->readback = event_us (s.events[kRead], &first, &last);
    t->total_device = last > first ? (last - first) / 1000.0 : 0;
    t->launches = 0;
    for (Cmd c : {kRows, kCols, kTiltA, kTiltB, kFirst, kRest})
      t->launches += s.events[c] ? 1 : 0;
  }

  void decode (const Slot &s, FrameResult *out) const {
    const PyramidGeometry &g = *s.geom;
    uint32_t n = s.result_ptr[0];
    out->truncated = n > static_cast<uint32_t> (cfg.hit_capacity);
    n = std::min<uint32_t> (n, cfg.hit_capacity);
    std::vector<uint32_t> idx (n);
    std::memcpy (idx.data (), s.result_ptr + 1, n * sizeof (uint32_t)); // one pass over the mapped memory
    std::sort (idx.begin (), idx.end ());
    out->hits.clear ();
    out->hits.reserve (n);
    for (uint32_t gid : idx) {
      auto it = std::upper_bound (g.levels.begin (), g.levels.end (), static_cast<int> (gid),
                                  [] (int v, const PyramidLevel &l) { return v < l.first_window; });
      if (it == g.levels.begin ())
        continue;
      const PyramidLevel &l = *(it - 1);
      int i = static_cast<int> (gid) - l.first_window;
      RawHit h;
      h.level = static_cast<int> (it - 1 - g.levels.begin ());
      h.x = (i % l.nx) * l.step;
      h.y = (i / l.nx) * l.step;
      h.rect = {static_cast<int> (std::nearbyint (static_cast<float> (h.x) * l.scale)),
                static_cast<int> (std::nearbyint (static_cast<float> (h.y) * l.scale)), l.win_width, l.win_height};
      out->hits.push_back (h);
    }
  }
};

Detector::Detector (std::unique_ptr<Impl> impl) : impl_ (std::move (impl)) {}
Detector::~Detector () = default;

std::unique_ptr<Detector> Detector::create (const DetectorConfig &config, std::string *error, CreateError *kind) {
  CreateError dummy;
  if (!kind)
    kind = &dummy;
  *kind = CreateError::None;
  auto impl = std::make_unique<Impl> ();
  impl->cfg = config;
  impl->cfg.slots = std::clamp (config.slots, 1, 64);
  impl->cfg.hit_capacity = std::clamp (config.hit_capacity, 16, 1 << 24);
  if (const char *u = std::getenv ("GPUDETECT_UPLOAD")) // tuning knob: direct | staging
    impl->cfg.direct_upload = std::string (u) == "direct";
  if (!(config.scale_factor > 1.0)) {
    *error = "scale factor must be greater than 1";
    *kind = CreateError::Config;
    return nullptr;
  }
  std::vector<std::string> tried;
  std::string path = resolve_model (config.model, &tried);
  if (path.empty ()) {
    std::string where;
    for (const std::string &d : model_search_path ())
      where += (where.empty () ? "" : ", ") + d;
    *error = "model '" + config.model + "' not found (searched " + where + ")";
    *kind = CreateError::Model;
    return nullptr;
  }
  if (std::string e = load_cascade_file (path, &impl->model); !e.empty ()) {
    *error = e;
    *kind = CreateError::Model;
    return nullptr;
  }
  if (cl::Error e = cl::open_device (config.device, config.profile, &impl->dev)) {
    *error = e.message;
    *kind = CreateError::Device;
    return nullptr;
  }
  if (cl::Error e = impl->build ()) {
    *error = e.message;
    *kind = CreateError::Build;
    return nullptr;
  }
  if (cl::Error e = impl->upload_model ()) {
    *error = e.message;
    *kind = CreateError::Resource;
    return nullptr;
  }
  impl->slots.resize (impl->cfg.slots);
  return std::unique_ptr<Detector> (new Detector (std::move (impl)));
}

std::string Detector::submit (const Frame &f, int *ticket) {
  Impl &m = *impl_;
  if (!f.data || f.width <= 0 || f.height <= 0 || f.stride < f.width * bytes_per_pixel (f.format))
    return "invalid frame";
  auto it = std::find_if (m.slots.begin (), m.slots.end (), [] (const Slot &s) { return !s.busy; });
  if (it == m.slots.end ())
    return "no free slot";
  const int bpp = bytes_per_pixel (f.format);
  if (cl::Error e = m.ensure_geometry (f.width, f.height, bpp))
    return e.message;
  if (cl::Error e = m.prepare_slot (*it, m.cfg.direct_upload ? 0 : m.src_size))
    return e.message;
  if (!m.args_bound || m.args_format != f.format)
    if (cl::Error e = m.bind_args (f.format, it->hits))
      return e.message;
  const auto t0 = std::chrono::steady_clock::now ();
  const double copy0 = m.host_times.copy_us;
  cl::Error enqueue_error = m.enqueue (f, *it);
  m.host_times.enqueue_us += std::chrono::duration<double, std::micro> (std::chrono::steady_clock::now () - t0).count () -
                             (m.host_times.copy_us - copy0);
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
  cl_event e = s.events[kRead].get ();
  m.host_syncs++;
  const auto t0 = std::chrono::steady_clock::now ();
  cl_int st = clWaitForEvents (1, &e);
  m.host_times.wait_us += std::chrono::duration<double, std::micro> (std::chrono::steady_clock::now () - t0).count ();
  if (st != CL_SUCCESS) {
    // the command's own status says what failed, where the driver reports it
    cl_int exec = CL_COMPLETE;
    clGetEventInfo (e, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof exec, &exec, nullptr);
    return std::string ("device work failed: ") + cl::status_to_string (exec < 0 ? exec : st);
  }
  // More hits than were read with the frame: the rest from the slot's own
  // buffer (on the upload queue where there is one, so as not to wait for
  // frames queued after it).
  if (const uint32_t n = std::min<uint32_t> (s.result_ptr[0], static_cast<uint32_t> (m.cfg.hit_capacity));
      n > s.read_entries) {
    m.host_syncs++;
    const auto t1 = std::chrono::steady_clock::now ();
    cl_command_queue q = m.upload_queue ? m.upload_queue.get () : m.dev.queue.get ();
    st = clEnqueueReadBuffer (q, s.hits.get (), CL_TRUE, (1 + static_cast<size_t> (s.read_entries)) * sizeof (cl_uint),
                              static_cast<size_t> (n - s.read_entries) * sizeof (cl_uint),
                              s.result_ptr + 1 + s.read_entries, 0, nullptr, nullptr);
    m.host_times.wait_us +=
        std::chrono::duration<double, std::micro> (std::chrono::steady_clock::now () - t1).count ();
    if (st != CL_SUCCESS)
      return std::string ("reading the hits back failed: ") + cl::status_to_string (st);
  }
  *out = FrameResult ();
  if (m.cfg.profile)
    m.times (s, &out->times);
  m.decode (s, out);
  const auto g0 = std::chrono::steady_clock::now ();
  std::vector<Rect> raw;
  raw.reserve (out->hits.size ());
  for (const RawHit &h : out->hits)
    raw.push_back (h.rect);
  // Grouped boxes are clipped to the frame, as OpenCV's detectMultiScale does.
  const int fw = s.geom->image_width, fh = s.geom->image_height;
  for (const GroupedRect &g : group_rectangles (raw, m.cfg.min_neighbors)) {
    Rect r = clip_rect (g.rect, fw, fh);
    if (r.width > 0 && r.height > 0)
      out->objects.push_back ({r, g.neighbors, g.confidence, 0});
  }
  out->group_us = std::chrono::duration<double, std::micro> (std::chrono::steady_clock::now () - g0).count ();
  return {};
}

void Detector::discard (int ticket) {
  Slot &s = impl_->slots.at (ticket);
  if (!s.busy)
    return;
  cl_event e = s.events[kRead].get ();
  if (e) {
    const auto t0 = std::chrono::steady_clock::now ();
    clWaitForEvents (1, &e);
    impl_->host_times.wait_us +=
        std::chrono::duration<double, std::micro> (std::chrono::steady_clock::now () - t0).count ();
  }
  s.busy = false;
}

std::string Detector::detect (const Frame &frame, FrameResult *out) {
  int t = -1;
  if (std::string e = submit (frame, &t); !e.empty ())
    return e;
  return collect (t, out);
}

int Detector::free_slots () const {
  return static_cast<int> (std::count_if (impl_->slots.begin (), impl_->slots.end (),
                                          [] (const Slot &s) { return !s.busy; }));
}
int Detector::slots () const { return static_cast<int> (impl_->slots.size ()); }

void Detector::set_search (double scale_factor, Size2 min_size, Size2 max_size) {
  Impl &m = *impl_;
  if (scale_factor > 1.0)
    m.cfg.scale_factor = scale_factor;
  m.cfg.min_size = min_size;
  m.cfg.max_size = max_size;
  m.geom_dirty = true;
}
void Detector::set_min_neighbors (int n) { impl_->cfg.min_neighbors = n; }

const cl::DeviceInfo &Detector::device () const { return impl_->dev.info; }
const CascadeModel &Detector::model () const { return impl_->model; }
const PyramidGeometry *Detector::geometry () const { return impl_->geom.get (); }
bool Detector::built_from_cache () const { return impl_->from_cache; }
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
