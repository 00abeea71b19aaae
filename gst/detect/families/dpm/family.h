// The deformable part model family: cv::dpm's models (model.h) scored on the
// device (kernels/dpm.cl) as dpm.h describes, boxes from the root and
// cv::dpm's non-maximum suppression on the host.
#pragma once

#include "core/family.h"
#include "dpm.h"

#include <memory>

namespace gpudetect {

std::unique_ptr<Family> make_dpm_family (DpmModel model);

// The window a candidate names (RawHit level, x, y of this family's
// geometry): component, root position.
struct DpmHit {
  int level = 0, comp = 0, rx = 0, ry = 0;
};
DpmHit dpm_hit (const DpmModel &m, const RawHit &h);

// For tests: the device's feature planes of a grey frame (kDpmDims planes of
// plan->feat_plane floats, plan_dpm's layout), on the GPU schedule or the
// CPU one; fp64: in double where the device has it (as the family computes
// them), else in single precision (as on devices without double).  Returns an
// empty string on success.
Error dpm_device_features (const cl::Device &dev, bool gpu_schedule, bool fp64, const DpmModel &m,
                                 const uint8_t *grey, int width, int height, DpmPlan *plan, std::vector<float> *planes);

} // namespace gpudetect
