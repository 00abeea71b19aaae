// The random-forest cascade on the device (kernels/forest.cl): the frame
// blurred, every level of the pyramid resampled, shrunk and blurred again into
// one atlas (three launches), then
// - GPU schedule: forest_first over every window up to the first regroup
//   stage, and one forest_more per regroup stage over the windows still
//   alive, compacted with their running sums (at most 4 regroup stages: 8
//   launches a frame);
// - CPU schedule: forest_rows, every window of a row in order.
// Both give the reference's raw windows (model.h: forest_evaluate).
#include "family.h"

#include "kernels.h"

#include <algorithm>
#include <climits>
#include <cstring>

namespace gpudetect {

namespace {

// Device layouts (must match kernels/forest.cl).
struct DevStage {
  cl_int first, ntrees;
  cl_long reject;
};
static_assert (sizeof (DevStage) == 16, "forest_stage_t");
constexpr size_t kItemBytes = 16; // forest_item_t
constexpr int kWg = 256;          // WGF (kernels/compact.cl)
const std::vector<int> kDefaultRegroup = {11, 154, 600};
// A list holds every window, up to this many (a full list counts the rest as
// lost).
constexpr size_t kMaxListItems = size_t (1) << 22;

class ForestFamily final : public Family {
public:
  explicit ForestFamily (ForestModel m) : model_ (std::move (m)) {
    info_.path = model_.path;
    info_.family = "forest";
    info_.label = model_.default_label;
    info_.window = {model_.window_width, model_.window_height};
    info_.description = "random forest, " + std::to_string (model_.stages.size ()) + " stages, " +
                        std::to_string (model_.trees ()) + " trees of " + std::to_string (model_.nodes_per_tree) +
                        " nodes, window " + std::to_string (model_.window_width) + "x" +
                        std::to_string (model_.window_height) + ", shrink " + std::to_string (model_.shrink) + ", " +
                        std::to_string (model_.levels_per_octave) + " levels an octave";
  }

  const ModelInfo &info () const override { return info_; }
  const char *lost_hint () const override {
    return "a regroup list was full (it holds up to 4 Mi windows); a larger min-size or a smaller search region "
           "gives fewer windows";
  }
  const char *threshold_meaning () const override {
    return "the least final sum of a window that passes every stage";
  }
  bool gpu_schedule () const override { return gpu_schedule_; }

  cl::Error program (const BuildEnv &env, ProgramSpec *out) override;
  cl::Error setup (const BuildEnv &env, const cl::Program &program) override;
  // The model's pyramid, or the one the search parameters ask for: the
  // window keeps its cells, M' x M' pixels each.
  PyramidGeometry plan (int width, int height, const SearchParams &p) const override {
    const int m = p.shrink > 0 ? p.shrink : model_.shrink;
    return plan_pyramid_octaves (width, height, model_.cells_x () * m, model_.cells_y () * m,
                                 p.levels_per_octave > 0 ? p.levels_per_octave : model_.levels_per_octave, m,
                                 p.min_size, p.max_size);
  }
  cl::Error geometry (const cl::Device &dev, const PyramidGeometry &g, const FrameLayout &layout,
                      const SearchParams &p) override;
  cl::Error parameters (const SearchParams &p) override;
  cl::Error enqueue (const FrameBuffers &frame, Launcher &l) override;
  std::vector<Detection> finish (const std::vector<RawHit> &hits, const PyramidGeometry &g,
                                 const SearchParams &p) const override;

private:
  cl_long gamma (const SearchParams &p) const { return forest_final (p.threshold ? *p.threshold : model_.threshold); }
  // Kernels that emit candidates and the index of their candidates argument.
  std::vector<std::pair<cl_kernel, cl_uint>> emitters () const;

  ForestModel model_;
  ModelInfo info_;
  bool gpu_schedule_ = true;
  int local_nodes_ = 1024;
  std::vector<int> bounds_; // phases: stages [bounds_[k], bounds_[k + 1])
  size_t groups_ = 0;       // persistent work-groups of forest_more
  size_t lanes_ = 1;        // work-items a cell row in the preprocessing
  cl::Kernel blur_, shrink_, cells_, first_, rows_;
  std::vector<cl::Kernel> more_;
  cl::Mem stages_, counters_;
  cl::Mem nodes_, chunks_, levels_, xtab_, ytab_, xfirst_, yfirst_, cell_rows_, segs_, wrows_;
  cl::Mem blurred_, raw_, atlas_;
  std::vector<cl::Mem> lists_;
  int pixels_ = 0, height_ = 0, ncell_rows_ = 0, nsegs_ = 0, nwrows_ = 0, nwindows_ = 0;
  cl_mem bound_src_ = nullptr, bound_cand_ = nullptr;
  cl_long gamma_ = 0;
};

cl::Error ForestFamily::program (const BuildEnv &env, ProgramSpec *out) {
  const cl::DeviceInfo &dev = env.dev.info;
  // local memory: a chunk of nodes, the compaction's scratch
  local_nodes_ = dev.local_mem >= 48 * 1024 ? 2048 : 1024;
  gpu_schedule_ = env.gpu_schedule && dev.max_work_group >= static_cast<size_t> (kWg) &&
                  dev.local_mem >= static_cast<cl_ulong> (local_nodes_ * 16 + kWg * 4 + 64);
  const std::vector<int> &regroup = env.tuning.forest_regroup_set ? env.tuning.forest_regroup : kDefaultRegroup;
  const int nstages = static_cast<int> (model_.stages.size ());
  bounds_ = {0};
  if (gpu_schedule_)
    for (int r : regroup)
      if (r > bounds_.back () && r < nstages)
        bounds_.push_back (r);
  bounds_.push_back (nstages);
  lanes_ = gpu_schedule_ ? 32 : 1;
  std::string opts = " -D FOREST_K=" + std::to_string (model_.nodes_per_tree) +
                     " -D FOREST_B0=" + std::to_string (model_.blur[0]) + " -D FOREST_B1=" +
                     std::to_string (model_.blur[1]) + " -D FOREST_LANES=" + std::to_string (lanes_) + " -D FOREST_LOCAL_NODES=" +
                     std::to_string (local_nodes_);
  // NVIDIA GPUs: the compaction's counts through warp votes (kernels/warp.cl),
  // retried without where the driver refuses the inline PTX.
  out->options = opts;
  if (gpu_schedule_)
    add_warp_ptx (dev, out);
  out->source = std::string (kernels::warp_source) + "\n" + kernels::compact_source + "\n" +
                kernels::candidates_source + "\n" + kernels::worklist_source + "\n" + kernels::pyramid_source + "\n" +
                kernels::forest_source;
  uint64_t hash = kernels::warp_hash;
  for (uint64_t h : {kernels::compact_hash, kernels::candidates_hash, kernels::worklist_hash, kernels::pyramid_hash,
                     kernels::forest_hash})
    hash = cl::fnv1a (&h, sizeof h, hash);
  out->hash = hash;
  groups_ = static_cast<size_t> (std::max<cl_uint> (dev.compute_units, 1)) * 8;
  return {};
}

cl::Error ForestFamily::setup (const BuildEnv &env, const cl::Program &program) {
  for (const auto &[k, name] : {std::pair<cl::Kernel *, const char *> {&blur_, gpu_schedule_ ? "forest_blur_frame"
                                                                                              : "forest_blur_frame_rows"},
                                {&shrink_, "forest_shrink"},
                                {&cells_, "forest_blur_cells"}})
    if (cl::Error e = cl::create_kernel (program, name, k))
      return e;
  if (gpu_schedule_) {
    if (cl::Error e = cl::create_kernel (program, "forest_first", &first_))
      return e;
    more_.resize (bounds_.size () - 2);
    for (cl::Kernel &k : more_)
      if (cl::Error e = cl::create_kernel (program, "forest_more", &k))
        return e;
  } else if (cl::Error e = cl::create_kernel (program, "forest_rows", &rows_)) {
    return e;
  }
  // stages: their trees side by side (a tree shared by stages is copied, its
  // leaves divided by each stage's own count)
  std::vector<DevStage> st;
  cl_int first = 0;
  for (const ForestModel::Stage &s : model_.stages) {
    const int n = s.last - s.first + 1;
    st.push_back ({first, n, forest_reject_below (s.threshold)});
    first += n * model_.nodes_per_tree;
  }
  if (cl::Error e = cl::upload_vector (env.dev, &stages_, st))
    return e;
  return cl::make_buffer (env.dev, &counters_, 16 * sizeof (cl_uint));
}

cl::Error ForestFamily::geometry (const cl::Device &dev, const PyramidGeometry &g, const FrameLayout &layout,
                                  const SearchParams &p) {
  gamma_ = gamma (p);
  const int K = model_.nodes_per_tree;
  // nodes, with their values' offsets in this atlas's stride
  std::vector<cl_int4> nodes;
  for (const ForestModel::Stage &s : model_.stages) {
    const int n = s.last - s.first + 1;
    for (int t = s.first; t <= s.last; t++)
      for (int i = 0; i < K; i++) {
        const ForestModel::Node &nd = model_.nodes[static_cast<size_t> (t) * K + i];
        if (nd.left < 0) {
          const int64_t v = forest_leaf (nd.score, n);
          nodes.push_back ({{static_cast<cl_int> (static_cast<uint32_t> (v)),
                             static_cast<cl_int> (static_cast<uint64_t> (v) >> 32), 0, -1}});
        } else {
          nodes.push_back ({{nd.y1 * g.stride + nd.x1, nd.y2 * g.stride + nd.x2, forest_split (nd.threshold),
                             nd.left}});
        }
      }
  }
  // chunks of whole stages whose nodes fit local memory, phase by phase
  // (int4: first stage, end stage, first node, nodes)
  std::vector<int> stage_node (model_.stages.size () + 1, 0);
  for (size_t s = 0; s < model_.stages.size (); s++)
    stage_node[s + 1] = stage_node[s] + (model_.stages[s].last - model_.stages[s].first + 1) * K;
  std::vector<cl_int4> chunks;
  std::vector<int> phase_chunk = {0};
  auto chunk = [&] (int s0, int s1) {
    chunks.push_back ({{s0, s1, stage_node[s0], stage_node[s1] - stage_node[s0]}});
  };
  for (size_t k = 0; gpu_schedule_ && k + 1 < bounds_.size (); k++) {
    int s0 = bounds_[k];
    for (int s = bounds_[k]; s < bounds_[k + 1]; s++)
      if (stage_node[s + 1] - stage_node[s0] > local_nodes_) {
        chunk (s0, s);
        s0 = s;
      }
    chunk (s0, bounds_[k + 1]);
    phase_chunk.push_back (static_cast<int> (chunks.size ()));
  }

  std::vector<cl_int8> lv;
  std::vector<int32_t> cell_rows, wrows;
  std::vector<cl_int2> segs;
  for (size_t li = 0; li < g.levels.size (); li++) {
    const PyramidLevel &l = g.levels[li];
    const int cw = l.width / l.step, ch = l.height / l.step, idx = static_cast<int> (li);
    lv.push_back ({{l.x0, l.y0, cw, ch, l.nx, l.ny, l.first_window, 0}});
    for (int y = 0; y < ch; y++)
      cell_rows.push_back (idx | (y << 10));
    for (int iy = 0; iy < l.ny; iy++)
      wrows.push_back (idx | (iy << 10));
    for (int i = 0; i < l.nx * l.ny; i += kWg)
      segs.push_back ({{idx, i}});
  }
  pixels_ = layout.width * layout.height;
  height_ = layout.height;
  ncell_rows_ = static_cast<int> (cell_rows.size ());
  nwrows_ = static_cast<int> (wrows.size ());
  nsegs_ = static_cast<int> (segs.size ());
  nwindows_ = g.total_windows;
  if (layout.height >= (1 << 20))
    return {"frames of " + std::to_string (layout.height) + " rows are not supported"};
  for (const auto &[m, v] : {std::pair<cl::Mem *, const std::vector<int32_t> *> {&xtab_, &g.xtab},
                             {&ytab_, &g.ytab},
                             {&xfirst_, &g.xtab_first},
                             {&yfirst_, &g.ytab_first},
                             {&cell_rows_, &cell_rows},
                             {&wrows_, &wrows}})
    if (cl::Error e = cl::upload_vector (dev, m, *v))
      return e;
  if (cl::Error e = cl::upload_vector (dev, &nodes_, nodes)) return e;
  if (cl::Error e = cl::upload_vector (dev, &chunks_, chunks)) return e;
  if (cl::Error e = cl::upload_vector (dev, &levels_, lv)) return e;
  if (cl::Error e = cl::upload_vector (dev, &segs_, segs)) return e;
  const size_t plane = static_cast<size_t> (std::max (g.rows, 1)) * std::max (g.stride, 1) * sizeof (cl_int);
  if (cl::Error e = cl::make_buffer (dev, &blurred_, static_cast<size_t> (std::max (pixels_, 1)) * sizeof (cl_ushort)))
    return e;
  if (cl::Error e = cl::make_buffer (dev, &raw_, plane)) return e;
  if (cl::Error e = cl::make_buffer (dev, &atlas_, plane)) return e;

  const cl_int width = layout.width, height = layout.height, stride = g.stride;
  bound_src_ = bound_cand_ = nullptr;
  GPUDETECT_CL_TRY (cl::set_args (blur_.get (), cl::Mem (), cl_int (layout.stride ()), cl_int (layout.bpp ()),
                                  rgb_offsets (layout.format), width, height, blurred_, counters_));
  const cl_int shrink = g.levels.empty () ? 1 : g.levels[0].step;
  GPUDETECT_CL_TRY (cl::set_args (shrink_.get (), blurred_, width, levels_, xtab_, ytab_, xfirst_, yfirst_,
                                  cell_rows_, cl_int (ncell_rows_), shrink, raw_, stride));
  GPUDETECT_CL_TRY (cl::set_args (cells_.get (), levels_, cell_rows_, cl_int (ncell_rows_), raw_, atlas_, stride));
  if (!gpu_schedule_) {
    GPUDETECT_CL_TRY (cl::set_args (rows_.get (), levels_, wrows_, cl_int (nwrows_), atlas_, stride, nodes_, stages_,
                                    cl_int (model_.stages.size ()), gamma_));
    return {};
  }
  // List k, the windows alive before phase k + 1, in buffer k % 2: phase k
  // reads one and writes the other, so two buffers serve every phase (the
  // counters stay one pair per list).
  const size_t phases = bounds_.size () - 1;
  const cl_uint cap = static_cast<cl_uint> (std::min<size_t> (std::max (nwindows_, 1), kMaxListItems));
  lists_.resize (std::min<size_t> (phases - 1, 2));
  for (cl::Mem &m : lists_)
    if (cl::Error e = cl::make_buffer (dev, &m, cap * kItemBytes))
      return e;
  auto list = [&] (size_t k) -> const cl::Mem & { return lists_[k % 2]; };
  auto last = [&] (size_t k) { return cl_int (k + 1 == phases); };
  GPUDETECT_CL_TRY (cl::set_args (first_.get (), levels_, segs_, atlas_, stride, nodes_, stages_, chunks_,
                                  cl_int (phase_chunk[0]), cl_int (phase_chunk[1]), last (0), gamma_,
                                  phases > 1 ? list (0) : atlas_, cl_int (0), phases > 1 ? cap : 0u, counters_));
  for (size_t k = 1; k < phases; k++)
    GPUDETECT_CL_TRY (cl::set_args (more_[k - 1].get (), atlas_, nodes_, stages_, chunks_, cl_int (phase_chunk[k]),
                                    cl_int (phase_chunk[k + 1]), last (k), gamma_, list (k - 1),
                                    cl_int (2 * (k - 1)), cap, k + 1 < phases ? list (k) : atlas_,
                                    cl_int (2 * k), k + 1 < phases ? cap : 0u, counters_));
  return {};
}

std::vector<std::pair<cl_kernel, cl_uint>> ForestFamily::emitters () const {
  if (!gpu_schedule_)
    return {{rows_.get (), 9}};
  std::vector<std::pair<cl_kernel, cl_uint>> v = {{first_.get (), 15}};
  for (const cl::Kernel &k : more_)
    v.push_back ({k.get (), 15});
  return v;
}

cl::Error ForestFamily::parameters (const SearchParams &p) {
  // gamma: argument 8 of forest_rows, 10 of forest_first, 7 of forest_more
  gamma_ = gamma (p);
  if (!gpu_schedule_) {
    GPUDETECT_CL_TRY (cl::set_arg (rows_.get (), 8, gamma_));
    return {};
  }
  GPUDETECT_CL_TRY (cl::set_arg (first_.get (), 10, gamma_));
  for (cl::Kernel &k : more_)
    GPUDETECT_CL_TRY (cl::set_arg (k.get (), 7, gamma_));
  return {};
}

cl::Error ForestFamily::enqueue (const FrameBuffers &frame, Launcher &l) {
  if (bound_src_ != frame.src.get ()) {
    GPUDETECT_CL_TRY (cl::set_arg (blur_.get (), 0, frame.src));
    bound_src_ = frame.src.get ();
  }
  if (bound_cand_ != frame.candidates.get ()) {
    GPUDETECT_CL_TRY (cl::set_arg (blur_.get (), 8, frame.candidates));
    for (const auto &[k, at] : emitters ())
      GPUDETECT_CL_TRY (cl::set_args_from (k, at, frame.candidates, frame.capacity));
    bound_cand_ = frame.candidates.get ();
  }
  if (cl::Error e = gpu_schedule_ ? l.launch (blur_.get (), round_up (std::max (pixels_, 1), 64), 64, Phase::Pyramid)
                                  : l.launch (blur_.get (), round_up (height_, 8), 8, Phase::Pyramid))
    return e;
  if (nwindows_ == 0)
    return {};
  const size_t local = gpu_schedule_ ? 64 : 8;
  if (cl::Error e = l.launch (shrink_.get (), round_up (ncell_rows_ * lanes_, local), local, Phase::Pyramid))
    return e;
  if (cl::Error e = l.launch (cells_.get (), round_up (ncell_rows_ * lanes_, local), local, Phase::Integral))
    return e;
  if (!gpu_schedule_)
    return l.launch (rows_.get (), round_up (nwrows_, 8), 8, Phase::First);
  if (cl::Error e = l.launch (first_.get (), static_cast<size_t> (nsegs_) * kWg, kWg, Phase::First))
    return e;
  for (cl::Kernel &k : more_)
    if (cl::Error e = l.launch (k.get (), groups_ * kWg, kWg, Phase::Rest))
      return e;
  return {};
}

std::vector<Detection> ForestFamily::finish (const std::vector<RawHit> &hits, const PyramidGeometry &g,
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
  for (const GroupedRect &gr : group_rectangles (raw, p.min_neighbors, 0.2, &scores)) {
    const Rect r = clip_rect (gr.rect, g.image_width, g.image_height);
    if (r.width > 0 && r.height > 0)
      out.push_back ({r, gr.neighbors, gr.confidence, gr.score, 0});
  }
  return out;
}

} // namespace

std::unique_ptr<Family> make_forest_family (ForestModel model) {
  return std::make_unique<ForestFamily> (std::move (model));
}

} // namespace gpudetect
