// The detection engine: plain C++, no GStreamer.  Frames in (pointer, size,
// stride, format), boxes out.  Work is asynchronous: submit() enqueues upload,
// pyramid, integrals, cascade phases and one non-blocking readback on an
// in-order queue into one of `slots` slots; collect() waits for that slot's
// readback and groups.  Errors are returned as strings (empty = success).
#pragma once

#include "cl/cl.h"
#include "core/group.h"
#include "core/models.h"
#include "families/cascade/model.h"
#include "core/pyramid.h"

#include <array>
#include <memory>
#include <string>
#include <vector>

namespace gpudetect {

enum class PixelFormat { Gray8, Rgba, Bgra, Rgbx, Bgrx, Argb, Abgr, Xrgb, Xbgr };

struct Frame {
  const uint8_t *data = nullptr; // first pixel (Y plane for NV12/I420: pass Gray8)
  int width = 0, height = 0;
  int stride = 0;                // bytes per row
  PixelFormat format = PixelFormat::Gray8;
};

struct DetectorConfig {
  std::string model = "lbp-frontalface-improved"; // short name or path
  std::string device;                             // "", "auto", an index or a name substring
  double scale_factor = 1.1;
  int min_neighbors = 3;
  Size2 min_size{0, 0};
  Size2 max_size{0, 0};                           // 0: unbounded
  int slots = 2;                                  // frames in flight
  int hit_capacity = 16384;                       // raw hits read back per frame
  bool profile = false;                           // keep per-command events for stage times
  // Upload each frame straight from the caller's memory (which must then stay
  // valid until the frame is collected or discarded) instead of copying it
  // into pinned staging memory in submit().
  bool direct_upload = false;
};

struct Detection {
  Rect rect;
  int neighbors = 0;
  float confidence = 0;
  int label_id = 0;
};

// A raw window accepted by every stage, before grouping.
struct RawHit {
  int level = 0, x = 0, y = 0; // window origin in level pixels
  Rect rect;                   // in frame pixels, as OpenCV reports it
};

// Device time of each command of a frame, in microseconds (profiling events).
// first: stage 0 over every window, the other generated stages over the
// windows OpenCV evaluates that pass it, and the list of their survivors (GPU
// schedule), or the whole cascade (CPU schedule); rest: the later stages over
// that list.
struct StageTimes {
  double upload = 0, pyramid = 0, integral = 0, tilted = 0, first = 0, rest = 0, readback = 0;
  double total_device = 0; // first command's start to last command's end
  int launches = 0;
};

struct FrameResult {
  std::vector<Detection> objects;
  std::vector<RawHit> hits;
  bool truncated = false; // more raw hits than hit_capacity
  StageTimes times;       // filled when profiling
  double group_us = 0;    // host grouping time
};

// What went wrong in Detector::create, for callers that report by kind.
enum class CreateError { None, Model, Device, Build, Resource, Config };

class Detector {
public:
  // Loads the model, opens the device and builds the kernels.
  static std::unique_ptr<Detector> create (const DetectorConfig &config, std::string *error,
                                           CreateError *kind = nullptr);
  ~Detector ();

  // Enqueues a frame into a free slot; `*ticket` names it for collect().
  // Fails when no slot is free.  The frame's memory may be reused once
  // submit() returns (it is copied into pinned staging memory), unless
  // direct_upload is set: then it must stay valid until collect()/discard().
  std::string submit (const Frame &frame, int *ticket);
  // True once the slot's readback completed (never blocks).
  bool ready (int ticket) const;
  // Waits for the slot's work, decodes and groups its hits, frees the slot.
  std::string collect (int ticket, FrameResult *out);
  // Drops a slot's result (waits for its work first).
  void discard (int ticket);
  // submit + collect.
  std::string detect (const Frame &frame, FrameResult *out);

  int free_slots () const;
  int slots () const;
  // Changes detection parameters; takes effect for frames submitted later.
  void set_search (double scale_factor, Size2 min_size, Size2 max_size);
  void set_min_neighbors (int n);

  const cl::DeviceInfo &device () const;
  const CascadeModel &model () const;
  // The pyramid planned for the last submitted frame size.
  const PyramidGeometry *geometry () const;
  bool built_from_cache () const;
  // Page-locked host memory on this device's context (made on first use):
  // frames whose pixels lie in it upload at the device's full transfer speed,
  // without the staging copy a driver makes of ordinary memory (with
  // direct_upload) or the one submit() makes (without).  Null on failure.
  std::shared_ptr<cl::HostAllocator> host_allocator (std::string *error = nullptr);
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
