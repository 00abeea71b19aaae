// WaldBoost on the device (kernels/waldboost.cl): the integral pyramid, then
// - GPU schedule: the staged reduction, wb_first over every window and one
//   wb_more per further divisor, each stopping once at most 1 / divisor of its
//   windows are undecided and passing them on compacted, and wb_tail for the
//   candidates left (a work-group each, a lane per stage);
// - CPU schedule: wb_rows, every window of a row in order.
// Both give the reference's raw windows (model.h: waldboost_evaluate).
#include "family.h"

#include "core/integral.h"
#include "kernels.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstring>

namespace gpudetect {

namespace {

// Device layout of a stage (must match kernels/waldboost.cl): fixed-point
// sums, and float_sums models' (WB_FLOAT_SUMS).
struct DevStage {
  cl_int4 f;
  cl_long neg, pos;
};
struct DevStageFloat {
  cl_int4 f;
  cl_float neg, pos;
  cl_int pad[2];
};
static_assert (sizeof (DevStage) == 32 && sizeof (DevStageFloat) == 32, "wb_stage_t");
constexpr size_t kItemBytes = 24; // wb_item_t
constexpr int kWg = 256;          // WGF (kernels/compact.cl)
// Default schedule where the model stores none (docs/benchmarks.md).
const std::vector<int> kDefaultDivisors = {8, 4, 4, 4};
constexpr int kDefaultSyncFirst = 4, kDefaultSyncStep = 4;
// A list holds at least this many items (or every window), whatever its
// divisors say: a crowd of faces keeps many windows undecided.
constexpr size_t kMinListItems = 65536;

// The kernels' final threshold: fixed point, or a float for float_sums models
// (set through cl::set_args like any argument).
struct Gamma {
  bool is_float = false;
  cl_long q = 0;
  cl_float f = 0;
};
cl_int set_arg (cl_kernel k, cl_uint i, const Gamma &g) {
  return g.is_float ? clSetKernelArg (k, i, sizeof g.f, &g.f) : clSetKernelArg (k, i, sizeof g.q, &g.q);
}

class WaldBoostFamily final : public Family {
public:
  explicit WaldBoostFamily (WaldBoostModel m) : model_ (std::move (m)) {
    info_.path = model_.path;
    info_.family = "waldboost";
    info_.label = model_.default_label;
    info_.window = {model_.window_width, model_.window_height};
    info_.description = std::string ("WaldBoost MB-LBP") +
                        (model_.format == WaldBoostModel::Format::XObjDetect ? " (OpenCV xobjdetect)" : "") + ", " +
                        std::to_string (model_.stages.size ()) + " stages (" + std::to_string (model_.tail_start ()) +
                        " deciding), window " + std::to_string (model_.window_width) + "x" +
                        std::to_string (model_.window_height);
  }

  const ModelInfo &info () const override { return info_; }
  const char *lost_hint () const override {
    return "a reduction list was full; smaller waldboost-divisors (tuning property) give the lists more room";
  }
  const char *threshold_meaning () const override {
    return "the least final sum of a window that runs through every stage";
  }
  bool gpu_schedule () const override { return gpu_schedule_; }

  cl::Error program (const BuildEnv &env, ProgramSpec *out) override;
  cl::Error setup (const BuildEnv &env, const cl::Program &program) override;
  // OpenCV xobjdetect's files are scanned as its WBDetector::detect does,
  // the project's as CascadeClassifier::detectMultiScale.
  PyramidGeometry plan (int width, int height, const SearchParams &p) const override {
    if (model_.format == WaldBoostModel::Format::XObjDetect)
      return plan_pyramid_xobjdetect (width, height, model_.window_width, model_.window_height, p.scale_factor,
                                      p.min_size, p.max_size);
    return plan_pyramid (width, height, model_.window_width, model_.window_height, p.scale_factor, p.min_size,
                         p.max_size);
  }
  cl::Error geometry (const cl::Device &dev, const PyramidGeometry &g, const FrameLayout &layout,
                      const SearchParams &p) override;
  cl::Error parameters (const SearchParams &p) override;
  cl::Error enqueue (const FrameBuffers &frame, Launcher &l) override;
  std::vector<Detection> finish (const std::vector<RawHit> &hits, const PyramidGeometry &g,
                                 const SearchParams &p) const override;

private:
  // The kernels that emit candidates, and the index of their candidates
  // argument (the capacity follows it).
  std::vector<std::pair<cl_kernel, cl_uint>> emitters () const;
  Gamma final_threshold (const SearchParams &p) const {
    const double *user = p.threshold ? &*p.threshold : nullptr;
    const int64_t arg = waldboost_final_threshold_arg (model_, user);
    Gamma g;
    g.is_float = model_.float_sums;
    g.q = arg;
    const uint32_t bits = static_cast<uint32_t> (arg);
    std::memcpy (&g.f, &bits, sizeof g.f);
    return g;
  }

  WaldBoostModel model_;
  ModelInfo info_;
  IntegralPyramid integral_;
  bool gpu_schedule_ = true;
  std::vector<int> divisors_;
  size_t groups_ = 0; // persistent work-groups of wb_more and wb_tail
  cl::Kernel first_, tail_, rows_;
  std::vector<cl::Kernel> more_; // one per divisor after the first
  cl::Mem stages_, resp_, counters_, segs_, wrows_;
  std::vector<cl::Mem> lists_; // one per divisor; the last is wb_tail's
  std::vector<cl_uint> caps_;
  int nsegs_ = 0, nwrows_ = 0, nwindows_ = 0;
  cl_mem bound_cand_ = nullptr;
  Gamma gamma_;
};

cl::Error WaldBoostFamily::program (const BuildEnv &env, ProgramSpec *out) {
  const cl::DeviceInfo &dev = env.dev.info;
  const Tuning &t = env.tuning;
  gpu_schedule_ = env.gpu_schedule && dev.max_work_group >= static_cast<size_t> (kWg) &&
                  dev.local_mem >= static_cast<cl_ulong> (kWg * 12 + 64);
  divisors_ = !t.waldboost_divisors.empty () ? t.waldboost_divisors
              : !model_.divisors.empty ()    ? model_.divisors
                                             : kDefaultDivisors;
  const int sync_first = t.waldboost_sync_first ? t.waldboost_sync_first
                         : model_.sync_first    ? model_.sync_first
                                                : kDefaultSyncFirst;
  const int sync_step = t.waldboost_sync_step ? t.waldboost_sync_step
                        : model_.sync_step    ? model_.sync_step
                                              : kDefaultSyncStep;
  const bool flat = waldboost_flat_limit (model_) > 0;
  // The sum plane modulo 2^16 where every block holds at most 257 pixels
  // (its sum is then exact: kernels/pyramid.cl) and no window variance is
  // needed; the loads of the scattered evaluation move half the bytes.
  bool narrow = env.gpu_schedule && !flat;
  for (const WaldBoostModel::Stage &s : model_.stages)
    narrow = narrow && s.w * s.h <= 257;
  integral_.configure ({env.dev, env.tuning, gpu_schedule_}, {flat, false, narrow});
  std::string opts = integral_.options ();
  opts += " -D WB_WIN_W=" + std::to_string (model_.window_width) + " -D WB_WIN_H=" +
          std::to_string (model_.window_height) + " -D WB_SYNC_FIRST=" + std::to_string (sync_first) +
          " -D WB_SYNC_STEP=" + std::to_string (sync_step);
  if (flat)
    opts += " -D WB_FLAT";
  if (model_.float_sums)
    opts += " -D WB_FLOAT_SUMS";
  // NVIDIA GPUs: the survivor counts through warp votes (kernels/warp.cl),
  // retried without where the driver refuses the inline PTX.
  out->options = opts;
  if (gpu_schedule_)
    add_warp_ptx (dev, out);
  out->source = std::string (kernels::warp_source) + "\n" + kernels::compact_source + "\n" +
                kernels::candidates_source + "\n" + kernels::worklist_source + "\n" + kernels::pyramid_source + "\n" +
                kernels::waldboost_source;
  uint64_t hash = kernels::warp_hash;
  for (uint64_t h : {kernels::compact_hash, kernels::candidates_hash, kernels::worklist_hash, kernels::pyramid_hash,
                     kernels::waldboost_hash})
    hash = cl::fnv1a (&h, sizeof h, hash);
  out->hash = hash;
  groups_ = static_cast<size_t> (std::max<cl_uint> (dev.compute_units, 1)) * 8;
  return {};
}

cl::Error WaldBoostFamily::setup (const BuildEnv &env, const cl::Program &program) {
  if (cl::Error e = integral_.create_kernels (program))
    return e;
  if (gpu_schedule_) {
    if (cl::Error e = cl::create_kernel (program, "wb_first", &first_))
      return e;
    if (cl::Error e = cl::create_kernel (program, "wb_tail", &tail_))
      return e;
    more_.resize (divisors_.size () - 1);
    for (cl::Kernel &k : more_)
      if (cl::Error e = cl::create_kernel (program, "wb_more", &k))
        return e;
  } else if (cl::Error e = cl::create_kernel (program, "wb_rows", &rows_)) {
    return e;
  }
  const int tail = model_.tail_start ();
  if (model_.float_sums) {
    std::vector<DevStageFloat> st;
    std::vector<cl_float> resp;
    for (size_t i = 0; i < model_.stages.size (); i++) {
      const WaldBoostModel::Stage &s = model_.stages[i];
      const bool decides = static_cast<int> (i) < tail;
      st.push_back ({{{s.x, s.y, s.w, s.h}},
                     decides ? static_cast<float> (s.neg_t) : -INFINITY,
                     decides ? static_cast<float> (s.pos_t) : INFINITY,
                     {0, 0}});
      resp.insert (resp.end (), s.response.begin (), s.response.end ());
    }
    if (cl::Error e = cl::upload_vector (env.dev, &stages_, st))
      return e;
    if (cl::Error e = cl::upload_vector (env.dev, &resp_, resp))
      return e;
  } else {
    std::vector<DevStage> st;
    std::vector<cl_long> resp;
    for (size_t i = 0; i < model_.stages.size (); i++) {
      const WaldBoostModel::Stage &s = model_.stages[i];
      const bool decides = static_cast<int> (i) < tail;
      st.push_back ({{{s.x, s.y, s.w, s.h}},
                     decides ? waldboost_reject_below (s.neg_t) : LLONG_MIN,
                     decides ? waldboost_accept_above (s.pos_t) : LLONG_MAX});
      for (float r : s.response)
        resp.push_back (waldboost_fixed (r));
    }
    if (cl::Error e = cl::upload_vector (env.dev, &stages_, st))
      return e;
    if (cl::Error e = cl::upload_vector (env.dev, &resp_, resp))
      return e;
  }
  return cl::make_buffer (env.dev, &counters_, IntegralPyramid::kCounterWords * sizeof (cl_uint));
}

cl::Error WaldBoostFamily::geometry (const cl::Device &dev, const PyramidGeometry &g, const FrameLayout &layout,
                                     const SearchParams &p) {
  gamma_ = final_threshold (p);
  if (cl::Error e = integral_.geometry (dev, g, layout))
    return e;
  std::vector<cl_int2> segs;   // wb_first: (level, first window)
  std::vector<int32_t> wrows;  // wb_rows: level | iy << 10
  for (size_t li = 0; li < g.levels.size (); li++) {
    const PyramidLevel &l = g.levels[li];
    for (int i = 0; i < l.nx * l.ny; i += kWg)
      segs.push_back ({{static_cast<cl_int> (li), i}});
    for (int iy = 0; iy < l.ny; iy++)
      wrows.push_back (static_cast<int32_t> (li) | (iy << 10));
  }
  nsegs_ = static_cast<int> (segs.size ());
  nwrows_ = static_cast<int> (wrows.size ());
  nwindows_ = g.total_windows;
  if (cl::Error e = cl::upload_vector (dev, &segs_, segs)) return e;
  if (cl::Error e = cl::upload_vector (dev, &wrows_, wrows)) return e;
  const cl::Mem &sum = integral_.sum (), &sq = integral_.sqsum ();
  const cl_int stride = integral_.stride ();
  const cl_int nstages = static_cast<cl_int> (model_.stages.size ()), tail = model_.tail_start ();
  const cl_long flat = waldboost_flat_limit (model_);
  bound_cand_ = nullptr;
  if (!gpu_schedule_) {
    GPUDETECT_CL_TRY (cl::set_args (rows_.get (), integral_.levels (), wrows_, static_cast<cl_int> (nwrows_), sum, sq,
                                    stride, stages_, resp_, nstages, tail, gamma_, flat));
    return {};
  }
  // List k (one per divisor) holds the windows still undecided after step k;
  // the last is wb_tail's, which also takes every window that reaches the
  // tail early.  Capacities: the windows / (D1 ... Dk), at least
  // kMinListItems (or every window).
  lists_.resize (divisors_.size ());
  caps_.resize (divisors_.size ());
  size_t share = static_cast<size_t> (std::max (nwindows_, 1));
  for (size_t k = 0; k < divisors_.size (); k++) {
    share = (share + divisors_[k] - 1) / divisors_[k];
    caps_[k] = static_cast<cl_uint> (std::max (share, std::min<size_t> (nwindows_, kMinListItems)));
    if (cl::Error e = cl::make_buffer (dev, &lists_[k], std::max<size_t> (caps_[k], 1) * kItemBytes))
      return e;
  }
  const size_t last = divisors_.size () - 1;
  const cl_int tl_at = static_cast<cl_int> (2 * last);
  // counters[2k], [2k + 1]: list k's length and the chunks taken from it
  GPUDETECT_CL_TRY (cl::set_args (first_.get (), integral_.levels (), segs_, sum, sq, stride, stages_, resp_, nstages,
                                  tail, gamma_, flat, static_cast<cl_int> (divisors_[0]), lists_[0], cl_int (0),
                                  caps_[0], lists_[last], tl_at, caps_[last], counters_));
  for (size_t k = 1; k < divisors_.size (); k++)
    GPUDETECT_CL_TRY (cl::set_args (more_[k - 1].get (), sum, stride, stages_, resp_, nstages, tail, gamma_,
                                    static_cast<cl_int> (divisors_[k]), lists_[k - 1],
                                    static_cast<cl_int> (2 * (k - 1)), caps_[k - 1], lists_[k],
                                    static_cast<cl_int> (2 * k), caps_[k], lists_[last], tl_at, caps_[last],
                                    counters_));
  GPUDETECT_CL_TRY (cl::set_args (tail_.get (), sum, stride, stages_, resp_, nstages, tail, gamma_, lists_[last],
                                  tl_at, caps_[last], counters_));
  return {}; // gamma follows in parameters()
}

std::vector<std::pair<cl_kernel, cl_uint>> WaldBoostFamily::emitters () const {
  if (!gpu_schedule_)
    return {{rows_.get (), 12}};
  std::vector<std::pair<cl_kernel, cl_uint>> v = {{first_.get (), 19}, {tail_.get (), 11}};
  for (const cl::Kernel &k : more_)
    v.push_back ({k.get (), 18});
  return v;
}

cl::Error WaldBoostFamily::parameters (const SearchParams &p) {
  // gamma: argument 10 of wb_rows, 9 of wb_first, 6 of wb_more and wb_tail
  gamma_ = final_threshold (p);
  if (!gpu_schedule_) {
    GPUDETECT_CL_TRY (set_arg (rows_.get (), 10, gamma_));
    return {};
  }
  GPUDETECT_CL_TRY (set_arg (first_.get (), 9, gamma_));
  GPUDETECT_CL_TRY (set_arg (tail_.get (), 6, gamma_));
  for (cl::Kernel &k : more_)
    GPUDETECT_CL_TRY (set_arg (k.get (), 6, gamma_));
  return {};
}

cl::Error WaldBoostFamily::enqueue (const FrameBuffers &frame, Launcher &l) {
  if (bound_cand_ != frame.candidates.get ()) {
    for (const auto &[k, at] : emitters ())
      GPUDETECT_CL_TRY (cl::set_args_from (k, at, frame.candidates, frame.capacity));
    bound_cand_ = frame.candidates.get ();
  }
  if (cl::Error e = integral_.enqueue (frame, counters_, l))
    return e;
  if (nwindows_ == 0)
    return {};
  if (!gpu_schedule_)
    return l.launch (rows_.get (), round_up (nwrows_, 8), 8, Phase::First);
  if (cl::Error e = l.launch (first_.get (), static_cast<size_t> (nsegs_) * kWg, kWg, Phase::First))
    return e;
  for (cl::Kernel &k : more_)
    if (cl::Error e = l.launch (k.get (), groups_ * kWg, kWg, Phase::Rest))
      return e;
  return l.launch (tail_.get (), groups_ * kWg, kWg, Phase::Rest);
}

std::vector<Detection> WaldBoostFamily::finish (const std::vector<RawHit> &hits, const PyramidGeometry &g,
                                                const SearchParams &p) const {
  std::vector<Rect> raw;
  std::vector<float> scores;
  raw.reserve (hits.size ());
  scores.reserve (hits.size ());
  for (const RawHit &h : hits) {
    raw.push_back (h.rect);
    scores.push_back (h.score);
  }
  std::vector<Detection> out;
  // xobjdetect's WBDetector groups with eps 0.7 (WaldBoost::detect)
  const double eps = model_.format == WaldBoostModel::Format::XObjDetect ? 0.7 : 0.2;
  for (const GroupedRect &gr : group_rectangles (raw, p.min_neighbors, eps, &scores)) {
    const Rect r = clip_rect (gr.rect, g.image_width, g.image_height);
    if (r.width > 0 && r.height > 0)
      out.push_back ({r, gr.neighbors, gr.confidence, gr.score, 0});
  }
  return out;
}

} // namespace

std::unique_ptr<Family> make_waldboost_family (WaldBoostModel model) {
  return std::make_unique<WaldBoostFamily> (std::move (model));
}

} // namespace gpudetect
