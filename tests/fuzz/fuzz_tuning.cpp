// The tuning string (core/tuning.cpp) over any bytes.  Beyond "no crash": a
// refused string leaves the knobs as they were (as parse_tuning promises), an
// accepted one sets every knob within its documented range, and a string
// repeated after ';' gives the same knobs as the string once.
#include "fuzz.h"

#include "core/tuning.h"

using namespace gpudetect;

static bool same (const Tuning &a, const Tuning &b) {
  return a.schedule == b.schedule && a.upload_queue == b.upload_queue && a.read_prefix == b.read_prefix &&
         a.build_options == b.build_options && a.cascade_first_stages == b.cascade_first_stages &&
         a.cascade_vector_stages == b.cascade_vector_stages && a.waldboost_divisors == b.waldboost_divisors &&
         a.waldboost_sync_first == b.waldboost_sync_first && a.waldboost_sync_step == b.waldboost_sync_step &&
         a.forest_regroup_set == b.forest_regroup_set && a.forest_regroup == b.forest_regroup;
}

extern "C" int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size) {
  const std::string text = fuzz_text (data, size);
  // Knobs already set (as GPUDETECT_TUNING would leave them).
  Tuning before;
  before.schedule = Tuning::Schedule::Cpu;
  before.read_prefix = 5;
  before.build_options = "-DX";
  before.waldboost_divisors = {2, 2};
  Tuning t = before;
  const std::string err = parse_tuning (text, &t);
  if (!err.empty ()) {
    FUZZ_CHECK (same (t, before), "a refused string changed the knobs: %s", err.c_str ());
    FUZZ_CHECK (err.size () < 512 + size, "message of %zu bytes", err.size ());
    return 0;
  }
  FUZZ_CHECK (t.upload_queue >= -1 && t.upload_queue <= 2, "upload-queue %d", t.upload_queue);
  FUZZ_CHECK (t.read_prefix >= 0 && t.read_prefix <= (1 << 24), "read-prefix %d", t.read_prefix);
  FUZZ_CHECK (t.cascade_first_stages >= 0 && t.cascade_first_stages <= 64, "cascade-first-stages");
  FUZZ_CHECK (t.cascade_vector_stages >= -1 && t.cascade_vector_stages <= 100000, "vector stages");
  FUZZ_CHECK (!t.waldboost_divisors.empty () && t.waldboost_divisors.size () <= 6, "%zu divisors",
              t.waldboost_divisors.size ());
  for (int d : t.waldboost_divisors)
    FUZZ_CHECK (d >= 1 && d <= 1024, "divisor %d", d);
  FUZZ_CHECK (t.waldboost_sync_first >= 0 && t.waldboost_sync_first <= 100000, "sync-first");
  FUZZ_CHECK (t.waldboost_sync_step >= 0 && t.waldboost_sync_step <= 100000, "sync-step");
  FUZZ_CHECK (t.forest_regroup.size () <= 4 && (t.forest_regroup_set || t.forest_regroup.empty ()), "%zu regroup "
              "stages", t.forest_regroup.size ());
  for (size_t i = 0; i < t.forest_regroup.size (); i++)
    FUZZ_CHECK (t.forest_regroup[i] >= 1 && t.forest_regroup[i] <= 100000 &&
                    (i == 0 || t.forest_regroup[i] > t.forest_regroup[i - 1]),
                "regroup stage %d", t.forest_regroup[i]);
  FUZZ_CHECK (t.build_options.find (';') == std::string::npos, "build options hold a ';'");
  Tuning twice = before;
  const std::string err2 = parse_tuning (text + ";" + text, &twice);
  FUZZ_CHECK (err2.empty () && same (t, twice), "the string twice gives other knobs: %s", err2.c_str ());
  return 0;
}
