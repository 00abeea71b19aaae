// The random-forest cascade family: pixel-difference trees over a blurred,
// shrunk pyramid (model.h), on the device (kernels/forest.cl).
#pragma once

#include "core/family.h"
#include "model.h"

#include <memory>
#include <string>
#include <vector>

namespace gpudetect {

// The expert knobs the family reads (Tuning::family).
const std::vector<std::string> &forest_option_keys ();

std::unique_ptr<Family> make_forest_family (ForestModel model);

} // namespace gpudetect
