// The engine's few expert knobs, typed, in one place.  Defaults are the
// measured winners (docs/benchmarks.md); the knobs that remain select code
// paths an expert may need on an unusual device, and the tests use them to run
// every path on the CPU.  Set from text "key=value;key=value" through
// DetectorConfig::tuning (the element's `tuning` property, gpudetect-bench's
// --tuning), after the GPUDETECT_TUNING environment variable: the
// configuration's entries win.
#pragma once

#include "cl/error.h"

#include <map>
#include <string>
#include <vector>

namespace gpudetect {

struct Tuning {
  // schedule=gpu|cpu: many lanes (work-groups of 256 over lists of windows)
  // or few cores (a work-item per row); default: gpu on GPUs and accelerators.
  enum class Schedule { Auto, Gpu, Cpu };
  Schedule schedule = Schedule::Auto;
  // upload-queue=0|1|2: frames uploaded on a second queue never, always, or
  // when a frame before is still on the device (default: 2 on the GPU
  // schedule, else 0).
  int upload_queue = -1;
  // queues=N: detectors on a shared device (DetectorConfig::share: the
  // streams of one process) put their frames' work on one of N in-order
  // queues the device holds, taken in turn, instead of a queue each
  // (default 0: a queue each; bench/run-streams-benchmarks.sh compares).
  int queues = 0;
  // read-prefix=N: candidates read back with each frame (a frame with more
  // reads the rest when collected); 0: the whole capacity.
  int read_prefix = 1023;
  // build-options=...: appended to the OpenCL build options.
  std::string build_options;

  // The families' own knobs, "key" -> "value" as written (e.g.
  // waldboost-divisors=8,4,4,4): each family declares its keys and reads and
  // checks their values itself (Family::options, families/registry.h
  // family_option_keys; README's tuning table lists them).
  std::map<std::string, std::string> family;
};

// Applies "key=value;key=value" to `t`: the keys above, and those of
// `family_keys` (the knobs the families declare) into Tuning::family.  On a
// malformed entry or another key, an error naming the entry (and `t` stays
// as it was).
Error parse_tuning (const std::string &text, Tuning *t, const std::vector<std::string> &family_keys = {});

// GPUDETECT_TUNING, then `config`, over the defaults.
Error make_tuning (const std::string &config, Tuning *t, const std::vector<std::string> &family_keys = {});

// A family's reading of its knob `key` where the text set it (else `*out`
// stays as it was), the error naming the entry and what it takes:
// an integer in [lo, hi];
Error tuning_int (const Tuning &t, const std::string &key, int lo, int hi, int *out);
// 1 to `max` integers in [lo, hi], comma separated, strictly increasing
// where asked, or "none" for none where allowed ("expected ... `what` ...");
// `*set` says whether the text set it;
Error tuning_list (const Tuning &t, const std::string &key, size_t max, int lo, int hi, bool increasing, bool none,
                   const char *what, std::vector<int> *out, bool *set = nullptr);
// one of `choices` (its index).
Error tuning_choice (const Tuning &t, const std::string &key, const std::vector<std::string> &choices, int *out);

} // namespace gpudetect
