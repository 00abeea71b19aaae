// The detection engine: plain C++, no GStreamer.  Frames in (pointer, size,
// stride, format), boxes out.  The model file's content picks the family
// that evaluates it (families/registry.h); the core runs every family the
// same way (docs/ARCHITECTURE.md).  Work is asynchronous: submit() enqueues
// the upload, the family's kernels and one non-blocking readback on an
// in-order queue into one of `slots` slots; collect() waits for that slot's
// readback, decodes the candidates and lets the family group them.  Errors
// are values (cl/error.h).
#pragma once

#include "cl/cl.h"
#include "core/candidates.h"
#include "core/family.h"
#include "core/frame.h"
#include "core/group.h"
#include "core/models.h"
#include "core/pyramid.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace gpudetect {

namespace runtime {
class Interrupt;
}

struct DetectorConfig {
  std::string model = "lbp-frontalface-improved"; // short name, file name or path
  std::string device;                             // "", "auto", an index or a name substring
  // A device whose context to share (another engine's, gputrack's, the
  // other streams'): then `device` is not used, the detector makes only a
  // queue of its own, and programs come from the context's cache (built once
  // for every detector with the same model and options).
  const cl::Device *share = nullptr;
  double scale_factor = 1.1;
  int min_neighbors = 3;
  Size2 min_size{0, 0};
  Size2 max_size{0, 0};                           // 0: unbounded
  // The family's decision threshold (ModelInfo / Family::threshold_meaning):
  // cascades the least confidence of an object, WaldBoost the final sum;
  // unset: the model's own.
  std::optional<double> threshold;
  // The pyramid of families whose model gives it (random-forest cascades):
  // levels per octave (0-32) and shrink (0-8); 0: the model's.
  int levels_per_octave = 0;
  int shrink = 0;
  int slots = 2;                                  // frames in flight
  // Device memory the detector may hold, in bytes: the model's constants,
  // its planes for the frame size and the frames in flight (cl/budget.h);
  // more is refused with an error of kind Resource before it is allocated.
  // 0: cl::default_memory_budget, half the device's global memory.
  uint64_t max_device_memory = 0;
  int hit_capacity = 16384;                       // raw candidates read back per frame
  bool profile = false;                           // keep per-command events for stage times
  // Upload each frame straight from the caller's memory (which must then stay
  // valid until the frame is collected or discarded) instead of copying it
  // into pinned staging memory in submit().
  bool direct_upload = false;
  // Give each uploaded frame a device buffer of its own for as long as
  // another engine on the context holds it (device_frame()), so that the
  // frame need not be uploaded twice (gputrack after gpudetect).  The chroma
  // a Frame carries is uploaded then too, after the luma.
  bool share_frames = false;
  // Expert knobs, "key=value;..." (core/tuning.h), over GPUDETECT_TUNING.
  std::string tuning;
  // Non-zero: collect() shuffles each frame's raw candidates with this seed
  // before decoding them, as a device whose compaction wrote them in another
  // order would (the determinism test: objects must not depend on it).
  uint32_t candidate_order_seed = 0;
  // Set from another thread, cuts collect()'s wait short (Error::Kind::
  // Interrupted; the frame stays in flight): an element that stops.
  std::shared_ptr<runtime::Interrupt> interrupt;
};

// Device time of a frame, in microseconds (profiling events): its upload,
// each of its family's phases (Detector::phases: e.g. a cascade's pyramid,
// integral, first and later stages) and its readback.
struct StageTimes {
  double upload = 0, readback = 0;
  std::vector<double> phases; // in the order of Detector::phases ()
  double total_device = 0;    // first command's start to last command's end
  int launches = 0;
};

struct FrameResult {
  std::vector<Detection> objects;
  std::vector<RawHit> hits;
  bool truncated = false; // more raw candidates than hit_capacity
  int regions_left_out = 0; // regions submit() could not search with the others (PyramidGeometry::regions_left_out)
  uint32_t lost = 0;      // candidates the family dropped because a buffer of its own was full
  StageTimes times;       // filled when profiling
  double group_us = 0;    // host grouping time
};

class Detector {
public:
  // Loads the model, opens the device and builds the kernels.  The error's
  // kind says which failed (Config, Model, Device, Build; Resource where the
  // model's constants alone need more than max_device_memory).
  static Error create (const DetectorConfig &config, std::unique_ptr<Detector> *out);
  ~Detector ();

  // Plans and allocates what frames of this size and format need, as the
  // first submit() of such a frame otherwise does: an error of kind Resource
  // where that is more device memory than max_device_memory or a buffer
  // larger than the device allocates (the message says how much, the limit
  // and what makes it grow); nothing is then allocated for the frame size.
  Error prepare (int width, int height, PixelFormat format);

  // Enqueues a frame into a free slot; `*ticket` names it for collect().
  // Fails when no slot is free, and as prepare() fails for a new frame size
  // or search (kind Resource).  The frame's memory may be reused once
  // submit() returns (it is copied into pinned staging memory), unless
  // direct_upload is set: then it must stay valid until collect()/discard().
  Error submit (const Frame &frame, int *ticket);
  // The same, searching only `regions` of the frame (frame pixels, clipped
  // to it), each exactly as the region cut out as a frame of its own would
  // be searched, all of them in one pass over the device (one pyramid of
  // every region's levels, core/pyramid.h plan_regions); each object names
  // its region (Detection::region) and lies in frame pixels.  For the
  // families whose searches_regions () (cascades, WaldBoost, forests); the others'
  // detectors refuse it (kind Config).  A new list of regions is a new
  // geometry: the detector waits for its frames in flight first.
  Error submit (const Frame &frame, const std::vector<Region> &regions, int *ticket);
  // The same on a frame another engine on this detector's context uploaded
  // (DetectorConfig::share_frames; device_frame()): no upload, its pixels
  // read where they lie once its `uploaded` event completes; held until
  // the frame is collected or discarded.  Its first plane must be the luma
  // (or 4-byte pixels), rows packed.
  Error submit (std::shared_ptr<const DeviceFrame> frame, const std::vector<Region> &regions, int *ticket);
  // Whether this model's family searches regions (submit with regions).
  bool searches_regions () const;
  // True once the slot's readback completed (never blocks).
  bool ready (int ticket) const;
  // Waits for the slot's work, decodes and groups its candidates, frees the slot.
  Error collect (int ticket, FrameResult *out);
  // The frame of a submitted ticket as it lies on the device (share_frames;
  // null otherwise): valid, and never overwritten, while held.
  std::shared_ptr<const DeviceFrame> device_frame (int ticket) const;
  // Drops a slot's result (waits for its work first).
  void discard (int ticket);
  // Waits until the device has finished every frame submitted (the caller
  // then may free the memory of direct uploads and destroy the detector
  // without waiting in the destructor).
  void wait_idle ();
  // submit + collect.
  Error detect (const Frame &frame, FrameResult *out);

  int free_slots () const;
  int slots () const;
  // Change detection parameters; they take effect for frames submitted later.
  void set_search (double scale_factor, Size2 min_size, Size2 max_size);
  void set_min_neighbors (int n);
  void set_threshold (std::optional<double> threshold);

  // Device memory held for the model and the last prepared frame size
  // (what the budget counted), and the budget itself.
  uint64_t device_memory () const;
  uint64_t device_memory_limit () const;

  const cl::DeviceInfo &device () const;
  cl_context context () const;
  const ModelInfo &model () const;
  // The names of the phases StageTimes::phases times, the family's own.
  const std::vector<std::string> &phases () const;
  // What the threshold means for this model's family.
  const char *threshold_meaning () const;
  // Why candidates can be lost with this model's family, and the remedy.
  const char *lost_hint () const;
  bool gpu_schedule () const;
  // The pyramid planned for the last submitted frame size.
  const PyramidGeometry *geometry () const;
  bool built_from_cache () const;
  // Programs built on this detector's OpenCL context so far, by every engine
  // on it (cl/shared.h): detectors that share a context (DetectorConfig::
  // share) and build the same program with the same options build it once.
  uint64_t program_builds () const;
  // Page-locked host memory on this device's context (made on first use):
  // frames whose pixels lie in it upload at the device's full transfer speed,
  // without the staging copy a driver makes of ordinary memory (with
  // direct_upload) or the one submit() makes (without).
  Error host_allocator (std::shared_ptr<cl::HostAllocator> *out);
  // Blocking waits on the device so far (one per collected frame in steady state).
  uint64_t host_syncs () const;

  // Host time spent so far in submit() (copying frames into staging memory,
  // enqueueing) and blocked in collect()/discard() waiting for the device.
  struct HostTimes {
    uint64_t frames = 0;
    double copy_us = 0, enqueue_us = 0, wait_us = 0;
  };
  HostTimes host_times () const;

  struct Impl;

private:
  explicit Detector (std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

} // namespace gpudetect
