// cv::dpm's model files (families/dpm/xml.cpp) over any bytes that are XML.
// Beyond "no crash": a refused file leaves the model untouched and is named in under 400
// bytes; a model that loads keeps every invariant the plan and the kernels
// rely on (an even cell size, interval and padding within their caps, 1 to 16
// components of at most 32 parts, 128 in all, filters of 1 to 64 cells a side with rows x
// cols x 32 finite coefficients, at most kDpmMaxCoefficients together, finite
// biases, weights and deformations, anchors within 1024 cells), and its plan
// for a few frame sizes has levels only where cv::dpm has them.
#include "fuzz.h"

#include "core/xml.h"
#include "families/dpm/dpm.h"

#include <cmath>

using namespace gpudetect;

static bool finite_within (double v) { return std::isfinite (v) && std::fabs (v) <= kDpmMaxValue; }

static bool filter_ok (const DpmFilter &f) {
  if (f.rows < 1 || f.cols < 1 || f.rows > kDpmMaxFilterSide || f.cols > kDpmMaxFilterSide ||
      f.coef.size () != static_cast<size_t> (f.rows) * f.cols * kDpmDims)
    return false;
  for (double c : f.coef)
    if (!finite_within (c))
      return false;
  return true;
}

extern "C" int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size) {
  // documents that are not XML are the shared parser's (the xml target's;
  // libxml2's messages quote names whole)
  xml::Doc doc;
  if (!xml::parse (fuzz_text (data, size), &doc).message.empty ())
    return 0;
  DpmModel m;
  m.sbin = 6;
  const std::string err = read_dpm_storage (xml::root (doc), &m).message;
  if (!err.empty ()) {
    FUZZ_CHECK (m.sbin == 6 && m.components.empty (), "a refused model was partly filled in: %s", err.c_str ());
    FUZZ_CHECK (err.size () < 400, "a message of %zu bytes", err.size ());
    return 0;
  }
  FUZZ_CHECK (m.sbin >= kDpmMinSbin && m.sbin <= kDpmMaxSbin && m.sbin % 2 == 0, "sbin %d", m.sbin);
  FUZZ_CHECK (m.interval >= 1 && m.interval <= kDpmMaxInterval, "interval %d", m.interval);
  FUZZ_CHECK (m.pad_x >= 0 && m.pad_y >= 0 && m.pad_x <= kDpmMaxPad && m.pad_y <= kDpmMaxPad, "padding");
  FUZZ_CHECK (finite_within (m.threshold), "threshold");
  FUZZ_CHECK (!m.components.empty () && m.components.size () <= static_cast<size_t> (kDpmMaxComponents),
              "%zu components", m.components.size ());
  size_t coefficients = 0, parts = 0;
  for (const DpmComponent &c : m.components) {
    parts += c.parts.size ();
    FUZZ_CHECK (filter_ok (c.root), "a root filter");
    coefficients += c.root.coef.size ();
    FUZZ_CHECK (finite_within (c.bias) && finite_within (c.location[0]) && finite_within (c.location[1]) &&
                    finite_within (c.location[2]),
                "bias or location weights");
    FUZZ_CHECK (c.parts.size () <= static_cast<size_t> (kDpmMaxParts), "%zu parts", c.parts.size ());
    for (const DpmPart &p : c.parts) {
      FUZZ_CHECK (filter_ok (p.filter), "a part filter");
      coefficients += p.filter.coef.size ();
      FUZZ_CHECK (std::abs (p.anchor_x) <= kDpmMaxAnchor && std::abs (p.anchor_y) <= kDpmMaxAnchor, "anchor");
      for (double d : p.def)
        FUZZ_CHECK (finite_within (d), "deformation");
    }
  }
  FUZZ_CHECK (coefficients <= kDpmMaxCoefficients, "%zu coefficients", coefficients);
  FUZZ_CHECK (parts <= static_cast<size_t> (kDpmMaxTotalParts), "%zu parts in all", parts);
  for (const auto &[w, h] : {std::pair<int, int> {64, 48}, {640, 480}, {1, 1}}) {
    const DpmPlan p = plan_dpm (w, h, m);
    FUZZ_CHECK (p.levels.empty () || (p.max_scale >= m.interval &&
                                      p.levels.size () == static_cast<size_t> (p.max_scale + m.interval)),
                "%zu levels, max_scale %d", p.levels.size (), p.max_scale);
    for (const DpmLevel &l : p.levels)
      FUZZ_CHECK (!l.computed || (l.feat_w >= 2 * p.pad_x && l.feat_h >= 2 * p.pad_y && l.cells_x >= 0), "a level");
  }
  return 0;
}
