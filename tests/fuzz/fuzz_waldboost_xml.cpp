// The project's WaldBoost XML (families/waldboost/native_xml.cpp) over any
// bytes.  Beyond "no crash": a model that loads is written back by
// write_waldboost_xml, and that text loads to the identical model (every
// field, every response bit for bit) and writes back to the same text.
#include "fuzz.h"

#include "families/waldboost/model.h"

#include <cstring>

using namespace gpudetect;

static bool same_double (double a, double b) { return std::memcmp (&a, &b, sizeof a) == 0 || a == b; }

static void check_same (const WaldBoostModel &a, const WaldBoostModel &b) {
  FUZZ_CHECK (a.name == b.name, "name '%s' came back as '%s'", a.name.c_str (), b.name.c_str ());
  FUZZ_CHECK (a.window_width == b.window_width && a.window_height == b.window_height, "window");
  FUZZ_CHECK (same_double (a.min_std_dev, b.min_std_dev), "minStdDev %.17g vs %.17g", a.min_std_dev, b.min_std_dev);
  FUZZ_CHECK (same_double (a.threshold, b.threshold), "threshold %.17g vs %.17g", a.threshold, b.threshold);
  FUZZ_CHECK (a.threshold_exclusive == b.threshold_exclusive && a.format == b.format, "final test or format");
  FUZZ_CHECK (a.divisors == b.divisors && a.sync_first == b.sync_first && a.sync_step == b.sync_step, "schedule");
  FUZZ_CHECK (a.stages.size () == b.stages.size (), "%zu stages came back as %zu", a.stages.size (),
              b.stages.size ());
  for (size_t i = 0; i < a.stages.size (); i++) {
    const WaldBoostModel::Stage &s = a.stages[i], &t = b.stages[i];
    FUZZ_CHECK (s.x == t.x && s.y == t.y && s.w == t.w && s.h == t.h, "stage %zu grid", i);
    FUZZ_CHECK (same_double (s.neg_t, t.neg_t) && same_double (s.pos_t, t.pos_t), "stage %zu thresholds", i);
    FUZZ_CHECK (std::memcmp (s.response.data (), t.response.data (), sizeof s.response) == 0, "stage %zu responses",
                i);
  }
}

extern "C" int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size) {
  WaldBoostModel m;
  const std::string err = parse_waldboost (fuzz_text (data, size), &m).message;
  if (!err.empty ()) {
    FUZZ_CHECK (m.stages.empty (), "a refused model was partly filled in: %s", err.c_str ());
    return 0;
  }
  FUZZ_CHECK (!m.stages.empty () && m.tail_start () >= 0 && static_cast<size_t> (m.tail_start ()) <= m.stages.size (),
              "tail starts at %d of %zu stages", m.tail_start (), m.stages.size ());
  for (const WaldBoostModel::Stage &s : m.stages)
    FUZZ_CHECK (s.x >= 0 && s.y >= 0 && s.w >= 1 && s.h >= 1 && s.x + 3 * s.w <= m.window_width &&
                    s.y + 3 * s.h <= m.window_height && !(s.neg_t > s.pos_t),
                "a stage outside the window or with negT above posT");
  const std::string written = write_waldboost_xml (m);
  WaldBoostModel back;
  const std::string err2 = parse_waldboost (written, &back).message;
  FUZZ_CHECK (err2.empty (), "the written model does not load: %s", err2.c_str ());
  check_same (m, back);
  FUZZ_CHECK (write_waldboost_xml (back) == written, "writing the model again gives another text");
  return 0;
}
