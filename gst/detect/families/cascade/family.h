// The boosted-cascade family: OpenCV's Haar and LBP cascades (model.h), the
// same raw windows as cv::CascadeClassifier::detectMultiScale.
#pragma once

#include "core/family.h"
#include "model.h"

#include <memory>

namespace gpudetect {

std::unique_ptr<Family> make_cascade_family (CascadeModel model);

} // namespace gpudetect
