#include "family.h"

#include "kernels.h"

namespace gpudetect {

void add_core_sources (ProgramSpec *out, bool pyramid) {
  out->add (kernels::warp_source, kernels::warp_hash);
  out->add (kernels::compact_source, kernels::compact_hash);
  out->add (kernels::candidates_source, kernels::candidates_hash);
  if (pyramid)
    out->add (kernels::pyramid_source, kernels::pyramid_hash);
}

} // namespace gpudetect
