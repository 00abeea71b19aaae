// The WaldBoost family: one boosted classifier over MB-LBP with a rejection
// test after every weak hypothesis (model.h), on the integral pyramid.
#pragma once

#include "core/family.h"
#include "model.h"

#include <memory>
#include <string>
#include <vector>

namespace gpudetect {

// The expert knobs the family reads (Tuning::family).
const std::vector<std::string> &waldboost_option_keys ();

std::unique_ptr<Family> make_waldboost_family (WaldBoostModel model);

} // namespace gpudetect
