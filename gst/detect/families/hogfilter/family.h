// The linear HOG filter family: dlib-style FHOG filter banks (model.h) on
// the device (kernels/hog.cl), filters evaluated by direct correlation.
#pragma once

#include "core/family.h"
#include "core/numbers.h"
#include "filtereval.h"
#include "model.h"

#include <memory>

namespace gpudetect {

// What the two linear filter families (FHOG, Dalal and Triggs' features)
// share: the model type, the phases, the filters' evaluation (FilterEvaluator,
// tuning hog-eval) and a description that names it.
class HogFilterFamilyBase : public ModelFamily<HogFilterModel> {
public:
  Error options (const Tuning &t) override { return check_hog_eval (t); }
  std::string memory_hint () const override {
    const std::string filters = std::to_string (model_.filters.size ()) + " filters of " +
                                std::to_string (model_.rows) + "x" + std::to_string (model_.cols);
    if (model_.features == HogFeatures::DalalTriggs)
      return "the pyramid's levels (the model's scale " + number_text (model_.dt.scale) + ", max-levels " +
             std::to_string (model_.dt.max_levels) + ") and " + filters;
    return "the pyramid's levels (the model's pyramid-down " + std::to_string (model_.pyramid_down) +
           ", min-level " + std::to_string (model_.min_level_width) + "x" +
           std::to_string (model_.min_level_height) + ", max-levels " + std::to_string (model_.max_levels) + ") and " +
           filters;
  }
  // Each filter keeps the positions whose dot product reaches the threshold
  // plus its bias (FHOG: score = dot - bias; Dalal-Triggs: bias = -rho).
  Error parameters (const SearchParams &p) override {
    const double t = p.threshold ? *p.threshold : model_.threshold;
    std::vector<float> least;
    for (const HogFilterModel::Filter &f : model_.filters)
      least.push_back (float_at_least (f.bias + t));
    return eval_.thresholds (least);
  }

protected:
  // The phases a frame's launches are timed under (Family::phases).
  enum : int { kPyramid, kFeatures, kFilters };

  HogFilterFamilyBase (HogFilterModel m, const char *threshold_meaning)
      : ModelFamily ("hogfilter", std::move (m), {"pyramid", "hog features", "filters"}, threshold_meaning) {}
  // The model's description, then the evaluation chosen (program()).
  void describe (std::string model) {
    if (!model.empty ())
      description_ = std::move (model);
    info_.description = description_ + ", " + eval_.evaluation ();
  }

  FilterEvaluator eval_;

private:
  std::string description_;
};

std::unique_ptr<Family> make_hogfilter_family (HogFilterModel model);
// The same for Dalal and Triggs' features (features hog-dt; dtfamily.cpp).
std::unique_ptr<Family> make_dthog_family (HogFilterModel model);

// dlib's rectangle of a window of a plan: filter position (x, y) of level
// `level` (its top-left cell in the padded plane), as scan_fhog_pyramid maps
// it back to the frame (fhog_to_image, then pyramid_down<N>::rect_up).
Rect hogfilter_window_rect (const HogFilterModel &m, int level, int x, int y);

// dlib's non-maximum suppression (object_detector): the candidates sorted by
// confidence, each kept unless it overlaps one kept before (test_box_overlap).
struct HogHit {
  Rect rect;
  double confidence = 0; // score - bias
  int filter = 0;
};
std::vector<HogHit> hogfilter_suppress (std::vector<HogHit> hits, double iou, double covered);

} // namespace gpudetect
