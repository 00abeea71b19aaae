#include "family.h"

#include "kernels.h"

#include <algorithm>

namespace gpudetect {

void add_core_sources (ProgramSpec *out, bool pyramid) {
  out->add (kernels::warp_source, kernels::warp_hash);
  out->add (kernels::compact_source, kernels::compact_hash);
  out->add (kernels::candidates_source, kernels::candidates_hash);
  if (pyramid)
    out->add (kernels::pyramid_source, kernels::pyramid_hash);
}

ListProgram add_list_sources (const cl::DeviceInfo &dev, bool gpu_schedule, ProgramSpec *out) {
  ListProgram l;
  if (gpu_schedule) {
    add_warp_ptx (dev, out);
    l.warp_votes = !out->optional_option.empty ();
  }
  add_core_sources (out);
  out->add (kernels::worklist_source, kernels::worklist_hash);
  l.groups = static_cast<size_t> (std::max<cl_uint> (dev.compute_units, 1)) * 8;
  return l;
}

PyramidGeometry Family::plan_regions (int width, int height, const std::vector<Region> &regions,
                                      const SearchParams &p) const {
  return gpudetect::plan_regions (width, height, regions, [&] (int w, int h) { return plan (w, h, p); });
}

} // namespace gpudetect
