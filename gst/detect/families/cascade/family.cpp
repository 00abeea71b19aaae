// Boosted cascades on the device (kernels/cascade*.cl): the integral
// pyramid (core/integral.h), then
// - GPU schedule: cascade_first over every window (stage 0, OpenCV's skip
//   after a stage-0 rejection, the other generated stages) writing a list of
//   survivors, and cascade_list over that list for the later stages;
// - CPU schedule: cascade_rows, a work-item per row of windows, OpenCV's loop
//   (the first stages as vector code over 16 windows where the model allows).
// Grouping as OpenCV's groupRectangles; confidence from the neighbours.
#include "family.h"

#include "cl/kernel.h"

#include "codegen.h"
#include "core/integral.h"
#include "kernels.h"

#include <algorithm>
#include <cstring>
#include <numeric>

namespace gpudetect {

namespace {

// The phases a frame's launches are timed under (Family::phases).
enum : int { kPyramid, kIntegral, kTilted, kFirst, kRest };

// Device layouts of the model (must match kernels/cascade_types.cl).
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

class CascadeFamily final : public ModelFamily<CascadeModel> {
public:
  explicit CascadeFamily (CascadeModel m)
      : ModelFamily ("cascade", std::move (m),
                     {"pyramid", "integral", "tilted integral", "first stages", "later stages"},
                     "the least confidence of a reported object") {
    const bool haar = model_.feature_type == CascadeModel::FeatureType::Haar;
    info_.window = {model_.window_width, model_.window_height};
    info_.description = std::string (haar ? "Haar" : "LBP") + " cascade, " + std::to_string (model_.stages.size ()) +
                        " stages, window " + std::to_string (model_.window_width) + "x" +
                        std::to_string (model_.window_height);
  }

  Error options (const Tuning &t) override {
    if (Error e = tuning_int (t, "cascade-first-stages", 1, 64, &first_stages_))
      return e;
    return tuning_int (t, "cascade-vector-stages", 0, 100000, &vector_stages_);
  }
  GPUDETECT_FAMILY_CALLS
  bool searches_regions () const override { return true; } // IntegralPyramid reads the frame

private:
  Error upload_model (const cl::Device &dev);
  std::vector<cl_int> feature_offsets (int stride) const;

  IntegralPyramid integral_;
  // cascade-first-stages=N (GPU schedule): stages cascade_first runs (default
  // 2, 1 for LBP models without warp votes); cascade-vector-stages=N (CPU
  // schedule): stages run over 16 windows at once (default: LBP 3, Haar the
  // stages within 100 trees; 0: none).
  int first_stages_ = 0, vector_stages_ = -1;
  bool features_by_tree_ = false; // stump models, GPU schedule: features[] in tree order (FEATURES_BY_TREE)
  size_t list_groups_ = 0;        // persistent work-groups of cascade_list
  int seg_windows_ = 256;         // cascade_first: a work-group's segment holds as many rows as hold this many windows
  // kernels/cascade.cl's kernels; Model: MODEL_ARGS (stages, nstages, trees, nodes, stumps, leaves, features,
  // fofs, subsets)
  using Mem = cl::Mem;
#define CASCADE_MODEL_ARGS Mem, cl_int, Mem, Mem, Mem, Mem, Mem, Mem, Mem
  // levels, segs, sum, sqsum, tilted, stride, model, list, counters
  cl::TypedKernel<Mem, Mem, Mem, Mem, Mem, cl_int, CASCADE_MODEL_ARGS, Mem, Mem> first_;
  // sum, sqsum, tilted, stride, model, list, counters, hits, hit capacity
  cl::TypedKernel<Mem, Mem, Mem, cl_int, CASCADE_MODEL_ARGS, Mem, Mem, Mem, cl_uint> list_;
  // levels, wrow map, rows, sum, sqsum, tilted, stride, model, hits, hit capacity
  cl::TypedKernel<Mem, Mem, cl_int, Mem, Mem, Mem, cl_int, CASCADE_MODEL_ARGS, Mem, cl_uint> rows_;
#undef CASCADE_MODEL_ARGS
  cl::Mem stages_, trees_, nodes_, stumps_, leaves_, features_, subsets_;
  cl::Mem seg_map_, wrow_map_, list_buf_, counters_, fofs_;
  int nsegs_ = 0, nwrows_ = 0, nwindows_ = 0;
};

PyramidGeometry CascadeFamily::plan (int width, int height, const SearchParams &p) const {
  return plan_pyramid (width, height, model_.window_width, model_.window_height, p.scale_factor, p.min_size,
                       p.max_size);
}

Error CascadeFamily::program (const BuildEnv &env, ProgramSpec *out) {
  const cl::DeviceInfo &dev = env.dev.info;
  const bool haar = model_.feature_type == CascadeModel::FeatureType::Haar;
  gpu_schedule_ = env.gpu_schedule;
  std::string opts = haar ? " -D FEATURE_HAAR" : " -D FEATURE_LBP";
  opts += " -D MAX_NODES=" + std::to_string (model_.max_nodes_per_tree);
  opts += " -D WIN_W=" + std::to_string (model_.window_width) + " -D WIN_H=" + std::to_string (model_.window_height);
  if (dev.fp64)
    opts += " -D HAVE_FP64";
  if (model_.has_tilted)
    opts += " -D HAVE_TILTED";
  // Windows per work-group step of cascade_list (local memory: an offset, for
  // Haar a normalisation factor, two list entries each); measured in
  // bench/experiments.md.
  size_t chunk = haar ? 512 : 1024;
  const size_t per_window = (haar ? 8 : 4) + 4, fixed = 256 * 8 + 64;
  while (chunk > 256 && chunk * per_window + fixed > std::min<cl_ulong> (dev.local_mem, 32 * 1024))
    chunk /= 2;
  if (gpu_schedule_ && (dev.max_work_group < 256 || chunk * per_window + fixed > dev.local_mem))
    gpu_schedule_ = false; // too small for the GPU schedule's work-groups
  // CPU: a load of a precomputed offset costs less than its arithmetic; GPUs
  // are bound by loads.
  const bool use_fofs = !gpu_schedule_;
  if (use_fofs)
    opts += " -D USE_FOFS";
  // LBP stump models, GPU schedule: features in tree order, loaded with their
  // stump (faster for LBP, slower for Haar: bench/experiments.md).
  features_by_tree_ = gpu_schedule_ && !haar && model_.max_nodes_per_tree == 1;
  if (features_by_tree_)
    opts += " -D FEATURES_BY_TREE";
  // GPU schedule: the sum plane modulo 2^16 (NARROW_SUM), half the bytes for
  // the scattered loads (bench/experiments.md).  A rectangle of at most 257
  // pixels still gets its exact sum, larger ones are summed in bands; not for
  // tilted features (32-bit plane) nor the CPU's 32-bit vector lanes.
  bool narrow_fits = true;
  for (const CascadeModel::LbpFeature &f : model_.lbp_features)
    narrow_fits = narrow_fits && f.w * f.h <= 257;
  for (const CascadeModel::HaarFeature &f : model_.haar_features)
    for (const CascadeModel::HaarRect &r : f.rect)
      narrow_fits = narrow_fits && r.w <= 257 && narrow_band_height (r.w, r.h) < 256; // 8 bits each
  narrow_fits = narrow_fits && model_.window_width - 2 <= 257 && !model_.has_tilted;
  const bool narrow_sum = gpu_schedule_ && narrow_fits;
  integral_.configure ({env.dev, env.tuning, gpu_schedule_}, {haar, model_.has_tilted, narrow_sum});
  opts += integral_.options ();
  opts += " -D LIST_CHUNK=" + std::to_string (chunk);
  // Trees per lane evaluated together in cascade_list, their loads in flight
  // at once: the best measured (bench/experiments.md); 1 on CPUs.
  opts += " -D LIST_UNROLL=" + std::to_string (gpu_schedule_ ? (haar ? 2 : 4) : 1);
  // NVIDIA's platform: cascade_first's scans by warp votes instead of local
  // memory and barriers (kernels/warp.cl; bench/experiments.md), retried
  // without where the build refuses them.
  const ListProgram lists = add_list_sources (dev, gpu_schedule_, out);
  const bool warp_ptx = lists.warp_votes;
  list_groups_ = lists.groups;
  // The first stages as generated code: on GPUs those cascade_first runs over
  // the windows passing stage 0 (cascade-first-stages: 2, or 1 for LBP without
  // warp votes), the later ones read from memory by cascade_list; on CPUs Haar
  // models' first 256 trees and LBP's stage 0.  Measured: bench/experiments.md.
  int spec_trees = haar ? 256 : 1, first = -1;
  if (gpu_schedule_) {
    first = first_stages_ > 0 ? first_stages_ : (haar || warp_ptx ? 2 : 1);
    int first_trees = 0;
    for (int si = 0; si < first && si < static_cast<int> (model_.stages.size ()); si++)
      first_trees += model_.stages[si].ntrees;
    spec_trees = first_trees;
  }
  const GeneratedStages gen =
      generate_stages (model_, spec_trees, first, narrow_sum, gpu_schedule_ && first_stages_ > 0);
  // CPUs: the first stages over 16 windows at once (LBP 3, Haar those within
  // 100 trees; measured on PoCL, bench/experiments.md).
  int vec_stages = vector_stages_ >= 0 ? vector_stages_ : (haar ? stages_within_trees (model_, 100) : 3);
  const GeneratedStages vec = generate_vector_stages (model_, gpu_schedule_ ? 0 : vec_stages, vector_stages_ >= 0);
  out->add (kernels::cascade_types_source, kernels::cascade_types_hash);
  out->add (kernels::cascade_eval_source, kernels::cascade_eval_hash);
  out->add (gen.source);
  out->add (vec.source);
  out->add (kernels::cascade_source, kernels::cascade_hash);
  out->options = opts + out->options; // the warp votes' option (add_list_sources) last
  // NVIDIA: 48 registers written into the PTX (the driver ignores
  // -cl-nv-maxrregcount) so that 5 work-groups of 256 fit an SM, where it
  // measured faster (bench/experiments.md, tune-ptx-regs-h100.txt).
  if (warp_ptx) {
    if (first <= 2)
      out->ptx_register_limits = "cascade_first=48";
    if (haar && model_.max_nodes_per_tree == 1)
      out->ptx_register_limits += std::string (out->ptx_register_limits.empty () ? "" : ",") + "cascade_list=48";
  }
  return {};
}

Error CascadeFamily::setup (const BuildEnv &env, const cl::Program &program) {
  if (Error e = integral_.create_kernels (program))
    return e;
  if (Error e = gpu_schedule_ ? first_.create (program, "cascade_first") : rows_.create (program, "cascade_rows"))
    return e;
  if (gpu_schedule_)
    if (Error e = list_.create (program, "cascade_list"))
      return e;
  if (Error e = cl::make_buffer (env.dev, &counters_, IntegralPyramid::kCounterWords * sizeof (cl_uint)))
    return e;
  return upload_model (env.dev);
}

Error CascadeFamily::upload_model (const cl::Device &dev) {
  const CascadeModel &m = model_;
  std::vector<DevStage> st;
  for (const CascadeModel::Stage &s : m.stages)
    st.push_back ({s.first_tree, s.ntrees, s.threshold, 0});
  std::vector<DevTree> tr;
  for (const CascadeModel::Tree &t : m.trees)
    tr.push_back ({t.first_node, t.node_count, t.first_leaf, 0});
  std::vector<DevNode> nd;
  std::vector<uint32_t> sub;
  for (const CascadeModel::Node &n : m.nodes) {
    nd.push_back ({n.left, n.right, n.feature, n.threshold});
    if (m.feature_type == CascadeModel::FeatureType::Lbp)
      sub.insert (sub.end (), n.subset, n.subset + 8);
  }
  if (Error e = cl::upload_vector (dev, &stages_, st)) return e;
  if (Error e = cl::upload_vector (dev, &trees_, tr)) return e;
  if (Error e = cl::upload_vector (dev, &nodes_, nd)) return e;
  // Stump models: one record per tree (node threshold and both leaves).
  std::vector<DevStump> sp;
  if (m.max_nodes_per_tree == 1)
    for (const CascadeModel::Tree &t : m.trees) {
      const CascadeModel::Node &n = m.nodes[t.first_node];
      sp.push_back ({n.feature, n.threshold, m.leaves[t.first_leaf - n.left], m.leaves[t.first_leaf - n.right]});
    }
  if (Error e = cl::upload_vector (dev, &stumps_, sp)) return e;
  if (Error e = cl::upload_vector (dev, &leaves_, m.leaves)) return e;
  if (Error e = cl::upload_vector (dev, &subsets_, sub)) return e;
  // the features in the model's order, or in tree order (one per stump)
  std::vector<int> order;
  if (features_by_tree_) {
    for (const CascadeModel::Tree &t : m.trees)
      order.push_back (m.nodes[t.first_node].feature);
  } else {
    order.resize (m.feature_count ());
    std::iota (order.begin (), order.end (), 0);
  }
  if (m.feature_type == CascadeModel::FeatureType::Haar) {
    const bool narrow = integral_.planes ().narrow;
    std::vector<DevHaarFeature> f;
    for (int fi : order) {
      const CascadeModel::HaarFeature &h = m.haar_features[fi];
      DevHaarFeature d{};
      for (int i = 0; i < 3; i++) {
        d.r[i][0] = h.rect[i].x, d.r[i][1] = h.rect[i].y, d.r[i][2] = h.rect[i].w, d.r[i][3] = h.rect[i].h;
        d.w[i] = h.rect[i].weight;
      }
      d.w[3] = h.tilted ? 1.f : 0.f;
      if (narrow) { // the rectangles' band heights (kernels/cascade_eval.cl, rect_sum_n)
        int32_t hb = 0;
        for (int i = 0; i < 3; i++)
          hb |= narrow_band_height (h.rect[i].w, h.rect[i].h) << (8 * i);
        std::memcpy (&d.w[3], &hb, sizeof hb);
      }
      f.push_back (d);
    }
    return cl::upload_vector (dev, &features_, f);
  }
  std::vector<cl_int4> f;
  for (int fi : order) {
    const CascadeModel::LbpFeature &l = m.lbp_features[fi];
    f.push_back ({{l.x, l.y, l.w, l.h}});
  }
  return cl::upload_vector (dev, &features_, f);
}

// Corner offsets of every feature for a row stride, as OpenCV's setOffsets:
// Haar 3 rectangles x 4 corners (tilted ones in the tilted plane), LBP the
// 4x4 grid of integral points.
std::vector<cl_int> CascadeFamily::feature_offsets (int s) const {
  std::vector<cl_int> o;
  if (model_.feature_type == CascadeModel::FeatureType::Lbp) {
    for (const CascadeModel::LbpFeature &f : model_.lbp_features)
      for (int j = 0; j < 4; j++)
        for (int i = 0; i < 4; i++)
          o.push_back (f.x + i * f.w + s * (f.y + j * f.h));
    return o;
  }
  for (const CascadeModel::HaarFeature &f : model_.haar_features)
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

Error CascadeFamily::geometry (const cl::Device &dev, const PyramidGeometry &g, const FrameLayout &layout,
                               const SearchParams &) {
  if (Error e = integral_.geometry (dev, g, layout))
    return e;
  std::vector<int32_t> wrows;
  std::vector<cl_int2> segs; // cascade_first: (level | nrows << 10, first row)
  for (size_t li = 0; li < g.levels.size (); li++) {
    const PyramidLevel &l = g.levels[li];
    const int32_t idx = static_cast<int32_t> (li);
    // A segment is one row of windows, or as many rows as hold seg_windows.
    const int rows_per_seg = l.nx > 0 ? std::max (1, seg_windows_ / l.nx) : 1;
    for (int iy = 0; iy < l.ny; iy += rows_per_seg)
      segs.push_back ({{idx | (std::min (rows_per_seg, l.ny - iy) << 10), iy}});
    for (int iy = 0; iy < l.ny; iy++)
      wrows.push_back (idx | (iy << 10));
  }
  nsegs_ = static_cast<int> (segs.size ());
  nwrows_ = static_cast<int> (wrows.size ());
  nwindows_ = g.total_windows;
  if (Error e = cl::upload_vector (dev, &seg_map_, segs)) return e;
  if (Error e = cl::upload_vector (dev, &wrow_map_, wrows)) return e;
  // the list: (window index, integral offset) pairs
  if (Error e = cl::make_buffer (dev, &list_buf_, gpu_schedule_ ? static_cast<size_t> (g.total_windows) * 8 : 16))
    return e;
  if (Error e = cl::upload_vector (dev, &fofs_, feature_offsets (g.stride)))
    return e;
  return {};
}

Error CascadeFamily::enqueue (const FrameBuffers &frame, Launcher &l) {
  if (Error e = integral_.enqueue (frame, counters_, {kPyramid, kTilted, kIntegral}, l); e || nwindows_ == 0)
    return e; // nothing to search: a frame smaller than the window
  const cl::Mem &sum = integral_.sum (), &sqsum = integral_.sqsum (), &tilt = integral_.tilted ();
  const cl_int stride = integral_.stride (), nstages = static_cast<cl_int> (model_.stages.size ());
  if (gpu_schedule_) {
    if (Error e = first_.set (integral_.levels (), seg_map_, sum, sqsum, tilt, stride, stages_, nstages, trees_, nodes_,
                              stumps_, leaves_, features_, fofs_, subsets_, list_buf_, counters_))
      return e;
    if (Error e = list_.set (sum, sqsum, tilt, stride, stages_, nstages, trees_, nodes_, stumps_, leaves_, features_,
                             fofs_, subsets_, list_buf_, counters_, frame.candidates, frame.capacity))
      return e;
    if (Error e = l.launch (first_.get (), static_cast<size_t> (nsegs_) * 256, 256, kFirst))
      return e;
    return l.launch (list_.get (), list_groups_ * 256, 256, kRest);
  }
  if (Error e = rows_.set (integral_.levels (), wrow_map_, cl_int (nwrows_), sum, sqsum, tilt, stride, stages_, nstages,
                           trees_, nodes_, stumps_, leaves_, features_, fofs_, subsets_, frame.candidates,
                           frame.capacity))
    return e;
  return l.launch (rows_.get (), round_up (nwrows_, 8), 8, kFirst);
}

std::vector<Detection> CascadeFamily::finish (const std::vector<RawHit> &hits, const PyramidGeometry &g,
                                              const SearchParams &p) const {
  return group_hits (hits, g, p.min_neighbors, 0.2, false, p.threshold.value_or (0.0));
}

} // namespace

const std::vector<std::string> &cascade_option_keys () {
  static const std::vector<std::string> keys = {"cascade-first-stages", "cascade-vector-stages"};
  return keys;
}

std::unique_ptr<Family> make_cascade_family (CascadeModel model) {
  return std::make_unique<CascadeFamily> (std::move (model));
}

} // namespace gpudetect
