// The deformable part model family on the device (kernels/dpm.cl), a frame:
//   dpm_images      one launch per generation of cv::dpm's images (the first
//                   octave from the frame, each further one halving the octave
//                   before: a generation cannot start before the one it
//                   halves is done; 5 at 1080p with interval 5)
//   dpm_gradients   a work-item per pixel of every image: orientation, length
//   dpm_cells       a work-item per cell of every level: votes and energy
//   dpm_features    a work-item per padded feature position: 32 planes
//   dpm_correlate   every filter at every position of the levels it applies to
//                   (roots on levels >= interval, parts on the twice-resolution
//                   levels), a work-item per position computing a bank of
//                   filters of one size (CPU schedule: dpm_correlate_rows);
//                   or, for a bank past the FFT crossover (tuning hog-eval),
//                   the FFT path (fftconv.h: 6 launches a bank, its scores
//                   written into the same response planes)
//   dpm_dt_rows     the parts' distance transform over cv::dpm's window, rows
//   dpm_dt_cols     then columns
//   dpm_scores      a work-item per root position of every component: root +
//                   bias + parts, appended to the candidates where it reaches
//                   the threshold (compacted a work-group at a time on GPUs)
// finish(): boxes from the root, cv::dpm's non-maximum suppression.
//
// Window indices: the core's grid of a root level is (feature columns x
// components) x feature rows, so that a candidate names the level, the root
// position and the component at once.
#include "family.h"

#include "cl/kernel.h"

#include "families/hogfilter/fftconv.h"
#include "kernels.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>

namespace gpudetect {

namespace {

// The phases a frame's launches are timed under (Family::phases).
enum : int { kPyramid, kFeatures, kFilters, kParts };

constexpr int kWg = 256;      // WGF (kernels/compact.cl)
constexpr int kTile = 64;     // DPM_TILE (kernels/dpm.cl)
constexpr int kLevelInts = 12; // DPM_LV
constexpr int kImageInts = 8;  // DPM_IM

cl_int float_bits (float f) {
  cl_int i;
  std::memcpy (&i, &f, sizeof i);
  return i;
}

// Filters of one size applied to the same levels, their output planes
// consecutive.
struct Bank {
  int rows = 0, cols = 0;
  bool root = false;
  bool fft = false; // through the frequency domain
  std::vector<const DpmFilter *> filters;
  int first_plane = 0, coef_offset = 0;
};

class DpmFamily final : public ModelFamily<DpmModel> {
public:
  explicit DpmFamily (DpmModel m)
      : ModelFamily ("dpm", std::move (m), {"pyramid", "hog features", "filters", "parts and scores"},
                     "the least score (root + parts - deformation + bias, as cv::dpm reports it) of an object") {
    int w = 0, h = 0;
    size_t parts = 0;
    for (const DpmComponent &c : model_.components) {
      w = std::max (w, c.root.cols * model_.sbin);
      h = std::max (h, c.root.rows * model_.sbin);
      parts += c.parts.size ();
    }
    info_.window = {w, h};
    description_ = "deformable part model, " + std::to_string (model_.components.size ()) + " components, " +
                   std::to_string (parts) + " parts, " + std::to_string (kDpmDims) + " features of " +
                   std::to_string (model_.sbin) + " px cells";
    info_.description = description_ + ", direct correlation";
    // banks: roots, then parts, grouped by size in order of appearance
    int plane = 0;
    auto add = [&] (const DpmFilter &f, bool root) {
      for (Bank &b : banks_)
        if (b.root == root && b.rows == f.rows && b.cols == f.cols) {
          b.filters.push_back (&f);
          return;
        }
      Bank b;
      b.rows = f.rows;
      b.cols = f.cols;
      b.root = root;
      b.filters.push_back (&f);
      banks_.push_back (b);
    };
    for (const DpmComponent &c : model_.components)
      add (c.root, true);
    for (const DpmComponent &c : model_.components)
      for (const DpmPart &p : c.parts)
        add (p.filter, false);
    int coef = 0;
    for (Bank &b : banks_) {
      b.first_plane = plane;
      b.coef_offset = coef;
      for (size_t f = 0; f < b.filters.size (); f++)
        plane_of_[b.filters[f]] = plane++;
      coef += static_cast<int> (b.filters.size ()) * b.rows * b.cols * kDpmDims;
      fmax_ = std::max (fmax_, static_cast<int> (b.filters.size ()));
    }
    nplanes_ = plane;
  }

  Error options (const Tuning &t) override { return check_hog_eval (t); }
  std::string memory_hint () const override {
    return "the model's SBin " + std::to_string (model_.sbin) + " (pixels a cell), Interval " +
           std::to_string (model_.interval) + " (levels an octave), padding MaxSizeX x MaxSizeY " +
           std::to_string (model_.pad_x) + "x" + std::to_string (model_.pad_y) + " cells, and filters (" +
           std::to_string (model_.components.size ()) + " components, " + std::to_string (nparts_) + " parts)";
  }
  GPUDETECT_FAMILY_CALLS
  Error parameters (const SearchParams &p) override;

  // the feature planes of the last frame enqueued (tests)
  Error read_features (std::vector<float> *out) const {
    out->resize (plan_.feat_plane * kDpmDims);
    if (out->empty ())
      return {};
    GPUDETECT_CL_TRY (clEnqueueReadBuffer (dev_->queue.get (), feats_.get (), CL_TRUE, 0, out->size () * sizeof (float),
                                           out->data (), 0, nullptr, nullptr));
    return {};
  }
  const DpmPlan &dpm_plan () const { return plan_; }
  void allow_fp64 (bool a) { allow_fp64_ = a; }

private:
  std::string description_;
  std::vector<Bank> banks_;
  std::vector<std::unique_ptr<FftCorrelator>> ffts_; // per bank, where it takes the FFT path
  cl::Mem fft_thresholds_;                           // the FFT path's, not read (dense scores)
  size_t resp_plane_ = 1;
  std::map<const DpmFilter *, int> plane_of_;
  int nplanes_ = 0, fmax_ = 0, nparts_ = 0;
  bool compact_ = false, fp64_ = false, allow_fp64_ = true;
  const cl::Program *program_ = nullptr;
  const cl::Device *dev_ = nullptr;
  DpmPlan plan_;
  // kernels/dpm.cl
  using Mem = cl::Mem;
  // dpm_images (one per generation): src, src stride, bpp, rgb, width, height, image table, first image, images,
  // pixels, columns' and rows' taps, pixels out, candidates
  using Images = cl::TypedKernel<Mem, cl_int, cl_int, cl_int4, cl_int, cl_int, Mem, cl_int, cl_int, cl_int, Mem, Mem,
                                 Mem, Mem>;
  // dpm_gradients: pixels, image table, images, pixels, orientations, magnitudes
  cl::TypedKernel<Mem, Mem, cl_int, cl_int, Mem, Mem> gradients_;
  // dpm_cells: orientations, magnitudes, image table, levels, nlevels, cells, cells out
  cl::TypedKernel<Mem, Mem, Mem, Mem, cl_int, cl_int, Mem> cells_;
  // dpm_features: cells, levels, nlevels, items, padding x and y, features, plane
  cl::TypedKernel<Mem, Mem, cl_int, cl_int, cl_int, cl_int, Mem, cl_int> features_;
  // dpm_correlate(_rows): features, plane, levels, jobs, njobs, items, coefficients, responses
  cl::TypedKernel<Mem, cl_int, Mem, Mem, cl_int, cl_int, Mem, Mem> correlate_;
  // dpm_dt_rows: responses, plane, levels, jobs, njobs, items, costs, rows out, dt plane, per row
  cl::TypedKernel<Mem, cl_int, Mem, Mem, cl_int, cl_int, Mem, Mem, cl_int, cl_int> dt_rows_;
  // dpm_dt_cols: levels, jobs, njobs, items, costs, rows, dt out, dt plane, per row
  cl::TypedKernel<Mem, Mem, cl_int, cl_int, Mem, Mem, Mem, cl_int, cl_int> dt_cols_;
  // dpm_scores: responses, plane, dt, dt plane, levels, interval, jobs, njobs, items, components, parts,
  // threshold, candidates
  cl::TypedKernel<Mem, cl_int, Mem, cl_int, Mem, cl_int, Mem, cl_int, cl_int, Mem, Mem, cl_float, Mem, cl_uint> scores_;
  struct Generation {
    Images kernel;
    cl_int first = 0, count = 0;
    size_t items = 0; // its pixels
  };
  std::vector<Generation> images_;
  FrameLayout layout_;
  cl_int dt_plane_ = 0, score_jobs_count_ = 0;
  cl_float threshold_ = 0;
  cl::Mem coef_, costs_, comps_, parts_;
  cl::Mem levels_, image_tab_, cols_, rows_, pix_, grad_o_, grad_v_, cells_buf_, feats_, resp_, dt_rows_buf_, dt_, corr_jobs_,
      dt_jobs_, score_jobs_;
  size_t npixels_ = 0, ncells_ = 0, nfeat_ = 0, corr_items_ = 0, dt_row_items_ = 0, dt_col_items_ = 0, score_items_ = 0;
};

Error DpmFamily::program (const BuildEnv &env, ProgramSpec *out) {
  gpu_schedule_ = env.gpu_schedule;
  // each bank directly or through the FFT (tuning hog-eval; auto: the
  // faster for its count and size here)
  int nfft = 0;
  for (Bank &b : banks_) {
    if (Error e = choose_fft (env, static_cast<int> (b.filters.size ()), b.rows, b.cols, &b.fft))
      return e;
    nfft += b.fft;
  }
  info_.description = description_ + (nfft == 0 ? ", direct correlation"
                                      : nfft == static_cast<int> (banks_.size ()) ? ", FFT correlation"
                                                                                  : ", FFT and direct correlation");
  add_core_sources (out);
  out->add (kernels::felzenszwalb_source, kernels::felzenszwalb_hash);
  out->add (kernels::dpm_source, kernels::dpm_hash);
  if (nfft > 0)
    FftCorrelator::add_source (out);
  out->options = " -D DPM_D=" + std::to_string (kDpmDims) + " -D DPM_FMAX=" + std::to_string (std::max (fmax_, 1)) +
                 " -D DPM_NCOMP=" + std::to_string (model_.components.size ()) +
                 " -D DPM_HW=" + std::to_string (kDpmHalfWindow) + " -D DPM_CMAX=" + std::to_string (model_.sbin);
  // the pyramid and the features in double where the device has it (cv::dpm's
  // own operations: every feature is cv::dpm's, rounded to float)
  fp64_ = env.dev.info.fp64 && allow_fp64_;
  if (fp64_)
    out->options += " -D DPM_FP64";
  compact_ = env.gpu_schedule && env.dev.info.max_work_group >= static_cast<size_t> (kWg);
  if (compact_) {
    out->options += " -D DPM_COMPACT" + std::string (nfft > 0 ? FftCorrelator::options (true) : "");
    add_warp_ptx (env.dev.info, out);
  }
  return {};
}

Error DpmFamily::setup (const BuildEnv &env, const cl::Program &program) {
  program_ = &program;
  for (Error e : {gradients_.create (program, "dpm_gradients"), cells_.create (program, "dpm_cells"),
                  features_.create (program, "dpm_features"),
                  correlate_.create (program, gpu_schedule_ ? "dpm_correlate" : "dpm_correlate_rows"),
                  dt_rows_.create (program, "dpm_dt_rows"), dt_cols_.create (program, "dpm_dt_cols"),
                  scores_.create (program, "dpm_scores")})
    if (e)
      return e;
  // the banks' coefficients, interleaved: ((d * rows + y) * cols + x) * filters + f
  std::vector<float> coef;
  for (const Bank &b : banks_) {
    const size_t nf = b.filters.size ();
    const size_t base = coef.size ();
    coef.resize (base + nf * b.rows * b.cols * kDpmDims);
    for (size_t f = 0; f < nf; f++)
      for (int d = 0; d < kDpmDims; d++)
        for (int y = 0; y < b.rows; y++)
          for (int x = 0; x < b.cols; x++)
            coef[base + ((static_cast<size_t> (d) * b.rows + y) * b.cols + x) * nf + f] =
                static_cast<float> (b.filters[f]->at (y, x, d));
  }
  if (Error e = cl::upload_vector (env.dev, &coef_, coef))
    return e;
  // the FFT banks: each filter's 32 planes of rows x cols
  ffts_.clear ();
  for (const Bank &b : banks_) {
    ffts_.emplace_back ();
    if (!b.fft)
      continue;
    FilterBank bank;
    bank.rows = b.rows;
    bank.cols = b.cols;
    bank.dims = kDpmDims;
    for (const DpmFilter *f : b.filters) {
      std::vector<float> c (static_cast<size_t> (kDpmDims) * b.rows * b.cols);
      for (int d = 0; d < kDpmDims; d++)
        for (int y = 0; y < b.rows; y++)
          for (int x = 0; x < b.cols; x++)
            c[(static_cast<size_t> (d) * b.rows + y) * b.cols + x] = static_cast<float> (f->at (y, x, d));
      bank.filters.push_back (std::move (c));
    }
    ffts_.back () = std::make_unique<FftCorrelator> ();
    if (Error e = ffts_.back ()->setup (env.dev, program, bank, gpu_schedule_, compact_))
      return e;
  }
  if (Error e = cl::make_buffer (env.dev, &fft_thresholds_, std::max (fmax_, 1) * sizeof (float)))
    return e;
  // deformation costs: per part, 2 DPM_HW + 1 for x, then for y
  std::vector<float> costs;
  std::vector<cl_int4> comps, parts;
  int k = 0;
  for (const DpmComponent &c : model_.components) {
    comps.push_back ({{k, static_cast<cl_int> (c.parts.size ()), plane_of_.at (&c.root), 0}});
    for (const DpmPart &p : c.parts) {
      parts.push_back ({{k, p.anchor_x - model_.pad_x, p.anchor_y - model_.pad_y, 0}});
      for (int axis = 0; axis < 2; axis++)
        for (int d = -kDpmHalfWindow; d <= kDpmHalfWindow; d++)
          costs.push_back (static_cast<float> (-p.def[2 * axis] * (d * d) - p.def[2 * axis + 1] * d));
      k++;
    }
  }
  nparts_ = k;
  if (Error e = cl::upload_vector (env.dev, &costs_, costs))
    return e;
  if (Error e = cl::upload_vector (env.dev, &comps_, comps))
    return e;
  return cl::upload_vector (env.dev, &parts_, parts);
}

PyramidGeometry DpmFamily::plan (int width, int height, const SearchParams &) const {
  const DpmPlan dp = plan_dpm (width, height, model_);
  const int nc = static_cast<int> (model_.components.size ());
  std::vector<PyramidLevel> levels;
  for (size_t li = 0; li < dp.levels.size (); li++) {
    const DpmLevel &dl = dp.levels[li];
    PyramidLevel l;
    l.width = dp.images[dl.image].width;
    l.height = dp.images[dl.image].height;
    l.step = 1;
    l.scale = static_cast<float> (1.0 / dl.scale);
    bool roots = false;
    for (int c = 0; c < nc; c++)
      roots = roots || dpm_root_range (model_, dp, static_cast<int> (li), c).x1 > 0;
    l.nx = roots ? dl.feat_w * nc : 0;
    l.ny = roots ? dl.feat_h : 0;
    levels.push_back (l);
  }
  return feature_geometry (width, height, info_.window, std::move (levels));
}

Error DpmFamily::geometry (const cl::Device &dev, const PyramidGeometry &g, const FrameLayout &layout,
                           const SearchParams &p) {
  plan_ = plan_dpm (g.image_width, g.image_height, model_);
  const DpmPlan &dp = plan_;
  const int nl = static_cast<int> (dp.levels.size ());
  if (dp.feat_plane * static_cast<size_t> (std::max (nplanes_, kDpmDims)) >= (size_t (1) << 31) ||
      dp.dt_plane * static_cast<size_t> (std::max (nparts_, 1)) >= (size_t (1) << 31))
    return {"frame too large for the deformable part model's planes (2^31 values a plane)", Error::Kind::Resource};
  // tables
  std::vector<cl_int> lv (std::max (nl, 1) * kLevelInts, 0);
  for (int li = 0; li < nl; li++) {
    const DpmLevel &l = dp.levels[li];
    cl_int *t = &lv[li * kLevelInts];
    t[0] = l.image;
    t[1] = l.cell;
    t[2] = l.cells_x;
    t[3] = l.cells_y;
    t[4] = l.feat_w;
    t[5] = l.feat_h;
    t[6] = static_cast<cl_int> (l.cell_offset);
    t[7] = static_cast<cl_int> (l.feat_offset);
    t[8] = static_cast<cl_int> (l.dt_offset);
    t[9] = g.levels[li].first_window;
    t[10] = g.levels[li].nx;
  }
  std::vector<cl_int> im (std::max<size_t> (dp.images.size (), 1) * kImageInts, 0);
  std::vector<cl_int4> cols, rows;
  for (size_t i = 0; i < dp.images.size (); i++) {
    const DpmImage &m = dp.images[i];
    cl_int *t = &im[i * kImageInts];
    t[0] = m.width;
    t[1] = m.height;
    t[2] = static_cast<cl_int> (m.offset);
    t[3] = m.source;
    t[4] = m.area ? 1 : 0;
    t[5] = static_cast<cl_int> (cols.size ());
    t[6] = static_cast<cl_int> (rows.size ());
    if (m.area)
      continue;
    const int sw = m.source < 0 ? g.image_width : dp.images[m.source].width;
    const int sh = m.source < 0 ? g.image_height : dp.images[m.source].height;
    for (const DpmTap &tp : dpm_linear_taps (sw, m.width, true))
      cols.push_back ({{tp.index, float_bits (tp.w0), float_bits (tp.w1), tp.two ? 1 : 0}});
    for (const DpmTap &tp : dpm_linear_taps (sh, m.height, false))
      rows.push_back ({{tp.index, float_bits (tp.w0), float_bits (tp.w1), 0}});
  }
  // correlation jobs: every bank on every level it applies to
  std::vector<cl_int> cj;
  int items = 0;
  auto part_level = [&] (int li) { return li + dp.interval < nl && g.levels[li + dp.interval].nx > 0; };
  std::vector<std::vector<FeatureLevel>> fft_levels (banks_.size ());
  for (size_t bi = 0; bi < banks_.size (); bi++) {
    const Bank &b = banks_[bi];
    for (int li = 0; li < nl; li++) {
      const DpmLevel &l = dp.levels[li];
      if (!(b.root ? g.levels[li].nx > 0 : part_level (li)))
        continue;
      const int vw = l.feat_w - b.cols + 1, vh = l.feat_h - b.rows + 1;
      if (vw <= 0 || vh <= 0)
        continue;
      if (b.fft) {
        fft_levels[bi].push_back ({l.feat_h, l.feat_w, l.feat_offset, 0});
        continue;
      }
      cj.insert (cj.end (), {li, b.rows, b.cols, static_cast<cl_int> (b.filters.size ()), b.first_plane,
                             b.coef_offset, items, vw});
      items += gpu_schedule_ ? vw * vh : vh * ((vw + kTile - 1) / kTile);
    }
  }
  corr_items_ = items;
  // distance transform jobs: every part on every part level
  std::vector<cl_int> dj;
  int row_items = 0, col_items = 0, k = 0;
  for (const DpmComponent &c : model_.components)
    for (const DpmPart &part : c.parts) {
      for (int li = 0; li < nl; li++) {
        const DpmLevel &l = dp.levels[li];
        const int vw = l.feat_w - part.filter.cols + 1, vh = l.feat_h - part.filter.rows + 1;
        if (!part_level (li) || vw <= 0 || vh <= 0)
          continue;
        const int W = l.feat_w + 2 * kDpmHalfWindow, H = l.feat_h + 2 * kDpmHalfWindow;
        dj.insert (dj.end (), {li, plane_of_.at (&part.filter), vw, vh, row_items, col_items,
                               k * 2 * (2 * kDpmHalfWindow + 1), k});
        row_items += gpu_schedule_ ? W * vh : vh;
        col_items += gpu_schedule_ ? W * H : H;
      }
      k++;
    }
  dt_row_items_ = row_items;
  dt_col_items_ = col_items;
  // score jobs: every component on every root level with positions
  std::vector<cl_int> sj;
  items = 0;
  for (int c = 0; c < static_cast<int> (model_.components.size ()); c++) {
    const DpmComponent &comp = model_.components[c];
    for (int li = dp.interval; li < nl; li++) {
      const DpmRange r = dpm_root_range (model_, dp, li, c);
      if (r.x1 <= r.x0)
        continue;
      const double loc = (li < 2 * dp.interval ? comp.location[1] : 0.0) +
                         (li >= 2 * dp.interval && li < 6 * dp.interval ? comp.location[2] : 0.0);
      sj.insert (sj.end (), {c, li, r.x0, r.x1, r.y0, r.y1, items,
                             float_bits (static_cast<float> (comp.bias + loc))});
      items += (r.x1 - r.x0) * (r.y1 - r.y0);
    }
  }
  score_items_ = items;
  npixels_ = dp.pixels;
  ncells_ = dp.cells;
  nfeat_ = dp.feat_plane;
  for (auto [m, v] : {std::pair<cl::Mem *, const std::vector<cl_int> *> {&levels_, &lv},
                      {&image_tab_, &im},
                      {&corr_jobs_, &cj},
                      {&dt_jobs_, &dj},
                      {&score_jobs_, &sj}})
    if (Error e = cl::upload_vector (dev, m, *v))
      return e;
  if (Error e = cl::upload_vector (dev, &cols_, cols))
    return e;
  if (Error e = cl::upload_vector (dev, &rows_, rows))
    return e;
  const size_t plane = std::max<size_t> (dp.feat_plane, 1), dtp = std::max<size_t> (dp.dt_plane, 1);
  const size_t real = fp64_ ? sizeof (double) : sizeof (float);
  // together, so that a budget that refuses them says their whole size
  if (Error e = cl::make_buffers (dev, {{&pix_, std::max<size_t> (dp.pixels, 1) * real},
                                        {&grad_o_, std::max<size_t> (dp.pixels, 1)},
                                        {&grad_v_, std::max<size_t> (dp.pixels, 1) * real},
                                        {&cells_buf_, std::max<size_t> (dp.cells, 1) * 20 * real},
                                        {&feats_, (plane * kDpmDims + 2 * kTile) * sizeof (float)},
                                        {&resp_, plane * std::max (nplanes_, 1) * sizeof (float)},
                                        {&dt_rows_buf_, dtp * std::max (nparts_, 1) * sizeof (float)},
                                        {&dt_, dtp * std::max (nparts_, 1) * sizeof (float)}}))
    return e;
  for (size_t bi = 0; bi < banks_.size (); bi++)
    if (ffts_[bi])
      if (Error e = ffts_[bi]->geometry (fft_levels[bi], plane, feats_, fft_thresholds_))
        return e;
  resp_plane_ = plane;
  // one images kernel per generation
  images_.clear ();
  layout_ = layout;
  for (int gen = 0; gen < std::max (dp.generations, 1); gen++) {
    int first = 0, count = 0;
    size_t npix = 0;
    for (size_t i = 0; i < dp.images.size (); i++)
      if (dp.images[i].generation == gen) {
        if (count++ == 0)
          first = static_cast<int> (i);
        npix += static_cast<size_t> (dp.images[i].width) * dp.images[i].height;
      }
    Generation g;
    if (Error e = g.kernel.create (*program_, "dpm_images"))
      return e;
    g.first = first;
    g.count = count;
    g.items = npix;
    images_.push_back (std::move (g));
  }
  const cl_int nlv = std::max (nl, 1);
  const cl_int per_row = gpu_schedule_ ? 0 : 1;
  for (Error e :
       {gradients_.set (pix_, image_tab_, cl_int (std::max<size_t> (dp.images.size (), 1)), cl_int (npixels_), grad_o_,
                        grad_v_),
        cells_.set (grad_o_, grad_v_, image_tab_, levels_, nlv, cl_int (ncells_), cells_buf_),
        features_.set (cells_buf_, levels_, nlv, cl_int (nfeat_), cl_int (dp.pad_x), cl_int (dp.pad_y), feats_,
                       cl_int (plane)),
        correlate_.set (feats_, cl_int (plane), levels_, corr_jobs_, cl_int (cj.size () / 8), cl_int (corr_items_),
                        coef_, resp_),
        dt_rows_.set (resp_, cl_int (plane), levels_, dt_jobs_, cl_int (dj.size () / 8), cl_int (dt_row_items_), costs_,
                      dt_rows_buf_, cl_int (dtp), per_row),
        dt_cols_.set (levels_, dt_jobs_, cl_int (dj.size () / 8), cl_int (dt_col_items_), costs_, dt_rows_buf_, dt_,
                      cl_int (dtp), per_row)})
    if (e)
      return e;
  dt_plane_ = static_cast<cl_int> (dtp);
  score_jobs_count_ = static_cast<cl_int> (sj.size () / 8);
  dev_ = &dev;
  return parameters (p);
}

Error DpmFamily::parameters (const SearchParams &p) {
  if (!dev_)
    return {};
  threshold_ = float_at_least (p.threshold ? *p.threshold : model_.threshold);
  return {};
}

Error DpmFamily::enqueue (const FrameBuffers &frame, Launcher &l) {
  const size_t local = gpu_schedule_ ? 64 : 8;
  const cl_int4 rgb = rgb_offsets (layout_.format);
  for (size_t gen = 0; gen < images_.size (); gen++) {
    Generation &g = images_[gen];
    if (gen > 0 && g.items == 0)
      continue;
    if (Error e = g.kernel.set (frame.src, cl_int (layout_.stride ()), cl_int (layout_.bpp ()), rgb,
                                cl_int (layout_.width), cl_int (layout_.height), image_tab_, g.first, g.count,
                                cl_int (g.items), cols_, rows_, pix_, frame.candidates))
      return e;
    if (Error e = l.launch (g.kernel.get (), round_up (std::max<size_t> (g.items, 1), local), local, kPyramid))
      return e;
  }
  if (score_items_ == 0)
    return {};
  for (auto [k, n, phase] : {std::tuple<cl_kernel, size_t, int> {gradients_.get (), npixels_, kFeatures},
                             {cells_.get (), ncells_, kFeatures},
                             {features_.get (), nfeat_, kFeatures},
                             {correlate_.get (), corr_items_, kFilters}})
    if (n > 0)
      if (Error e = l.launch (k, round_up (n, local), local, phase))
        return e;
  for (size_t bi = 0; bi < banks_.size (); bi++)
    if (ffts_[bi])
      if (Error e = ffts_[bi]->enqueue_dense (resp_, resp_plane_, banks_[bi].first_plane, kFilters, l))
        return e;
  for (auto [k, n] : {std::pair<cl_kernel, size_t> {dt_rows_.get (), dt_row_items_}, {dt_cols_.get (), dt_col_items_}})
    if (n > 0)
      if (Error e = l.launch (k, round_up (n, local), local, kParts))
        return e;
  if (Error e = scores_.set (resp_, cl_int (resp_plane_), dt_, dt_plane_, levels_, cl_int (plan_.interval), score_jobs_,
                             score_jobs_count_, cl_int (score_items_), comps_, parts_, threshold_, frame.candidates,
                             frame.capacity))
    return e;
  const size_t sl = compact_ ? kWg : local;
  return l.launch (scores_.get (), round_up (score_items_, sl), sl, kParts);
}

std::vector<Detection> DpmFamily::finish (const std::vector<RawHit> &hits, const PyramidGeometry &g,
                                          const SearchParams &p) const {
  std::vector<DpmBox> boxes;
  boxes.reserve (hits.size ());
  for (const RawHit &h : hits) {
    const DpmHit d = dpm_hit (model_, h);
    if (d.level >= static_cast<int> (plan_.levels.size ()))
      continue;
    DpmBox b = dpm_window_box (model_, plan_, d.level, d.comp, d.rx, d.ry);
    b.score = h.score;
    // objects out of the size range asked for are left out before the
    // suppression (0: unbounded; cv::dpm has no such bounds)
    const double w = static_cast<int> (b.x2) - static_cast<int> (b.x1) + 1,
                 hh = static_cast<int> (b.y2) - static_cast<int> (b.y1) + 1;
    if (w < p.min_size.width || hh < p.min_size.height || (p.max_size.width > 0 && w > p.max_size.width) ||
        (p.max_size.height > 0 && hh > p.max_size.height))
      continue;
    boxes.push_back (b);
  }
  std::vector<Detection> out;
  for (const DpmBox &b : dpm_suppress (std::move (boxes))) {
    // cv::dpm's box (the integer part of its corners) may reach past the
    // frame: the part inside it (the suppression saw the whole box)
    const int x1 = static_cast<int> (b.x1), y1 = static_cast<int> (b.y1);
    Detection d;
    if (scored_object ({x1, y1, static_cast<int> (b.x2) - x1 + 1, static_cast<int> (b.y2) - y1 + 1}, b.score,
                       g.image_width, g.image_height, &d))
      out.push_back (d);
  }
  return out;
}

class QueueLauncher final : public Launcher {
public:
  explicit QueueLauncher (cl_command_queue q) : q_ (q) {}
  Error launch (cl_kernel k, size_t global, size_t local, int) override {
    GPUDETECT_CL_TRY (clEnqueueNDRangeKernel (q_, k, 1, nullptr, &global, local ? &local : nullptr, 0, nullptr, nullptr));
    return {};
  }
  Error library (const std::function<Error (cl_command_queue)> &enqueue, int) override { return enqueue (q_); }

private:
  cl_command_queue q_;
};

} // namespace

Error dpm_device_features (const cl::Device &dev, bool gpu_schedule, bool fp64, const DpmModel &m,
                                 const uint8_t *grey, int width, int height, DpmPlan *plan, std::vector<float> *planes) {
  DpmFamily f (m);
  f.allow_fp64 (fp64);
  const Tuning tuning;
  const BuildEnv env{dev, tuning, gpu_schedule};
  ProgramSpec spec;
  cl::Program prog;
  if (Error e = f.program (env, &spec))
    return e.message;
  std::string opts = "-cl-std=CL1.2 " + spec.options;
  if (!spec.optional_option.empty ())
    opts.erase (opts.find (spec.optional_option), spec.optional_option.size ());
  if (Error e = cl::build_program (dev, spec.source, spec.hash, opts, &prog))
    return e.message;
  if (Error e = f.setup (env, prog))
    return e.message;
  const SearchParams sp;
  const PyramidGeometry g = f.plan (width, height, sp);
  if (Error e = f.geometry (dev, g, {PixelFormat::Gray8, width, height}, sp))
    return e.message;
  cl::Mem src, cand;
  constexpr cl_uint kCapacity = 1024;
  if (Error e = cl::make_buffer (dev, &src, static_cast<size_t> (width) * height, CL_MEM_READ_ONLY,
                                     grey))
    return e.message;
  if (Error e = cl::make_buffer (dev, &cand, (kCandidateHeader + 2 * kCapacity) * sizeof (cl_uint)))
    return e.message;
  QueueLauncher l (dev.queue.get ());
  if (Error e = f.enqueue ({src, cand, kCapacity}, l))
    return e.message;
  if (Error e = f.read_features (planes))
    return e.message;
  *plan = f.dpm_plan ();
  return {};
}

DpmHit dpm_hit (const DpmModel &m, const RawHit &h) {
  const int nc = static_cast<int> (m.components.size ());
  return {h.level, h.x % nc, h.x / nc, h.y};
}

std::unique_ptr<Family> make_dpm_family (DpmModel model) { return std::make_unique<DpmFamily> (std::move (model)); }

} // namespace gpudetect
