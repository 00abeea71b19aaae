// Object ids across frames: the tracks behind gputrack.  Plain C++, no
// GStreamer.
//
// Every frame: each track predicts its box (constant velocity); its template
// is searched around the prediction (TemplateSearch, one launch for all
// tracks); where the frame carries detections they are associated with the
// tracks, greedily by decreasing IoU between a detection and the box the
// track's search found (the prediction where the search was not confident),
// pairs below the IoU threshold left apart.  A matched track takes the
// detection's box and refreshes its template from it; an unmatched detection
// starts a track; a track not matched moves to its searched box when the
// search is confident and is reported, else it coasts on its velocity
// unreported.  A track is dropped when no detection matched it for more than
// max_lost frames, when its centre leaves the frame, or when it sits,
// confidently, on the box of a track matched in the same frame (a
// duplicate).
//
// At most max_tracks tracks: a frame's detections beyond max_tracks are not
// tracked (the most confident kept, the earlier of equal ones), and where
// new tracks would take the count past max_tracks, tracks no detection
// matched on the frame are dropped, the stalest first (most frames since a
// detection matched), then the least confident detection, then the oldest
// track.  Every search and association costs in proportion to the tracks
// (docs/tracking.md).
//
// Frames in flight (submit / ready / collect): a frame's association needs
// the tracks as the frame before left them, so frames are associated one
// after the other, in order; what overlaps is the device work around it.
// submit() enqueues the frame's upload (or takes the frame another engine
// uploaded) and its conversion at once, whatever is in flight; the frame's
// search is enqueued as soon as the frame before it is associated (its
// templates refreshed on the device and its tracks' predictions known), and
// read back without blocking; ready() and collect() associate the frames
// whose results came back.  So frame n + 1 uploads and converts while frame
// n is searched, and the host never waits for an upload.
#pragma once

#include "search.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace gpudetect {
namespace track {

struct TrackerConfig {
  // The search's settings; none of it is used when `search` is false
  // (association by IoU alone on frames with detections: "zero-term").
  TemplateSearch::Config engine;
  bool search = true;
  int max_lost = 30;             // frames without a matching detection before a track is dropped
  double min_confidence = 0.4;   // a search below this does not move (nor report) the track
  double iou_threshold = 0.3;    // least IoU of a detection and a track's box to match
  int blend = 256;               // weight / 256 of a matched detection's appearance in the template
  int max_tracks = 256;          // tracks at most (1 or more)
  // Frames in flight at most (engine.frames is set from it).
  int frames = 1;
};

struct Detection {
  Box box;
  int label_id = 0;
  std::string label;
  double confidence = 0;
};

struct TrackedObject {
  uint64_t id = 0;
  Box box;
  int label_id = 0;
  std::string label;
  double detection_confidence = 0; // of the detection that last matched the track
  double confidence = 0;           // the template search's on this frame (1 where a detection matched and there was no search)
  int detection = -1;              // index of the detection matched on this frame, -1 where tracked
  int since_detection = 0;         // frames since a detection last matched
};

class Tracker {
public:
  static Error create (const TrackerConfig &config, std::unique_ptr<Tracker> *out);
  ~Tracker ();

  // One frame: `frame` (may be null when the config has no search) and its
  // detections (empty on frames without).  `out`: every object reported on
  // this frame, detections first in their order, then tracked ones.
  // Synchronous: submit() and collect().
  Error process (const ColorFrame *frame, int width, int height, const std::vector<Detection> &detections,
                     std::vector<TrackedObject> *out);

  // A frame into flight: its pixels from the host (`frame`, whose memory
  // must stay valid until the frame is collected or discarded) or already on
  // the device (`device`, another engine's upload on this context; used
  // instead of `frame` where given).  The frame is uploaded only when tracks
  // may be searched in it or templates cut from it.  Fails when frames()
  // frames are in flight.  `*ticket` names the frame.
  Error submit (const ColorFrame *frame, std::shared_ptr<const DeviceFrame> device, int width, int height,
                    std::vector<Detection> detections, uint64_t *ticket);
  // Whether the frame is associated (its objects known); never blocks, and
  // moves the frames in flight on as far as their device work allows.
  bool ready (uint64_t ticket);
  // The frame's objects, waiting for them; frames are collected in the
  // order they were submitted (`ticket` is the oldest in flight).
  // `dropped` (where given): the frame's detections left untracked and
  // tracks dropped to stay within max_tracks.
  Error collect (uint64_t ticket, std::vector<TrackedObject> *out, size_t *dropped = nullptr);
  // Drops every frame in flight (after its device work), tracks as the
  // frames associated so far left them.
  void discard ();
  size_t in_flight () const;
  int frames () const;
  uint64_t uploads () const;        // frames copied from host memory to the device
  uint64_t shared_frames () const;  // frames taken from another engine's upload
  // The association's settings, changeable between frames (max_tracks
  // applies from the next frame submitted).
  void set_policy (int max_lost, double min_confidence, double iou_threshold, int blend, int max_tracks);
  void reset ();            // forget every track (ids continue)
  size_t tracks () const;
  const TemplateSearch *engine () const; // null without search
  uint64_t searches () const;            // templates searched so far

  struct Impl;

private:
  explicit Tracker (std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

double iou (const Box &a, const Box &b);

} // namespace track
} // namespace gpudetect
