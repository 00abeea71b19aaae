// The linear HOG filter family with Dalal and Triggs' features (model.h:
// features hog-dt): OpenCV's HOGDescriptor::detectMultiScale on the device.
// DtDevice (dthog.h) makes the levels, gradients and block features of every
// level (three launches), the SVM's weights are correlated with them at
// every window position of every level, directly (hog.cl's filter kernels,
// sums in double where the device has it) or through the frequency domain
// (the block features are already one plane per dimension; filtereval.h),
// and finish() maps the windows back to the frame and groups them as OpenCV
// does (groupRectangles with its weights, then the boxes clipped to the
// frame).
#include "family.h"
#include "filtereval.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace gpudetect {

namespace {

class DtHogFamily final : public HogFilterFamilyBase {
public:
  explicit DtHogFamily (HogFilterModel m)
      : HogFilterFamilyBase (std::move (m), "the least SVM score of a window (OpenCV's hitThreshold)") {
    const DtHogParams &p = model_.dt;
    info_.window = {(model_.cols - 1) * p.block_stride + p.block, (model_.rows - 1) * p.block_stride + p.block};
    describe ("Dalal-Triggs HOG, a linear SVM of " + std::to_string (model_.rows) + "x" + std::to_string (model_.cols) +
              " blocks of " + std::to_string (model_.dims ()) + " features");
  }

  GPUDETECT_FAMILY_CALLS

private:
  DtDevice dt_;
};

Error DtHogFamily::program (const BuildEnv &env, ProgramSpec *out) {
  gpu_schedule_ = env.gpu_schedule;
  DtDevice::add_sources (out);
  FftCorrelator::add_source (out);
  out->options = DtDevice::options (env.dev, model_.dt) + " -D HOG_FH=" + std::to_string (model_.rows) +
                 " -D HOG_FW=" + std::to_string (model_.cols) + " -D HOG_NF=1 -D HOG_FILTER_DIMS=" +
                 std::to_string (model_.dims ());
  if (env.dev.info.fp64)
    out->options += " -D HOG_ACC_DOUBLE";
  if (Error e = eval_.program (env, 1, model_.rows, model_.cols, out))
    return e;
  describe ({});
  return {};
}

Error DtHogFamily::setup (const BuildEnv &env, const cl::Program &program) {
  if (Error e = dt_.setup (env.dev, program, model_.dt, !gpu_schedule_))
    return e;
  // the SVM's weights are one plane of rows x cols per feature, as the
  // filter bank wants them
  FilterBank bank;
  bank.rows = model_.rows;
  bank.cols = model_.cols;
  bank.dims = model_.dims ();
  bank.filters.push_back (model_.filters[0].coef);
  return eval_.setup (env.dev, program, bank);
}

PyramidGeometry DtHogFamily::plan (int width, int height, const SearchParams &p) const {
  const DtPlan dp = plan_dt (width, height, model_.dt, model_.rows, model_.cols, p.min_size, p.max_size, false);
  std::vector<PyramidLevel> levels;
  for (const DtLevel &dl : dp.levels) {
    PyramidLevel l;
    l.scale = static_cast<float> (dl.scale);
    l.width = dl.width;
    l.height = dl.height;
    l.win_width = round_half_even (dp.window_width * dl.scale);
    l.win_height = round_half_even (dp.window_height * dl.scale);
    l.step = model_.dt.block_stride;
    l.nx = dl.windows_x;
    l.ny = dl.windows_y;
    levels.push_back (l);
  }
  return feature_geometry (width, height, {dp.window_width, dp.window_height}, std::move (levels));
}

Error DtHogFamily::geometry (const cl::Device &dev, const PyramidGeometry &g, const FrameLayout &layout,
                             const SearchParams &p) {
  const DtPlan dp = plan_dt (g.image_width, g.image_height, model_.dt, model_.rows, model_.cols, p.min_size,
                             p.max_size);
  if (Error e = dt_.geometry (dev, dp, layout))
    return e;
  // each level's block features: blocks_y x blocks_x at block_offset of
  // every feature plane; its windows are the filter's positions there
  std::vector<FeatureLevel> levels;
  for (const DtLevel &l : dp.levels)
    levels.push_back ({l.blocks_y, l.blocks_x, l.block_offset, l.first_window});
  if (Error e = eval_.geometry (levels, dt_.plane (), dt_.features (), dt_.levels (), dt_.nlevels ()))
    return e;
  return parameters (p);
}

Error DtHogFamily::enqueue (const FrameBuffers &frame, Launcher &l) {
  if (Error e = dt_.enqueue (frame.src, frame.candidates, kPyramid, kFeatures, l))
    return e;
  return eval_.enqueue (frame, kFilters, l);
}

std::vector<Detection> DtHogFamily::finish (const std::vector<RawHit> &hits, const PyramidGeometry &g,
                                            const SearchParams &p) const {
  // each level's scale as OpenCV's double (the geometry keeps it as float)
  std::vector<double> scales;
  double s = 1;
  for (int k = 0; k < model_.dt.max_levels; k++, s *= model_.dt.scale)
    scales.push_back (s);
  std::vector<double> level_scale;
  for (const PyramidLevel &l : g.levels) {
    auto it = std::find_if (scales.begin (), scales.end (), [&] (double v) { return static_cast<float> (v) == l.scale; });
    level_scale.push_back (it == scales.end () ? l.scale : *it);
  }
  std::vector<Rect> rects;
  std::vector<float> scores;
  rects.reserve (hits.size ());
  scores.reserve (hits.size ());
  for (const RawHit &h : hits) {
    if (h.level < 0 || h.level >= static_cast<int> (level_scale.size ()))
      continue;
    const double sc = level_scale[h.level];
    rects.push_back ({round_half_even (h.x * sc), round_half_even (h.y * sc), round_half_even (g.window_width * sc),
                      round_half_even (g.window_height * sc)});
    scores.push_back (static_cast<float> (static_cast<double> (h.score) - model_.filters[0].bias));
  }
  std::vector<Detection> out;
  for (const GroupedRect &gr : group_rectangles (rects, model_.dt.group, model_.dt.group_eps, &scores)) {
    // OpenCV's clipObjects: the part inside the frame, empty ones left out
    const Rect r = clip_rect (gr.rect, g.image_width, g.image_height);
    if (r.width <= 0 || r.height <= 0)
      continue;
    Detection d;
    d.rect = r;
    d.neighbors = gr.neighbors;
    d.score = gr.score;
    d.confidence = static_cast<float> (1.0 / (1.0 + std::exp (-static_cast<double> (gr.score))));
    d.label_id = 0;
    out.push_back (d);
  }
  return out;
}

} // namespace

std::unique_ptr<Family> make_dthog_family (HogFilterModel model) {
  return std::make_unique<DtHogFamily> (std::move (model));
}

} // namespace gpudetect
