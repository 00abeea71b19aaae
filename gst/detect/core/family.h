// What a detector family plugs into the engine.  The core (detector.cpp) owns
// the device, the program build, the slots of frames in flight, the upload,
// the one readback per frame, the decoding of candidates and the timing; a
// family owns its model on the device, its feature planes (built from the
// uploaded frame on the device, e.g. core/integral.h), its evaluation kernels
// and its grouping rule.  The core never asks which family it runs.
//
// Life of a family: program() gives its OpenCL C and options, the core builds
// them into one program, setup() creates the kernels and uploads the model;
// plan() gives the pyramid for a frame size and the search parameters, and
// geometry() (re)allocates what depends on it; for each frame enqueue()
// launches the kernels from the uploaded frame to the candidates; finish()
// turns the decoded candidates into objects.
#pragma once

#include "candidates.h"
#include "cl/cl.h"
#include "frame.h"
#include "pyramid.h"
#include "runtime/runtime.h"
#include "tuning.h"

#include <cmath>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace gpudetect {

// The least float s with (double) s >= t: a threshold the device compares
// with float scores, where the reference compares doubles with t.
inline float float_at_least (double t) {
  float f = static_cast<float> (t);
  if (static_cast<double> (f) < t)
    f = std::nextafter (f, std::numeric_limits<float>::infinity ());
  return f;
}

// What to search for, changeable between frames.
struct SearchParams {
  double scale_factor = 1.1;
  Size2 min_size{0, 0};
  Size2 max_size{0, 0}; // 0: unbounded
  int min_neighbors = 3;
  // The family's decision threshold (Family::threshold_meaning); unset: the
  // model's own.
  std::optional<double> threshold;
  // The pyramid of families whose model gives it (random-forest cascades:
  // levels per octave, shrink); 0: the model's.
  int levels_per_octave = 0;
  int shrink = 0;
};

struct ModelInfo {
  std::string path;        // the file it was read from
  std::string family;      // "cascade", "waldboost", ...
  std::string label;       // default label of its objects ("face", ...)
  std::string description; // e.g. "LBP, 20 stages"
  Size2 window;            // detection window in level pixels
};

// Where the family's kernels build: the device, the schedule, the knobs.
struct BuildEnv {
  const cl::Device &dev;
  const Tuning &tuning;
  bool gpu_schedule; // many lanes, or few cores (CPUs)
};

// NVIDIA's own OpenCL platform: the shared compaction's counts through warp
// votes in inline PTX (kernels/warp.cl), as the optional option, so that a
// driver that refuses the PTX gets the portable code.  Appended to
// out->options.
inline void add_warp_ptx (const cl::DeviceInfo &dev, ProgramSpec *out) {
  if (dev.platform_name.find ("NVIDIA") == std::string::npos)
    return;
  out->optional_option = "-D WARP_PTX";
  out->options += " " + out->optional_option;
}

// The core's kernels a family's program starts with: the warp votes, the
// compaction, the candidates' record and, where `pyramid`, the resampling
// and integral pyramid (kernels/*.cl).
void add_core_sources (ProgramSpec *out, bool pyramid = true);

// The programs of the families that hand lists of windows from kernel to
// kernel (kernels/worklist.cl: cascades, WaldBoost, forests): the core's
// kernels and the lists', and on the GPU schedule the compaction's counts
// by warp votes where the driver takes them (add_warp_ptx).  Says what it
// chose, and how many persistent work-groups take a list (8 per compute unit).
struct ListProgram {
  bool warp_votes = false;
  size_t groups = 0;
};
ListProgram add_list_sources (const cl::DeviceInfo &dev, bool gpu_schedule, ProgramSpec *out);

// A frame's launches: the core chains the first after the upload, and keeps
// each command's profiling event under its phase (an index into the
// family's Family::phases).
class Launcher {
public:
  virtual ~Launcher () = default;
  virtual Error launch (cl_kernel k, size_t global, size_t local, int phase) = 0;
  // Commands a library enqueues itself (VkFFT's transforms): `enqueue` gets
  // the frame's in-order queue, after the launches before; `launches` of its
  // kernels are counted with the frame's.  They carry no profiling event:
  // the frame's device time (first command to last) includes them, its
  // phases do not.  Never a frame's first command.
  virtual Error library (const std::function<Error (cl_command_queue)> &enqueue, int launches) {
    return {"this launcher runs no library commands"};
  }
};

// One frame's buffers: the uploaded frame, and its candidates (the first
// kernel of a frame resets the count and the lost counter; see candidates.h).
struct FrameBuffers {
  const cl::Mem &src;
  const cl::Mem &candidates;
  cl_uint capacity; // pairs the candidates buffer holds
};

class Family {
public:
  // `info`: its model's (model_info); `phases`: the names of the phases its
  // launches are timed under; `threshold_meaning`: what its threshold means.
  Family (ModelInfo info, std::vector<std::string> phases, const char *threshold_meaning)
      : info_ (std::move (info)), phases_ (std::move (phases)), threshold_meaning_ (threshold_meaning) {}
  virtual ~Family () = default;
  const ModelInfo &info () const { return info_; }
  // The phases its launches are timed under (StageTimes), named for people:
  // Launcher::launch's `phase` indexes this list.
  const std::vector<std::string> &phases () const { return phases_; }
  // What `threshold` means for this family, for documentation and logs.
  const char *threshold_meaning () const { return threshold_meaning_; }
  // Why a frame's candidates can be lost with this family (FrameResult::
  // lost: a list of its own was full) and what gives it room; empty for
  // families that keep no list of their own.
  virtual const char *lost_hint () const { return ""; }
  // What makes its device memory grow besides the frame's area, with the
  // model's values (the Detector's message when the budget refuses it,
  // cl/budget.h).
  virtual std::string memory_hint () const { return "the pyramid's levels (scale-factor, min-size, max-size)"; }

  // Reads and checks its own expert knobs (Tuning::family: the keys its
  // family_option_keys entry declares, families/registry.h), before program().
  virtual Error options (const Tuning &t) { return {}; }
  virtual Error program (const BuildEnv &env, ProgramSpec *out) = 0;
  virtual Error setup (const BuildEnv &env, const cl::Program &program) = 0;
  // The schedule the family settled on in program() (it may need the CPU
  // schedule on a device too small for its GPU work-groups).
  bool gpu_schedule () const { return gpu_schedule_; }

  // Whether its kernels read the frame only through the packed pyramid's
  // resampling tables (IntegralPyramid), so that the core may give it one
  // pyramid of several regions (plan_regions) to search in one pass, each
  // region exactly as the image of its own it would be cut out; families
  // that first filter the whole frame, or plan features of their own, search
  // whole frames only.
  virtual bool searches_regions () const { return false; }
  // The pyramid of several regions of a width x height frame (families that
  // searches_regions): each region planned by plan() as an image of its own
  // (core/pyramid.h plan_regions), its tables reading the frame; a family that
  // first makes an image of its own from the frame places the regions in it
  // (PyramidGeometry::sources).
  virtual PyramidGeometry plan_regions (int width, int height, const std::vector<Region> &regions,
                                        const SearchParams &p) const;

  virtual PyramidGeometry plan (int width, int height, const SearchParams &p) const = 0;
  virtual Error geometry (const cl::Device &dev, const PyramidGeometry &g, const FrameLayout &layout,
                              const SearchParams &p) = 0;
  // Search parameters that need no new geometry (the threshold).
  virtual Error parameters (const SearchParams &p) { return {}; }
  virtual Error enqueue (const FrameBuffers &frame, Launcher &l) = 0;

  virtual std::vector<Detection> finish (const std::vector<RawHit> &hits, const PyramidGeometry &g,
                                         const SearchParams &p) const = 0;

protected:
  ModelInfo info_;          // the family completes its window and description
  bool gpu_schedule_ = true; // the family's choice (program())

private:
  std::vector<std::string> phases_;
  const char *threshold_meaning_;
};

// A model's file and default label (every model type has path and
// default_label), as `family` reads it.
template <typename Model> ModelInfo model_info (const char *family, const Model &m) {
  ModelInfo i;
  i.path = m.path;
  i.family = family;
  i.label = m.default_label;
  return i;
}

// A family of one model type, which it keeps as model_.
template <typename Model> class ModelFamily : public Family {
protected:
  ModelFamily (const char *family, Model m, std::vector<std::string> phases, const char *threshold_meaning)
      : Family (model_info (family, m), std::move (phases), threshold_meaning), model_ (std::move (m)) {}
  Model model_;
};

// The calls every family defines, declared once for the families whose
// class declares them and defines them after (parameters() has a default).
#define GPUDETECT_FAMILY_CALLS                                                                                  \
  Error program (const BuildEnv &env, ProgramSpec *out) override;                                              \
  Error setup (const BuildEnv &env, const cl::Program &program) override;                                      \
  PyramidGeometry plan (int width, int height, const SearchParams &p) const override;                          \
  Error geometry (const cl::Device &dev, const PyramidGeometry &g, const FrameLayout &layout,                  \
                  const SearchParams &p) override;                                                             \
  Error enqueue (const FrameBuffers &frame, Launcher &l) override;                                             \
  std::vector<Detection> finish (const std::vector<RawHit> &hits, const PyramidGeometry &g,                    \
                                 const SearchParams &p) const override;

} // namespace gpudetect
