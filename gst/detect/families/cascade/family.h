// The boosted-cascade family: OpenCV's Haar and LBP cascades (model.h), the
// same raw windows as cv::CascadeClassifier::detectMultiScale.
#pragma once

#include "core/family.h"
#include "model.h"

#include <memory>
#include <string>
#include <vector>

namespace gpudetect {

// The expert knobs the family reads (Tuning::family).
const std::vector<std::string> &cascade_option_keys ();

std::unique_ptr<Family> make_cascade_family (CascadeModel model);

} // namespace gpudetect
