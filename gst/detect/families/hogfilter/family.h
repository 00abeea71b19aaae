// The linear HOG filter family: dlib-style FHOG filter banks (model.h) on
// the device (kernels/hog.cl), filters evaluated by direct correlation.
#pragma once

#include "core/family.h"
#include "model.h"

#include <memory>

namespace gpudetect {

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
