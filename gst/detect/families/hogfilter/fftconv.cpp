#include "fftconv.h"

#include "cl/budget.h"
#include "kernels.h"

#include <algorithm>
#include <cstring>

namespace gpudetect {

namespace {

constexpr int kLocal = 64;
constexpr int kWg = 256;          // WGF (kernels/compact.cl)
constexpr int kFilterGroup = 4;   // FFT_FG (kernels/hog_fft.cl)
constexpr int kPatchGroup = 4;    // FFT_PG
constexpr size_t kCachedPlans = 9; // three sizes' forward, filter and inverse plans

// fft_preferred's rule, rows x cols >= a / filters + b.
struct Crossover {
  double a, b;
};
// PoCL 3.1 on 2 cores (bench/results/hog-sweep-pocl.txt: a = 99.8, b = 22.9).
constexpr Crossover kCrossoverCpu{100, 23};
// GPUs: an NVIDIA H100 (bench/results/hog-sweep-h100.txt; the fit within
// every measured crossover, `gpudetect-hog-sweep --table` on that file:
// a = 38.0, b = 12.2, taken as 38 and 12, which keep the five crossovers).
constexpr Crossover kCrossoverGpu{38, 12};

} // namespace

bool fft_preferred (bool gpu, int filters, int rows, int cols) {
  const Crossover &c = gpu ? kCrossoverGpu : kCrossoverCpu;
  return static_cast<double> (rows) * cols >= c.a / std::max (filters, 1) + c.b;
}

const char kHogEvalKey[] = "hog-eval";

Error hog_eval_option (const Tuning &t, HogEval *out) {
  int v = static_cast<int> (HogEval::Auto);
  if (Error e = tuning_choice (t, kHogEvalKey, {"direct", "fft", "auto"}, &v))
    return e;
  *out = static_cast<HogEval> (v);
  return {};
}

Error choose_fft (const BuildEnv &env, int filters, int rows, int cols, bool *fft) {
  HogEval eval = HogEval::Auto;
  if (Error e = hog_eval_option (env.tuning, &eval))
    return e;
  *fft = eval == HogEval::Fft ||
         (eval == HogEval::Auto && FftCorrelator::available () && fft_preferred (env.gpu_schedule, filters, rows, cols));
  if (*fft && !FftCorrelator::available ())
    return {"hog-eval=fft: this build of gpudetect has no FFT evaluation (vkFFT.h was not found when it was "
            "configured)"};
  return {};
}

void FftCorrelator::add_source (ProgramSpec *out) { out->add (kernels::hog_fft_source, kernels::hog_fft_hash); }

std::string FftCorrelator::options (bool compact) { return compact ? " -D FFT_COMPACT" : ""; }

void FftCorrelator::add_program_sources (ProgramSpec *out) {
  add_core_sources (out, false);
  add_source (out);
}

Error FftCorrelator::setup (const cl::Device &dev, const cl::Program &program, const FilterBank &bank, bool gpu,
                                bool compact) {
  if (bank.rows < 1 || bank.cols < 1 || bank.dims < 1 || bank.filters.empty ())
    return {"an empty filter bank"};
  const size_t per = static_cast<size_t> (bank.rows) * bank.cols * bank.dims;
  std::vector<float> coef;
  coef.reserve (per * bank.filters.size ());
  for (const std::vector<float> &f : bank.filters) {
    if (f.size () != per)
      return {"a filter of the bank has " + std::to_string (f.size ()) + " coefficients, not " + std::to_string (per)};
    coef.insert (coef.end (), f.begin (), f.end ());
  }
  if (Error e = gpu ? pack_.create (program, "fft_pack") : pack_rows_.create (program, "fft_pack_rows"))
    return e;
  if (Error e = place_.create (program, "fft_place_filters"))
    return e;
  if (Error e = mac_.create (program, gpu ? "fft_mac" : "fft_mac_rows"))
    return e;
  if (Error e = gpu ? extract_.create (program, "fft_extract") : extract_rows_.create (program, "fft_extract_rows"))
    return e;
  if (Error e = dense_.create (program, "fft_dense"))
    return e;
  if (Error e = cl::upload_vector (dev, &coef_, coef))
    return e;
  dev_ = &dev;
  bank_ = bank;
  gpu_ = gpu;
  compact_ = gpu && compact;
  spectra_.reset ();
  spectra_rows_ = spectra_cols_ = 0;
  return {};
}

Error FftCorrelator::plan_for (int rows, int cols, int batches, VkfftPlan::Direction dir, const VkfftPlan **out) {
  for (size_t i = 0; i < plans_.size (); i++) {
    const VkfftPlan &p = *plans_[i];
    if (p.rows () == rows && p.cols () == cols && p.batches () == batches && p.direction () == dir) {
      std::unique_ptr<VkfftPlan> keep = std::move (plans_[i]);
      plans_.erase (plans_.begin () + static_cast<long> (i));
      plans_.push_back (std::move (keep));
      *out = plans_.back ().get ();
      return {};
    }
  }
  std::unique_ptr<VkfftPlan> p;
  if (Error e = VkfftPlan::create (*dev_, rows, cols, batches, dir, &p))
    return e;
  if (plans_.size () >= kCachedPlans)
    plans_.erase (plans_.begin ());
  plans_.push_back (std::move (p));
  *out = plans_.back ().get ();
  return {};
}

Error FftCorrelator::filter_spectra () {
  const int rows = plan_.rows, cols = plan_.cols, stride = cols + 2;
  const int planes = static_cast<int> (bank_.filters.size ()) * bank_.dims;
  const size_t floats = static_cast<size_t> (planes) * rows * stride;
  spectra_.reset ();
  spectra_rows_ = spectra_cols_ = 0;
  if (Error e = cl::make_buffer (*dev_, &spectra_, floats * 4))
    return e;
  const VkfftPlan *plan = nullptr;
  if (Error e = plan_for (rows, cols, planes, VkfftPlan::Direction::Forward, &plan))
    return e;
  const float scale = static_cast<float> (1.0 / (static_cast<double> (rows) * cols));
  const cl_int items = static_cast<cl_int> (floats);
  if (Error e = place_.set (coef_, cl_int (bank_.rows), cl_int (bank_.cols), items, cl_int (rows), cl_int (stride), scale,
                            spectra_))
    return e;
  const size_t global = round_up (floats, kLocal), local = kLocal;
  cl_command_queue q = dev_->queue.get ();
  GPUDETECT_CL_TRY (clEnqueueNDRangeKernel (q, place_.get (), 1, nullptr, &global, &local, 0, nullptr, nullptr));
  if (Error e = plan->enqueue (q, spectra_.get ()))
    return e;
  GPUDETECT_CL_TRY (clFinish (q));
  spectra_rows_ = rows;
  spectra_cols_ = cols;
  return {};
}

Error FftCorrelator::geometry (const std::vector<FeatureLevel> &levels, size_t plane, const cl::Mem &features,
                                   const cl::Mem &thresholds) {
  if (!dev_)
    return {"the FFT evaluation was not set up"};
  fwd_ = inv_ = nullptr;
  positions_ = 0;
  nlevels_ = 0;
  thresholds_ = &thresholds;
  const int nf = static_cast<int> (bank_.filters.size ()), dims = bank_.dims;
  std::vector<PatchworkRect> rects;
  for (const FeatureLevel &l : levels) {
    const bool any = l.rows >= bank_.rows && l.cols >= bank_.cols;
    rects.push_back ({any ? l.rows : 0, any ? l.cols : 0});
  }
  PatchworkWork work;
  work.dims = dims;
  work.filters = nf;
  work.max_buffer = std::min<uint64_t> (dev_->info.max_alloc, uint64_t (1) << 31); // int offsets in the kernels
  work.max_total = dev_->info.global_mem / 2;
  // within what the detector's device memory budget leaves (cl/budget.h)
  cl::AllocationBudget *budget = cl::AllocationBudget::active ();
  if (budget)
    work.max_total = std::min (work.max_total, budget->remaining ());
  plan_ = plan_patchworks (rects, work);
  places_ = plan_.places;
  bool any = false;
  for (const PatchworkRect &r : rects)
    any = any || r.rows > 0;
  if (!any)
    return {};
  if (plan_.count == 0)
    return {"the FFT evaluation of " + std::to_string (nf) + " filters of " + std::to_string (bank_.rows) + "x" +
                std::to_string (bank_.cols) + "x" + std::to_string (dims) + " needs more device memory than " +
                (budget ? "the " + cl::size_text (work.max_total) + " the budget leaves" : dev_->info.name + " has") +
                " for these frames",
            Error::Kind::Resource};
  if (plane >= (size_t (1) << 31) / static_cast<size_t> (dims))
    return {"feature planes too large for the FFT evaluation"};
  const int rows = plan_.rows, cols = plan_.cols, stride = cols + 2, patches = plan_.count;
  const size_t patch_floats = static_cast<size_t> (rows) * stride;
  // the map below and the buffers: refused before any is made
  const bool keep_spectra = spectra_rows_ == rows && spectra_cols_ == cols;
  if (budget)
    if (Error e = budget->check (patch_floats * patches * (1 + dims + nf) * 4 +
                                 (keep_spectra ? 0 : patch_floats * nf * dims * 4)))
      return e;

  // where each float of a patchwork's dimension plane comes from
  std::vector<cl_int> map (patch_floats * patches, -1);
  std::vector<cl_int8> lv;
  std::vector<cl_int2> prows; // CPU schedule: (level descriptor, row of positions)
  for (size_t k = 0; k < levels.size (); k++) {
    const PatchworkPlace &p = places_[k];
    if (p.patch < 0)
      continue;
    const FeatureLevel &l = levels[k];
    for (int y = 0; y < l.rows; y++)
      for (int x = 0; x < l.cols; x++)
        map[p.patch * patch_floats + static_cast<size_t> (p.y + y) * stride + p.x + x] =
            static_cast<cl_int> (l.offset + static_cast<size_t> (y) * l.cols + x);
    cl_int8 d = {};
    const int across = l.cols - bank_.cols + 1, down = l.rows - bank_.rows + 1;
    const int v[8] = {p.patch, p.y, p.x, across, down, positions_, l.first_window, static_cast<int> (l.offset)};
    std::memcpy (d.s, v, sizeof v);
    for (int y = 0; y < down; y++)
      prows.push_back ({{static_cast<cl_int> (lv.size ()), y}});
    lv.push_back (d);
    if (static_cast<int64_t> (positions_) + static_cast<int64_t> (across) * down >= (int64_t (1) << 31) / nf)
      return {"too many filter positions for one frame"};
    positions_ += across * down;
  }
  nlevels_ = static_cast<int> (lv.size ());
  rows_ = rows;
  stride_ = stride;
  if (Error e = cl::upload_vector (*dev_, &map_, map))
    return e;
  if (Error e = cl::upload_vector (*dev_, &levels_, lv))
    return e;
  if (Error e = cl::upload_vector (*dev_, &prows_, prows))
    return e;
  if (Error e = cl::make_buffers (*dev_, {{&patches_, patch_floats * patches * dims * 4},
                                          {&out_, patch_floats * patches * nf * 4}}))
    return e;
  // the filters' spectra of this size, kept from a geometry before, are held too
  if (budget && keep_spectra)
    if (Error e = budget->reserve (patch_floats * nf * dims * 4))
      return e;
  if (Error e = plan_for (rows, cols, patches * dims, VkfftPlan::Direction::Forward, &fwd_))
    return e;
  if (Error e = plan_for (rows, cols, patches * nf, VkfftPlan::Direction::Inverse, &inv_))
    return e;
  if (spectra_rows_ != rows || spectra_cols_ != cols)
    if (Error e = filter_spectra ())
      return e;
  // the plans for the filters' spectra may have pushed these out of the cache
  if (Error e = plan_for (rows, cols, patches * dims, VkfftPlan::Direction::Forward, &fwd_))
    return e;
  if (Error e = plan_for (rows, cols, patches * nf, VkfftPlan::Direction::Inverse, &inv_))
    return e;

  const int n = rows * (cols / 2 + 1);
  if (gpu_) {
    pack_items_ = static_cast<int> (map.size ());
    mac_items_ = n * ((patches + kPatchGroup - 1) / kPatchGroup) * ((nf + kFilterGroup - 1) / kFilterGroup);
    extract_items_ = positions_;
    if (Error e = pack_.set (features, cl_int (plane), cl_int (dims), map_, cl_int (pack_items_),
                             cl_int (patch_floats), patches_))
      return e;
    return mac_.set (patches_, spectra_, out_, cl_int (n), cl_int (dims), cl_int (nf), cl_int (patches),
                     cl_int (mac_items_));
  } else {
    pack_items_ = patches * rows;
    mac_items_ = patches * nf * rows;
    extract_items_ = static_cast<int> (prows.size ());
    if (Error e = pack_rows_.set (features, cl_int (plane), cl_int (dims), map_, cl_int (pack_items_), cl_int (rows),
                                  cl_int (stride), patches_))
      return e;
    return mac_.set (patches_, spectra_, out_, cl_int (cols / 2 + 1), cl_int (rows), cl_int (dims), cl_int (nf),
                     cl_int (mac_items_));
  }
}

int FftCorrelator::launches () const {
  return positions_ > 0 && fwd_ && inv_ ? 3 + fwd_->launches () + inv_->launches () : 0;
}

size_t FftCorrelator::score_index (int level, int filter, int y, int x) const {
  const PatchworkPlace &p = places_[static_cast<size_t> (level)];
  const size_t stride = static_cast<size_t> (plan_.cols) + 2;
  return ((static_cast<size_t> (p.patch) * bank_.filters.size () + filter) * plan_.rows + p.y + y) * stride + p.x + x;
}

Error FftCorrelator::enqueue_scores (int phase, Launcher &l) {
  // the CPU schedule's work-items are rows: small work-groups, so that
  // both cores get some
  const size_t items = gpu_ ? kLocal : 8;
  if (Error e = l.launch (gpu_ ? pack_.get () : pack_rows_.get (), round_up (pack_items_, items), items, phase))
    return e;
  if (Error e = l.library ([this] (cl_command_queue q) { return fwd_->enqueue (q, patches_.get ()); },
                               fwd_->launches ()))
    return e;
  if (Error e = l.launch (mac_.get (), round_up (mac_items_, items), items, phase))
    return e;
  return l.library ([this] (cl_command_queue q) { return inv_->enqueue (q, out_.get ()); }, inv_->launches ());
}

Error FftCorrelator::enqueue (const cl::Mem &candidates, cl_uint capacity, int phase, Launcher &l) {
  if (positions_ == 0)
    return {};
  if (Error e = enqueue_scores (phase, l))
    return e;
  const int nf = static_cast<int> (bank_.filters.size ());
  if (Error e = gpu_ ? extract_.set (levels_, cl_int (nlevels_), cl_int (positions_), out_, cl_int (rows_),
                                     cl_int (stride_), cl_int (nf), *thresholds_, candidates, capacity)
                     : extract_rows_.set (levels_, prows_, cl_int (extract_items_), out_, cl_int (rows_),
                                          cl_int (stride_), cl_int (nf), *thresholds_, candidates, capacity))
    return e;
  const size_t local = compact_ ? kWg : (gpu_ ? kLocal : 8);
  return l.launch (gpu_ ? extract_.get () : extract_rows_.get (), round_up (std::max (extract_items_, 1), local), local,
                   phase);
}

Error FftCorrelator::enqueue_dense (const cl::Mem &out, size_t plane, int first_plane, int phase, Launcher &l) {
  if (positions_ == 0)
    return {};
  if (Error e = enqueue_scores (phase, l))
    return e;
  if (Error e = dense_.set (levels_, cl_int (nlevels_), cl_int (positions_), out_, cl_int (rows_), cl_int (stride_),
                            cl_int (bank_.filters.size ()), cl_int (bank_.cols), out, cl_int (plane),
                            cl_int (first_plane)))
    return e;
  const size_t local = gpu_ ? kLocal : 8;
  return l.launch (dense_.get (), round_up (positions_, local), local, phase);
}

} // namespace gpudetect
