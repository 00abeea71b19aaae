// The linear HOG filter family on the device: the frame's grey image, dlib's
// pyramid (one resampling launch per level after the first: each level is
// made from the one before, as dlib makes it), the FHOG cells and features of
// every level (two launches), then every filter correlated with every window
// position of every level, directly or through the frequency domain
// (filtereval.h), each (position, filter) reaching its threshold appended to
// the frame's candidates.  finish() maps them back to the frame as dlib does
// and applies dlib's non-maximum suppression.
//
// Window indices count positions x filters: the core's window grid of a
// level is (positions across x filters) x (positions down), so that a
// candidate names its level, position and filter at once.
#include "family.h"

#include "filtereval.h"
#include "kernels.h"

#include <algorithm>
#include <cmath>

namespace gpudetect {

namespace {

class HogFilterFamily final : public HogFilterFamilyBase {
public:
  explicit HogFilterFamily (HogFilterModel m)
      : HogFilterFamilyBase (std::move (m), "the least confidence (filter score minus the filter's bias) of an object") {
    info_.window = {model_.cols * model_.cell, model_.rows * model_.cell};
    describe ("linear HOG filters, " + std::to_string (model_.filters.size ()) + " of " + std::to_string (model_.rows) +
              "x" + std::to_string (model_.cols) + " FHOG cells of " + std::to_string (model_.cell) + " px");
  }

  GPUDETECT_FAMILY_CALLS

private:
  FhogDevice fhog_;
};

Error HogFilterFamily::program (const BuildEnv &env, ProgramSpec *out) {
  gpu_schedule_ = env.gpu_schedule;
  const int nf = static_cast<int> (model_.filters.size ());
  FhogDevice::add_sources (out);
  FftCorrelator::add_source (out);
  out->options = FhogDevice::options (env.dev, model_.fhog (), nf);
  if (Error e = eval_.program (env, nf, model_.rows, model_.cols, out))
    return e;
  describe ({});
  return {};
}

Error HogFilterFamily::setup (const BuildEnv &env, const cl::Program &program) {
  if (Error e = fhog_.setup (program, !gpu_schedule_))
    return e;
  FilterBank bank;
  bank.rows = model_.rows;
  bank.cols = model_.cols;
  bank.dims = kFhogDims;
  for (const HogFilterModel::Filter &f : model_.filters)
    bank.filters.push_back (f.coef);
  return eval_.setup (env.dev, program, bank);
}

PyramidGeometry HogFilterFamily::plan (int width, int height, const SearchParams &) const {
  // The core's geometry: one level per FHOG level, its grid the filter
  // positions (x filters across); the FHOG plan itself is made again in
  // geometry() from the frame size.
  const FhogPlan fp = plan_fhog (width, height, model_.fhog ());
  const int nf = static_cast<int> (model_.filters.size ());
  std::vector<PyramidLevel> levels;
  for (const FhogLevel &fl : fp.levels) {
    PyramidLevel l;
    l.width = fl.width;
    l.height = fl.height;
    l.step = 1;
    l.scale = static_cast<float> (width) / std::max (fl.width, 1);
    const int px = std::max (fl.feat_cols - model_.cols + 1, 0), py = std::max (fl.feat_rows - model_.rows + 1, 0);
    l.nx = px * nf;
    l.ny = px > 0 ? py : 0;
    levels.push_back (l);
  }
  return feature_geometry (width, height, info_.window, std::move (levels));
}

Error HogFilterFamily::geometry (const cl::Device &dev, const PyramidGeometry &g, const FrameLayout &layout,
                                 const SearchParams &p) {
  const FhogPlan fp = plan_fhog (g.image_width, g.image_height, model_.fhog ());
  const int nf = static_cast<int> (model_.filters.size ());
  std::vector<std::pair<int, int>> windows;
  int first = 0;
  for (const PyramidLevel &l : g.levels) {
    windows.push_back ({first, l.nx});
    first += (l.nx / nf) * l.ny;
  }
  if (static_cast<int64_t> (first) * nf >= (int64_t (1) << 31))
    return {"too many filter positions for one frame"};
  if (Error e = fhog_.geometry (dev, fp, layout, windows))
    return e;
  std::vector<FeatureLevel> levels;
  for (size_t k = 0; k < fp.levels.size (); k++)
    levels.push_back ({fp.levels[k].feat_rows, fp.levels[k].feat_cols, fp.levels[k].feat_offset, windows[k].first});
  if (Error e = eval_.geometry (levels, fp.feat_plane, fhog_.features (), fhog_.levels (), fhog_.nlevels ()))
    return e;
  return parameters (p);
}

Error HogFilterFamily::enqueue (const FrameBuffers &frame, Launcher &l) {
  if (Error e = fhog_.enqueue (frame.src, frame.candidates, kPyramid, kFeatures, l))
    return e;
  return eval_.enqueue (frame, kFilters, l);
}

std::vector<Detection> HogFilterFamily::finish (const std::vector<RawHit> &hits, const PyramidGeometry &g,
                                                const SearchParams &p) const {
  const int nf = static_cast<int> (model_.filters.size ());
  std::vector<HogHit> v;
  v.reserve (hits.size ());
  for (const RawHit &h : hits) {
    const int f = h.x % nf;
    HogHit hh;
    hh.filter = f;
    hh.rect = hogfilter_window_rect (model_, h.level, h.x / nf, h.y);
    // objects out of the size range asked for are left out before the
    // suppression (0: unbounded; dlib has no such bounds)
    if (hh.rect.width < p.min_size.width || hh.rect.height < p.min_size.height ||
        (p.max_size.width > 0 && hh.rect.width > p.max_size.width) ||
        (p.max_size.height > 0 && hh.rect.height > p.max_size.height))
      continue;
    hh.confidence = static_cast<double> (h.score) - model_.filters[f].bias;
    v.push_back (hh);
  }
  std::vector<Detection> out;
  for (const HogHit &h : hogfilter_suppress (std::move (v), model_.iou, model_.covered)) {
    // dlib's box may reach past the frame's edges: the part inside it (the
    // suppression above saw the whole box, as dlib's)
    Detection d;
    if (scored_object (h.rect, h.confidence, g.image_width, g.image_height, &d))
      out.push_back (d);
  }
  return out;
}

} // namespace

Rect hogfilter_window_rect (const HogFilterModel &m, int level, int x, int y) {
  // the saliency position dlib scans (the filter's centre cell), the window
  // centred on it, in image pixels of the level
  const long c = x + m.cols / 2, r = y + m.rows / 2;
  const long left = c - m.cols / 2, top = r - m.rows / 2;
  const long right = left + m.cols - 1, bottom = top + m.rows - 1;
  auto to_image = [&] (long v, int pad) {
    const long q = (v + 1 - (pad - 1) / 2) * m.cell + 1;
    return q + (q >= 0 ? m.cell / 2 : -(m.cell / 2));
  };
  double l = to_image (left, m.cols), t = to_image (top, m.rows), rr = to_image (right, m.cols),
         b = to_image (bottom, m.rows);
  const double ratio = m.pyramid_down / (m.pyramid_down - 1.0);
  for (int k = 0; k < level; k++) {
    l = l * ratio + 0.3;
    t = t * ratio + 0.3;
    rr = rr * ratio + 0.3;
    b = b * ratio + 0.3;
  }
  const long L = static_cast<long> (std::floor (l + 0.5)), T = static_cast<long> (std::floor (t + 0.5)),
             R = static_cast<long> (std::floor (rr + 0.5)), B = static_cast<long> (std::floor (b + 0.5));
  return {static_cast<int> (L), static_cast<int> (T), static_cast<int> (R - L + 1), static_cast<int> (B - T + 1)};
}

std::vector<HogHit> hogfilter_suppress (std::vector<HogHit> hits, double iou, double covered) {
  std::stable_sort (hits.begin (), hits.end (),
                    [] (const HogHit &a, const HogHit &b) { return a.confidence > b.confidence; });
  auto area = [] (long w, long h) { return w > 0 && h > 0 ? static_cast<double> (w) * h : 0.0; };
  auto overlaps = [&] (const Rect &a, const Rect &b) {
    const long l = std::max (a.x, b.x), t = std::max (a.y, b.y);
    const long r = std::min<long> (a.x + a.width, b.x + b.width), bm = std::min<long> (a.y + a.height, b.y + b.height);
    const double inner = area (r - l, bm - t);
    if (inner == 0)
      return false;
    // dlib's "union" is the bounding box of both
    const long ul = std::min (a.x, b.x), ut = std::min (a.y, b.y);
    const long ur = std::max<long> (a.x + a.width, b.x + b.width), ub = std::max<long> (a.y + a.height, b.y + b.height);
    return inner / area (ur - ul, ub - ut) > iou || inner / area (a.width, a.height) > covered ||
           inner / area (b.width, b.height) > covered;
  };
  std::vector<HogHit> kept;
  for (const HogHit &h : hits) {
    bool drop = false;
    for (const HogHit &k : kept)
      if (overlaps (k.rect, h.rect)) {
        drop = true;
        break;
      }
    if (!drop)
      kept.push_back (h);
  }
  return kept;
}

std::unique_ptr<Family> make_hogfilter_family (HogFilterModel model) {
  if (model.features == HogFeatures::DalalTriggs)
    return make_dthog_family (std::move (model));
  return std::make_unique<HogFilterFamily> (std::move (model));
}

} // namespace gpudetect
