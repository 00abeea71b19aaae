// The tuning string (core/tuning.cpp) over any bytes.  Beyond "no crash": a
// refused string leaves the knobs as they were (as parse_tuning promises), an
// accepted one sets every common knob within its documented range and keeps
// only the families' declared keys, each family's reading of its knobs either
// takes a value within its range or names the entry, and a string repeated
// after ';' gives the same knobs as the string once.
#include "fuzz.h"

#include "core/tuning.h"
#include "families/hogfilter/fftconv.h"
#include "families/registry.h"

#include <algorithm>

using namespace gpudetect;

static bool same (const Tuning &a, const Tuning &b) {
  return a.schedule == b.schedule && a.upload_queue == b.upload_queue && a.read_prefix == b.read_prefix &&
         a.queues == b.queues && a.build_options == b.build_options && a.family == b.family;
}

extern "C" int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size) {
  const std::string text = fuzz_text (data, size);
  const std::vector<std::string> &keys = family_option_keys ();
  // Knobs already set (as GPUDETECT_TUNING would leave them).
  Tuning before;
  before.schedule = Tuning::Schedule::Cpu;
  before.read_prefix = 5;
  before.build_options = "-DX";
  before.family["waldboost-divisors"] = "2,2";
  Tuning t = before;
  const Error err = parse_tuning (text, &t, keys);
  if (err) {
    FUZZ_CHECK (same (t, before), "a refused string changed the knobs: %s", err.message.c_str ());
    FUZZ_CHECK (err.message.size () < 512 + size, "message of %zu bytes", err.message.size ());
    return 0;
  }
  FUZZ_CHECK (t.upload_queue >= -1 && t.upload_queue <= 2, "upload-queue %d", t.upload_queue);
  FUZZ_CHECK (t.read_prefix >= 0 && t.read_prefix <= (1 << 24), "read-prefix %d", t.read_prefix);
  FUZZ_CHECK (t.queues >= 0 && t.queues <= 64, "queues %d", t.queues);
  FUZZ_CHECK (t.build_options.find (';') == std::string::npos, "build options hold a ';'");
  for (const auto &[key, value] : t.family) {
    FUZZ_CHECK (std::find (keys.begin (), keys.end (), key) != keys.end (), "undeclared key '%s'", key.c_str ());
    FUZZ_CHECK (value.find (';') == std::string::npos, "a family's value holds a ';'");
  }
  // the families' readings: a value in range, or an error naming the entry
  std::vector<int> list;
  if (Error e = tuning_list (t, "waldboost-divisors", 6, 1, 1024, false, false, "divisors", &list))
    FUZZ_CHECK (e.message.find ("waldboost-divisors=") != std::string::npos, "%s", e.message.c_str ());
  else
    for (int d : list)
      FUZZ_CHECK (d >= 1 && d <= 1024 && list.size () <= 6, "divisor %d", d);
  list.clear ();
  bool set = false;
  if (Error e = tuning_list (t, "forest-regroup", 4, 1, 100000, true, true, "increasing stages", &list, &set))
    FUZZ_CHECK (e.message.find ("forest-regroup=") != std::string::npos, "%s", e.message.c_str ());
  else
    for (size_t i = 0; i < list.size (); i++)
      FUZZ_CHECK (set && list.size () <= 4 && list[i] >= 1 && list[i] <= 100000 && (i == 0 || list[i] > list[i - 1]),
                  "regroup stage %d", list[i]);
  int first = 0;
  if (Error e = tuning_int (t, "cascade-first-stages", 1, 64, &first))
    FUZZ_CHECK (e.message.find ("cascade-first-stages=") != std::string::npos, "%s", e.message.c_str ());
  else
    FUZZ_CHECK (first >= 0 && first <= 64, "cascade-first-stages %d", first);
  HogEval eval = HogEval::Auto;
  if (Error e = hog_eval_option (t, &eval))
    FUZZ_CHECK (e.message.find ("hog-eval=") != std::string::npos, "%s", e.message.c_str ());
  Tuning twice = before;
  const Error err2 = parse_tuning (text + ";" + text, &twice, keys);
  FUZZ_CHECK (!err2 && same (t, twice), "the string twice gives other knobs: %s", err2.message.c_str ());
  return 0;
}
