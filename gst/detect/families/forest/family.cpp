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

#include "cl/kernel.h"

#include "kernels.h"

#include <algorithm>
#include <climits>
#include <cstring>

namespace gpudetect {

namespace {

// The phases a frame's launches are timed under (Family::phases).
enum : int { kPyramid, kChannels, kFirst, kRest };

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

class ForestFamily final : public ModelFamily<ForestModel> {
public:
  explicit ForestFamily (ForestModel m)
      : ModelFamily ("forest", std::move (m), {"pyramid", "channels", "first stages", "later stages"},
                     "the least final sum of a window that passes every stage") {
    info_.description = "random forest, " + std::to_string (model_.stages.size ()) + " stages, " +
                        std::to_string (model_.trees ()) + " trees of " + std::to_string (model_.nodes_per_tree) +
                        " nodes, window " + std::to_string (model_.window_width) + "x" +
                        std::to_string (model_.window_height) + ", shrink " + std::to_string (model_.shrink) + ", " +
                        std::to_string (model_.levels_per_octave) + " levels an octave";
    info_.window = {model_.window_width, model_.window_height};
  }

  const char *lost_hint () const override {
    return "a regroup list was full (it holds up to 4 Mi windows); a larger min-size or a smaller search region "
           "gives fewer windows";
  }

  std::string memory_hint () const override {
    return "the pyramid's levels an octave (the model's " + std::to_string (model_.levels_per_octave) +
           ", property levels-per-octave) and min-size";
  }

  Error options (const Tuning &t) override {
    return tuning_list (t, "forest-regroup", 4, 1, 100000, true, true, "increasing stages", &regroup_, &regroup_set_);
  }
  GPUDETECT_FAMILY_CALLS
  Error parameters (const SearchParams &p) override;
  // Regions: each blurred into an image of the regions side by side (its
  // edges replicated, as a region cut out would be), the pyramid's tables
  // reading that image.
  bool searches_regions () const override { return true; }
  PyramidGeometry plan_regions (int width, int height, const std::vector<Region> &regions,
                                const SearchParams &p) const override;

private:
  // forest-regroup=11,154,600 (GPU schedule): the stages before which the
  // windows still alive are compacted into a list and the evaluation is
  // launched again over it ("none": one dense launch through every stage).
  std::vector<int> regroup_;
  bool regroup_set_ = false;
  int local_nodes_ = 1024;
  std::vector<int> bounds_; // phases: stages [bounds_[k], bounds_[k + 1])
  size_t groups_ = 0;       // persistent work-groups of forest_more
  size_t lanes_ = 1;        // work-items a cell row in the preprocessing
  // kernels/forest.cl.  FOREST_MODEL: nodes, stages, chunks.
  using Mem = cl::Mem;
  // forest_blur_frame(_rows): src, src stride, bpp, rgb, width, height, blurred, counters, candidates
  cl::TypedKernel<Mem, cl_int, cl_int, cl_int4, cl_int, cl_int, Mem, Mem, Mem> blur_;
  // forest_blur_regions: src, src stride, bpp, rgb, regions, count, image width, image pixels, blurred, counters,
  // candidates
  cl::TypedKernel<Mem, cl_int, cl_int, cl_int4, Mem, cl_int, cl_int, cl_int, Mem, Mem, Mem> blur_regions_;
  cl::Mem regions_; // int8 a region: frame x, y, width, height, image x, y
  int nregions_ = 0, image_width_ = 0;
  bool by_regions_ = false; // the geometry is several regions' (blur_regions_)
  // forest_shrink: blurred, width, levels, xtab, ytab, xfirst, yfirst, cell rows, rows, M, raw, stride
  cl::TypedKernel<Mem, cl_int, Mem, Mem, Mem, Mem, Mem, Mem, cl_int, cl_int, Mem, cl_int> shrink_;
  // forest_blur_cells: levels, cell rows, rows, raw, atlas, stride
  cl::TypedKernel<Mem, Mem, cl_int, Mem, Mem, cl_int> cells_;
  // forest_first: levels, segs, atlas, stride, model, c0, c1, last, gamma, out list, out at, out capacity,
  // counters, candidates
  cl::TypedKernel<Mem, Mem, Mem, cl_int, Mem, Mem, Mem, cl_int, cl_int, cl_int, cl_long, Mem, cl_int, cl_uint, Mem,
                  Mem, cl_uint>
      first_;
  // forest_more: atlas, model, c0, c1, last, gamma, in list, in at, in capacity, out list, out at, out capacity,
  // counters, candidates
  using More = cl::TypedKernel<Mem, Mem, Mem, Mem, cl_int, cl_int, cl_int, cl_long, Mem, cl_int, cl_uint, Mem, cl_int,
                               cl_uint, Mem, Mem, cl_uint>;
  std::vector<More> more_;
  // forest_rows (CPU schedule): levels, window rows, rows, atlas, stride, nodes, stages, nstages, gamma, candidates
  cl::TypedKernel<Mem, Mem, cl_int, Mem, cl_int, Mem, Mem, cl_int, cl_long, Mem, cl_uint> rows_;
  FrameLayout layout_;
  cl_int stride_ = 0, shrink_factor_ = 1;
  std::vector<int> phase_chunk_; // the first chunk of each phase, then the end
  cl_uint list_cap_ = 0;
  cl::Mem stages_, counters_;
  cl::Mem nodes_, chunks_, levels_, xtab_, ytab_, xfirst_, yfirst_, cell_rows_, segs_, wrows_;
  cl::Mem blurred_, raw_, atlas_;
  std::vector<cl::Mem> lists_;
  int pixels_ = 0, height_ = 0, ncell_rows_ = 0, nsegs_ = 0, nwrows_ = 0, nwindows_ = 0;
  cl_long gamma_ = 0;
};

// The model's pyramid, or the one the search parameters ask for: the window
// keeps its cells, M' x M' pixels each.
PyramidGeometry ForestFamily::plan (int width, int height, const SearchParams &p) const {
  const int m = p.shrink > 0 ? p.shrink : model_.shrink;
  return plan_pyramid_octaves (width, height, model_.cells_x () * m, model_.cells_y () * m,
                               p.levels_per_octave > 0 ? p.levels_per_octave : model_.levels_per_octave, m,
                               p.min_size, p.max_size);
}

Error ForestFamily::program (const BuildEnv &env, ProgramSpec *out) {
  const cl::DeviceInfo &dev = env.dev.info;
  // local memory: a chunk of nodes, the compaction's scratch
  local_nodes_ = dev.local_mem >= 48 * 1024 ? 2048 : 1024;
  gpu_schedule_ = env.gpu_schedule && dev.max_work_group >= static_cast<size_t> (kWg) &&
                  dev.local_mem >= static_cast<cl_ulong> (local_nodes_ * 16 + kWg * 4 + 64);
  const std::vector<int> &regroup = regroup_set_ ? regroup_ : kDefaultRegroup;
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
  out->options = opts;
  groups_ = add_list_sources (dev, gpu_schedule_, out).groups;
  out->add (kernels::forest_source, kernels::forest_hash);
  return {};
}

Error ForestFamily::setup (const BuildEnv &env, const cl::Program &program) {
  for (Error e : {blur_.create (program, gpu_schedule_ ? "forest_blur_frame" : "forest_blur_frame_rows"),
                  blur_regions_.create (program, "forest_blur_regions"),
                  shrink_.create (program, "forest_shrink"), cells_.create (program, "forest_blur_cells"),
                  gpu_schedule_ ? first_.create (program, "forest_first") : rows_.create (program, "forest_rows")})
    if (e)
      return e;
  more_.resize (gpu_schedule_ ? bounds_.size () - 2 : 0); // one per regroup
  for (More &k : more_)
    if (Error e = k.create (program, "forest_more"))
      return e;
  // stages: their trees side by side (a tree shared by stages is copied, its
  // leaves divided by each stage's own count)
  std::vector<DevStage> st;
  cl_int first = 0;
  for (const ForestModel::Stage &s : model_.stages) {
    const int n = s.last - s.first + 1;
    st.push_back ({first, n, forest_reject_below (s.threshold)});
    first += n * model_.nodes_per_tree;
  }
  if (Error e = cl::upload_vector (env.dev, &stages_, st))
    return e;
  return cl::make_buffer (env.dev, &counters_, 16 * sizeof (cl_uint));
}

Error ForestFamily::geometry (const cl::Device &dev, const PyramidGeometry &g, const FrameLayout &layout,
                              const SearchParams &p) {
  if (Error e = parameters (p))
    return e;
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
  std::vector<int> &phase_chunk = phase_chunk_;
  phase_chunk = {0};
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
  // the blurred image: the frame, or the regions side by side
  image_width_ = g.source_width > 0 ? g.source_width : layout.width;
  pixels_ = image_width_ * (g.source_height > 0 ? g.source_height : layout.height);
  height_ = layout.height;
  std::vector<cl_int8> regions;
  for (size_t r = 0; r < g.regions.size () && r < g.sources.size (); r++) {
    const Region &f = g.regions[r], &a = g.sources[r];
    if (f.width > 0 && f.height > 0)
      regions.push_back ({{f.x, f.y, f.width, f.height, a.x, a.y, 0, 0}});
  }
  nregions_ = static_cast<int> (regions.size ());
  by_regions_ = !g.regions.empty ();
  if (Error e = cl::upload_vector (dev, &regions_, regions))
    return e;
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
    if (Error e = cl::upload_vector (dev, m, *v))
      return e;
  if (Error e = cl::upload_vector (dev, &nodes_, nodes)) return e;
  if (Error e = cl::upload_vector (dev, &chunks_, chunks)) return e;
  if (Error e = cl::upload_vector (dev, &levels_, lv)) return e;
  if (Error e = cl::upload_vector (dev, &segs_, segs)) return e;
  const size_t plane = static_cast<size_t> (std::max (g.rows, 1)) * std::max (g.stride, 1) * sizeof (cl_int);
  if (Error e = cl::make_buffers (dev, {{&blurred_, static_cast<size_t> (std::max (pixels_, 1)) * sizeof (cl_ushort)},
                                        {&raw_, plane},
                                        {&atlas_, plane}}))
    return e;

  layout_ = layout;
  stride_ = g.stride;
  shrink_factor_ = g.levels.empty () ? 1 : g.levels[0].step;
  if (!gpu_schedule_)
    return {};
  // List k, the windows alive before phase k + 1, in buffer k % 2: phase k
  // reads one and writes the other, so two buffers serve every phase (the
  // counters stay one pair per list).
  const size_t phases = bounds_.size () - 1;
  list_cap_ = static_cast<cl_uint> (std::min<size_t> (std::max (nwindows_, 1), kMaxListItems));
  lists_.resize (std::min<size_t> (phases - 1, 2));
  for (cl::Mem &m : lists_)
    if (Error e = cl::make_buffer (dev, &m, list_cap_ * kItemBytes))
      return e;
  return {};
}

// The kernels' final threshold, as the model stores its sums.
Error ForestFamily::parameters (const SearchParams &p) {
  gamma_ = forest_final (p.threshold ? *p.threshold : model_.threshold);
  return {};
}

PyramidGeometry ForestFamily::plan_regions (int width, int height, const std::vector<Region> &regions,
                                            const SearchParams &p) const {
  // The regions side by side in rows no wider than the widest of the frame
  // and the regions.
  int across = width;
  for (const Region &r : regions)
    across = std::max (across, r.width);
  std::vector<Region> places;
  int x = 0, y = 0, row = 0;
  for (const Region &r : regions) {
    if (x + r.width > across) {
      x = 0;
      y += row;
      row = 0;
    }
    places.push_back ({x, y, r.width, r.height});
    x += r.width;
    row = std::max (row, r.height);
  }
  std::vector<PyramidGeometry> plans;
  for (const Region &r : regions)
    plans.push_back (r.width > 0 && r.height > 0 ? plan (r.width, r.height, p) : PyramidGeometry ());
  PyramidGeometry g = merge_region_plans (width, height, regions, plans, &places);
  g.source_width = across;
  g.source_height = std::max (y + row, 1);
  return g;
}

Error ForestFamily::enqueue (const FrameBuffers &frame, Launcher &l) {
  const cl_int width = image_width_;
  if (by_regions_) {
    // a work-item a pixel of the regions' image (both schedules)
    if (Error e = blur_regions_.set (frame.src, cl_int (layout_.stride ()), cl_int (layout_.bpp ()),
                                     rgb_offsets (layout_.format), regions_, cl_int (nregions_), width,
                                     cl_int (pixels_), blurred_, counters_, frame.candidates))
      return e;
    if (Error e = l.launch (blur_regions_.get (), round_up (std::max (pixels_, 1), 64), 64, kPyramid))
      return e;
  } else {
    if (Error e = blur_.set (frame.src, cl_int (layout_.stride ()), cl_int (layout_.bpp ()),
                             rgb_offsets (layout_.format), width, cl_int (layout_.height), blurred_, counters_,
                             frame.candidates))
      return e;
    if (Error e = gpu_schedule_ ? l.launch (blur_.get (), round_up (std::max (pixels_, 1), 64), 64, kPyramid)
                                : l.launch (blur_.get (), round_up (height_, 8), 8, kPyramid))
      return e;
  }
  if (nwindows_ == 0)
    return {};
  const size_t local = gpu_schedule_ ? 64 : 8;
  if (Error e = shrink_.set (blurred_, width, levels_, xtab_, ytab_, xfirst_, yfirst_, cell_rows_, cl_int (ncell_rows_),
                             shrink_factor_, raw_, stride_))
    return e;
  if (Error e = l.launch (shrink_.get (), round_up (ncell_rows_ * lanes_, local), local, kPyramid))
    return e;
  if (Error e = cells_.set (levels_, cell_rows_, cl_int (ncell_rows_), raw_, atlas_, stride_))
    return e;
  if (Error e = l.launch (cells_.get (), round_up (ncell_rows_ * lanes_, local), local, kChannels))
    return e;
  if (!gpu_schedule_) {
    if (Error e = rows_.set (levels_, wrows_, cl_int (nwrows_), atlas_, stride_, nodes_, stages_,
                             cl_int (model_.stages.size ()), gamma_, frame.candidates, frame.capacity))
      return e;
    return l.launch (rows_.get (), round_up (nwrows_, 8), 8, kFirst);
  }
  // List k, the windows alive before phase k + 1, in buffer k % 2 (see geometry()).
  const size_t phases = bounds_.size () - 1;
  const cl_uint cap = list_cap_;
  auto list = [&] (size_t k) -> const cl::Mem & { return lists_[k % 2]; };
  auto last = [&] (size_t k) { return cl_int (k + 1 == phases); };
  if (Error e = first_.set (levels_, segs_, atlas_, stride_, nodes_, stages_, chunks_, cl_int (phase_chunk_[0]),
                            cl_int (phase_chunk_[1]), last (0), gamma_, phases > 1 ? list (0) : atlas_, cl_int (0),
                            phases > 1 ? cap : 0u, counters_, frame.candidates, frame.capacity))
    return e;
  if (Error e = l.launch (first_.get (), static_cast<size_t> (nsegs_) * kWg, kWg, kFirst))
    return e;
  for (size_t k = 1; k < phases; k++) {
    if (Error e = more_[k - 1].set (atlas_, nodes_, stages_, chunks_, cl_int (phase_chunk_[k]),
                                    cl_int (phase_chunk_[k + 1]), last (k), gamma_, list (k - 1), cl_int (2 * (k - 1)),
                                    cap, k + 1 < phases ? list (k) : atlas_, cl_int (2 * k), k + 1 < phases ? cap : 0u,
                                    counters_, frame.candidates, frame.capacity))
      return e;
    if (Error e = l.launch (more_[k - 1].get (), groups_ * kWg, kWg, kRest))
      return e;
  }
  return {};
}

std::vector<Detection> ForestFamily::finish (const std::vector<RawHit> &hits, const PyramidGeometry &g,
                                             const SearchParams &p) const {
  return group_hits (hits, g, p.min_neighbors, 0.2, true);
}

} // namespace

const std::vector<std::string> &forest_option_keys () {
  static const std::vector<std::string> keys = {"forest-regroup"};
  return keys;
}

std::unique_ptr<Family> make_forest_family (ForestModel model) {
  return std::make_unique<ForestFamily> (std::move (model));
}

} // namespace gpudetect
