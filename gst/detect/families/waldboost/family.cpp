// WaldBoost on the device (kernels/waldboost.cl): the integral pyramid, then
// - GPU schedule: the staged reduction, wb_first over every window and one
//   wb_more per further divisor, each stopping once at most 1 / divisor of its
//   windows are undecided and passing them on compacted, and wb_tail for the
//   candidates left (a work-group each, a lane per stage);
// - CPU schedule: wb_rows, every window of a row in order.
// Both give the reference's raw windows (model.h: waldboost_evaluate).
#include "family.h"

#include "cl/kernel.h"

#include "core/integral.h"
#include "kernels.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstring>

namespace gpudetect {

namespace {

// The phases a frame's launches are timed under (Family::phases).
enum : int { kPyramid, kIntegral, kFirst, kRest };

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
// (a kernel argument of its own type: cl::TypedKernel sets it through this
// set_arg).
struct Gamma {
  bool is_float = false;
  cl_long q = 0;
  cl_float f = 0;
};
cl_int set_arg (cl_kernel k, cl_uint i, const Gamma &g) {
  return g.is_float ? clSetKernelArg (k, i, sizeof g.f, &g.f) : clSetKernelArg (k, i, sizeof g.q, &g.q);
}

class WaldBoostFamily final : public ModelFamily<WaldBoostModel> {
public:
  explicit WaldBoostFamily (WaldBoostModel m)
      : ModelFamily ("waldboost", std::move (m), {"pyramid", "integral", "first stages", "later stages"},
                     "the least final sum of a window that runs through every stage") {
    info_.window = {model_.window_width, model_.window_height};
    info_.description = std::string ("WaldBoost MB-LBP") +
                        (model_.format == WaldBoostModel::Format::XObjDetect ? " (OpenCV xobjdetect)" : "") + ", " +
                        std::to_string (model_.stages.size ()) + " stages (" + std::to_string (model_.tail_start ()) +
                        " deciding), window " + std::to_string (model_.window_width) + "x" +
                        std::to_string (model_.window_height);
  }

  const char *lost_hint () const override {
    return "a reduction list was full; smaller waldboost-divisors (tuning property) give the lists more room";
  }

  Error options (const Tuning &t) override {
    if (Error e = tuning_list (t, "waldboost-divisors", 6, 1, 1024, false, false, "divisors", &divisors_option_))
      return e;
    if (Error e = tuning_int (t, "waldboost-sync-first", 1, 100000, &sync_first_option_))
      return e;
    return tuning_int (t, "waldboost-sync-step", 1, 100000, &sync_step_option_);
  }
  GPUDETECT_FAMILY_CALLS
  bool searches_regions () const override { return true; } // IntegralPyramid reads the frame
  Error parameters (const SearchParams &p) override;

private:
  IntegralPyramid integral_;
  std::vector<int> divisors_;
  // waldboost-divisors=8,4,4,4: each step of the staged reduction stops once
  // at most 1/D of its windows survive; waldboost-sync-first=N,
  // waldboost-sync-step=N: stages every window runs before the first survivor
  // count, and between counts (default: the model's, else the engine's).
  std::vector<int> divisors_option_;
  int sync_first_option_ = 0, sync_step_option_ = 0;
  size_t groups_ = 0; // persistent work-groups of wb_more and wb_tail
  // kernels/waldboost.cl.  Common: sum, stride, stages, responses, nstages, tail start, gamma; a list: buffer,
  // counter index, capacity; the last list's, then counters, candidates, capacity.
  using Mem = cl::Mem;
  // wb_first: levels, segs, sum, sqsum, stride, stages, resp, nstages, tail, gamma, flat limit, divisor, list 0,
  // the last list, counters, candidates
  cl::TypedKernel<Mem, Mem, Mem, Mem, cl_int, Mem, Mem, cl_int, cl_int, Gamma, cl_long, cl_int, Mem, cl_int, cl_uint,
                  Mem, cl_int, cl_uint, Mem, Mem, cl_uint>
      first_;
  // wb_more: common, divisor, list in, list out, the last list, counters, candidates
  using More = cl::TypedKernel<Mem, cl_int, Mem, Mem, cl_int, cl_int, Gamma, cl_int, Mem, cl_int, cl_uint, Mem, cl_int,
                               cl_uint, Mem, cl_int, cl_uint, Mem, Mem, cl_uint>;
  std::vector<More> more_; // one per divisor after the first
  // wb_tail: common, the last list, counters, candidates
  cl::TypedKernel<Mem, cl_int, Mem, Mem, cl_int, cl_int, Gamma, Mem, cl_int, cl_uint, Mem, Mem, cl_uint> tail_;
  // wb_rows (CPU schedule): levels, window rows, rows, sum, sqsum, stride, stages, resp, nstages, tail, gamma,
  // flat limit, candidates
  cl::TypedKernel<Mem, Mem, cl_int, Mem, Mem, cl_int, Mem, Mem, cl_int, cl_int, Gamma, cl_long, Mem, cl_uint> rows_;
  cl_long flat_ = 0;
  cl::Mem stages_, resp_, counters_, segs_, wrows_;
  std::vector<cl::Mem> lists_; // one per divisor; the last is wb_tail's
  std::vector<cl_uint> caps_;
  int nsegs_ = 0, nwrows_ = 0, nwindows_ = 0;
  Gamma gamma_;
};

// OpenCV xobjdetect's files are scanned as its WBDetector::detect does, the
// project's as CascadeClassifier::detectMultiScale.
PyramidGeometry WaldBoostFamily::plan (int width, int height, const SearchParams &p) const {
  if (model_.format == WaldBoostModel::Format::XObjDetect)
    return plan_pyramid_xobjdetect (width, height, model_.window_width, model_.window_height, p.scale_factor,
                                    p.min_size, p.max_size);
  return plan_pyramid (width, height, model_.window_width, model_.window_height, p.scale_factor, p.min_size,
                       p.max_size);
}

Error WaldBoostFamily::program (const BuildEnv &env, ProgramSpec *out) {
  const cl::DeviceInfo &dev = env.dev.info;
  gpu_schedule_ = env.gpu_schedule && dev.max_work_group >= static_cast<size_t> (kWg) &&
                  dev.local_mem >= static_cast<cl_ulong> (kWg * 12 + 64);
  divisors_ = !divisors_option_.empty () ? divisors_option_
              : !model_.divisors.empty () ? model_.divisors
                                          : kDefaultDivisors;
  const int sync_first = sync_first_option_ ? sync_first_option_
                         : model_.sync_first ? model_.sync_first
                                             : kDefaultSyncFirst;
  const int sync_step = sync_step_option_ ? sync_step_option_
                        : model_.sync_step ? model_.sync_step
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
  out->options = opts;
  groups_ = add_list_sources (dev, gpu_schedule_, out).groups;
  out->add (kernels::waldboost_source, kernels::waldboost_hash);
  return {};
}

Error WaldBoostFamily::setup (const BuildEnv &env, const cl::Program &program) {
  if (Error e = integral_.create_kernels (program))
    return e;
  if (gpu_schedule_) {
    if (Error e = first_.create (program, "wb_first"))
      return e;
    if (Error e = tail_.create (program, "wb_tail"))
      return e;
    more_.resize (divisors_.size () - 1);
    for (More &k : more_)
      if (Error e = k.create (program, "wb_more"))
        return e;
  } else if (Error e = rows_.create (program, "wb_rows")) {
    return e;
  }
  // The stages (their blocks and Wald's two thresholds, undecided in the
  // tail) and the responses, in floats or fixed point as the sums are kept.
  const int tail = model_.tail_start ();
  auto upload = [&] (auto stage, auto reject, auto accept, auto response) -> Error {
    std::vector<decltype (stage)> st;
    std::vector<decltype (response (0.f))> resp;
    for (size_t i = 0; i < model_.stages.size (); i++) {
      const WaldBoostModel::Stage &s = model_.stages[i];
      const bool decides = static_cast<int> (i) < tail;
      using Sum = decltype (stage.neg);
      using Limits = std::numeric_limits<Sum>;
      decltype (stage) d = stage;
      d.f = {{s.x, s.y, s.w, s.h}};
      // the tail decides nothing: below -inf or the least sum, above +inf or the most
      d.neg = decides ? reject (s.neg_t) : Limits::has_infinity ? -Limits::infinity () : Limits::lowest ();
      d.pos = decides ? accept (s.pos_t) : Limits::has_infinity ? Limits::infinity () : Limits::max ();
      st.push_back (d);
      for (float r : s.response)
        resp.push_back (response (r));
    }
    if (Error e = cl::upload_vector (env.dev, &stages_, st))
      return e;
    return cl::upload_vector (env.dev, &resp_, resp);
  };
  if (Error e = model_.float_sums
                    ? upload (DevStageFloat {}, [] (double t) { return static_cast<float> (t); },
                              [] (double t) { return static_cast<float> (t); }, [] (float r) { return r; })
                    : upload (DevStage {}, waldboost_reject_below, waldboost_accept_above,
                              [] (float r) { return waldboost_fixed (r); }))
    return e;
  return cl::make_buffer (env.dev, &counters_, IntegralPyramid::kCounterWords * sizeof (cl_uint));
}

Error WaldBoostFamily::geometry (const cl::Device &dev, const PyramidGeometry &g, const FrameLayout &layout,
                                 const SearchParams &p) {
  if (Error e = parameters (p))
    return e;
  if (Error e = integral_.geometry (dev, g, layout))
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
  if (Error e = cl::upload_vector (dev, &segs_, segs)) return e;
  if (Error e = cl::upload_vector (dev, &wrows_, wrows)) return e;
  flat_ = waldboost_flat_limit (model_);
  if (!gpu_schedule_)
    return {};
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
    if (Error e = cl::make_buffer (dev, &lists_[k], std::max<size_t> (caps_[k], 1) * kItemBytes))
      return e;
  }
  return {};
}

// The kernels' final threshold: fixed point, or the float's bits for float_sums models.
Error WaldBoostFamily::parameters (const SearchParams &p) {
  const int64_t arg = waldboost_final_threshold_arg (model_, p.threshold ? &*p.threshold : nullptr);
  gamma_.is_float = model_.float_sums;
  gamma_.q = arg;
  const uint32_t bits = static_cast<uint32_t> (arg);
  std::memcpy (&gamma_.f, &bits, sizeof gamma_.f);
  return {};
}

Error WaldBoostFamily::enqueue (const FrameBuffers &frame, Launcher &l) {
  if (Error e = integral_.enqueue (frame, counters_, {kPyramid, kIntegral, kIntegral}, l); e || nwindows_ == 0)
    return e; // nothing to search: a frame smaller than the window
  const cl::Mem &sum = integral_.sum (), &sq = integral_.sqsum ();
  const cl_int stride = integral_.stride ();
  const cl_int nstages = static_cast<cl_int> (model_.stages.size ()), tail = model_.tail_start ();
  if (!gpu_schedule_) {
    if (Error e = rows_.set (integral_.levels (), wrows_, cl_int (nwrows_), sum, sq, stride, stages_, resp_, nstages,
                             tail, gamma_, flat_, frame.candidates, frame.capacity))
      return e;
    return l.launch (rows_.get (), round_up (nwrows_, 8), 8, kFirst);
  }
  // counters[2k], [2k + 1]: list k's length and the chunks taken from it
  const size_t last = divisors_.size () - 1;
  const cl_int tl_at = static_cast<cl_int> (2 * last);
  if (Error e = first_.set (integral_.levels (), segs_, sum, sq, stride, stages_, resp_, nstages, tail, gamma_, flat_,
                            cl_int (divisors_[0]), lists_[0], cl_int (0), caps_[0], lists_[last], tl_at, caps_[last],
                            counters_, frame.candidates, frame.capacity))
    return e;
  if (Error e = l.launch (first_.get (), static_cast<size_t> (nsegs_) * kWg, kWg, kFirst))
    return e;
  for (size_t k = 1; k < divisors_.size (); k++) {
    if (Error e = more_[k - 1].set (sum, stride, stages_, resp_, nstages, tail, gamma_, cl_int (divisors_[k]),
                                    lists_[k - 1], cl_int (2 * (k - 1)), caps_[k - 1], lists_[k], cl_int (2 * k),
                                    caps_[k], lists_[last], tl_at, caps_[last], counters_, frame.candidates,
                                    frame.capacity))
      return e;
    if (Error e = l.launch (more_[k - 1].get (), groups_ * kWg, kWg, kRest))
      return e;
  }
  if (Error e = tail_.set (sum, stride, stages_, resp_, nstages, tail, gamma_, lists_[last], tl_at, caps_[last],
                           counters_, frame.candidates, frame.capacity))
    return e;
  return l.launch (tail_.get (), groups_ * kWg, kWg, kRest);
}

std::vector<Detection> WaldBoostFamily::finish (const std::vector<RawHit> &hits, const PyramidGeometry &g,
                                                const SearchParams &p) const {
  // xobjdetect's WBDetector groups with eps 0.7 (WaldBoost::detect)
  return group_hits (hits, g, p.min_neighbors, model_.format == WaldBoostModel::Format::XObjDetect ? 0.7 : 0.2, true);
}

} // namespace

const std::vector<std::string> &waldboost_option_keys () {
  static const std::vector<std::string> keys = {"waldboost-divisors", "waldboost-sync-first", "waldboost-sync-step"};
  return keys;
}

std::unique_ptr<Family> make_waldboost_family (WaldBoostModel model) {
  return std::make_unique<WaldBoostFamily> (std::move (model));
}

} // namespace gpudetect
