// The engine's few expert knobs, typed, in one place.  Defaults are the
// measured winners (docs/benchmarks.md); the knobs that remain select code
// paths an expert may need on an unusual device, and the tests use them to run
// every path on the CPU.  Set from text "key=value;key=value" through
// DetectorConfig::tuning (the element's `tuning` property, gpudetect-bench's
// --tuning), after the GPUDETECT_TUNING environment variable: the
// configuration's entries win.
#pragma once

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

  // Boosted cascades (OpenCV).
  // cascade-first-stages=N (GPU schedule): stages cascade_first runs
  // (default 2, 1 for LBP models without warp votes).
  int cascade_first_stages = 0;
  // cascade-vector-stages=N (CPU schedule): stages run over 16 windows at
  // once (default: LBP 3, Haar the stages within 100 trees; 0: none).
  int cascade_vector_stages = -1;

  // WaldBoost.
  // waldboost-divisors=8,4,4,4: each step of the staged reduction stops once
  // at most 1/D of its windows survive (default: the model's, else 8,4,4,4).
  std::vector<int> waldboost_divisors;
  // waldboost-sync-first=N, waldboost-sync-step=N: stages every window runs
  // before the first survivor count, and between counts (default: the
  // model's, else the engine's).
  int waldboost_sync_first = 0, waldboost_sync_step = 0;

  // Random-forest cascades.
  // forest-regroup=11,154,600 (GPU schedule): the stages before which the
  // windows still alive are compacted into a list and the evaluation is
  // launched again over it (0 to 4 increasing stages; "none": one dense
  // launch through every stage; default 11,154,600).
  bool forest_regroup_set = false;
  std::vector<int> forest_regroup;

  // Linear HOG filters.
  // hog-eval=direct|fft|auto: filters correlated directly, or through the
  // frequency domain (patchworks and VkFFT, families/hogfilter/fftconv.h);
  // auto (default): the faster for the model on the device, by the measured
  // crossover (docs/benchmarks.md).
  enum class HogEval { Auto, Direct, Fft };
  HogEval hog_eval = HogEval::Auto;
};

// Applies "key=value;key=value" to `t`.  Returns an empty string on success,
// else a message naming the entry at fault (and leaves `t` unchanged).
std::string parse_tuning (const std::string &text, Tuning *t);

// GPUDETECT_TUNING, then `config`, over the defaults.
std::string make_tuning (const std::string &config, Tuning *t);

} // namespace gpudetect
