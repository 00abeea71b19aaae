// OpenCV xobjdetect's WBDetector files (families/waldboost/xobjdetect_xml.cpp)
// over any bytes.  Beyond "no crash": a model that loads is a float-sum model
// with every stage's grid inside the 24x24 window, finite thresholds and
// responses, and a final test that is exclusive, as OpenCV's predict.
#include "fuzz.h"

#include "core/xml.h"
#include "families/waldboost/model.h"

#include <cmath>

using namespace gpudetect;

extern "C" int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size) {
  xml::Doc doc;
  if (!xml::parse (fuzz_text (data, size), &doc).message.empty ())
    return 0;
  const xmlNode *root = xml::root (doc);
  if (!is_waldboost_xobjdetect (root))
    return 0;
  WaldBoostModel m;
  const std::string err = read_waldboost_xobjdetect (root, &m).message;
  if (!err.empty ()) {
    FUZZ_CHECK (m.stages.empty (), "a refused model was partly filled in: %s", err.c_str ());
    return 0;
  }
  FUZZ_CHECK (m.format == WaldBoostModel::Format::XObjDetect && m.threshold_exclusive, "format or final test");
  FUZZ_CHECK (m.window_width == 24 && m.window_height == 24 && !m.stages.empty (), "window or stages");
  FUZZ_CHECK (std::isfinite (m.threshold), "gamma %g", m.threshold);
  for (const WaldBoostModel::Stage &s : m.stages) {
    FUZZ_CHECK (s.x >= 0 && s.y >= 0 && s.w >= 1 && s.h >= 1 && s.x + 3 * s.w <= 24 && s.y + 3 * s.h <= 24,
                "a grid outside the window");
    for (float r : s.response)
      FUZZ_CHECK (std::isfinite (r), "a response is not finite");
  }
  return 0;
}
