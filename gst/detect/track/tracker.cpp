#include "tracker.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <tuple>

namespace gpudetect {
namespace track {

double iou (const Box &a, const Box &b) {
  const double x0 = std::max (a.x, b.x), y0 = std::max (a.y, b.y);
  const double x1 = std::min (a.x + a.w, b.x + b.w), y1 = std::min (a.y + a.h, b.y + b.h);
  const double inter = std::max (0.0, x1 - x0) * std::max (0.0, y1 - y0);
  const double uni = a.w * a.h + b.w * b.h - inter;
  return uni > 0 ? inter / uni : 0;
}

namespace {
struct Track {
  uint64_t id = 0;
  int slot = -1;
  Box box;              // where a detection or a confident search last placed it, `lost` frames ago
  double vx = 0, vy = 0; // centre velocity, pixels per frame, from its detections
  Box det_box;           // its last detection, on frame det_frame
  uint64_t det_frame = 0;
  int detections = 0;
  int label_id = 0;
  std::string label;
  double detection_confidence = 0;
  int since_detection = 0;
  int lost = 0;         // frames since a detection or a confident search last placed it
};

// Frames a lost track is still reported on its velocity.
constexpr int kCoastReported = 3;

// A frame in flight, from submit() to collect().
struct InFlight {
  uint64_t ticket = 0;
  int slot = 0;                 // the engine's frame slot
  int width = 0, height = 0;
  std::vector<Detection> dets;  // those tracked: at most max_tracks
  std::vector<int> det_index;   // each one's index among the frame's detections
  size_t dropped = 0;           // detections left untracked, tracks dropped for max_tracks
  bool on_device = false;       // uploaded (or attached) and converted
  enum class State { Waiting, Searching, Done } state = State::Waiting;
  size_t nt = 0;                // tracks when it began, and their predictions
  std::vector<Box> predicted;
  std::vector<TrackedObject> out;
  Error error;
};
} // namespace

struct Tracker::Impl {
  TrackerConfig cfg;
  std::unique_ptr<TemplateSearch> engine;
  std::vector<Track> tracks;
  std::vector<int> free_slots;
  int next_slot = 0;
  uint64_t next_id = 1;
  uint64_t searches = 0;
  uint64_t frame = 0;
  uint64_t next_ticket = 0;
  uint64_t uploads = 0, shared = 0;
  std::deque<InFlight> queue;

  int take_slot () {
    if (!free_slots.empty ()) {
      const int s = free_slots.back ();
      free_slots.pop_back ();
      return s;
    }
    return next_slot++;
  }
};

Error Tracker::create (const TrackerConfig &config, std::unique_ptr<Tracker> *out) {
  auto impl = std::make_unique<Impl> ();
  impl->cfg = config;
  impl->cfg.max_tracks = std::max (1, config.max_tracks);
  if (config.frames < 1 || config.frames > 64)
    return "frames in flight must be 1 to 64";
  if (config.search) {
    TemplateSearch::Config ec = config.engine;
    ec.frames = config.frames;
    if (Error e = TemplateSearch::create (ec, &impl->engine))
      return e;
  }
  out->reset (new Tracker (std::move (impl)));
  return {};
}

Tracker::Tracker (std::unique_ptr<Impl> impl) : impl_ (std::move (impl)) {}
Tracker::~Tracker () = default;

size_t Tracker::tracks () const { return impl_->tracks.size (); }
const TemplateSearch *Tracker::engine () const { return impl_->engine.get (); }
uint64_t Tracker::searches () const { return impl_->searches; }

void Tracker::set_policy (int max_lost, double min_confidence, double iou_threshold, int blend, int max_tracks) {
  impl_->cfg.max_lost = max_lost;
  impl_->cfg.min_confidence = min_confidence;
  impl_->cfg.iou_threshold = iou_threshold;
  impl_->cfg.blend = blend;
  impl_->cfg.max_tracks = std::max (1, max_tracks);
}

// A confidence to rank by (NaN last, so that the order is strict).
static double rank (double confidence) { return std::isnan (confidence) ? -HUGE_VAL : confidence; }

// The frame's detections that are tracked: the max_tracks most confident
// (the earlier of equal ones), in their order.
static void keep_most_confident (InFlight &f, size_t max_tracks) {
  const size_t n = f.dets.size ();
  std::vector<int> order (n);
  for (size_t d = 0; d < n; d++)
    order[d] = static_cast<int> (d);
  if (n > max_tracks) {
    std::stable_sort (order.begin (), order.end (),
                      [&] (int a, int b) { return rank (f.dets[a].confidence) > rank (f.dets[b].confidence); });
    order.resize (max_tracks);
    std::sort (order.begin (), order.end ());
    std::vector<Detection> kept;
    kept.reserve (max_tracks);
    for (int d : order)
      kept.push_back (std::move (f.dets[d]));
    f.dets = std::move (kept);
    f.dropped += n - max_tracks;
  }
  f.det_index = std::move (order);
}

void Tracker::reset () {
  discard ();
  impl_->tracks.clear ();
  impl_->free_slots.clear ();
  impl_->next_slot = 0;
}

// The track's box `frames` frames after it was last placed, at constant velocity.
static Box extrapolate (const Track &t, int frames) {
  Box b = t.box;
  b.x += t.vx * frames;
  b.y += t.vy * frames;
  return b;
}

// A detection on frame `frame`: the velocity of the centre since the
// track's last detection, smoothed.  The velocity comes from detections
// alone: a search that follows a vanishing object (occluded, leaving) lags
// behind it, and would slow the track down just before it has to coast.
static void detected (Track &t, const Box &b, uint64_t frame) {
  if (t.detections > 0 && frame > t.det_frame) {
    const double n = static_cast<double> (frame - t.det_frame);
    const double dx = ((b.x + b.w / 2) - (t.det_box.x + t.det_box.w / 2)) / n;
    const double dy = ((b.y + b.h / 2) - (t.det_box.y + t.det_box.h / 2)) / n;
    const double keep = t.detections > 1 ? 0.5 : 0.0; // the second detection gives the first velocity
    t.vx = keep * t.vx + (1 - keep) * dx;
    t.vy = keep * t.vy + (1 - keep) * dy;
  }
  t.det_box = b;
  t.det_frame = frame;
  t.detections++;
  t.box = b;
  t.lost = 0;
}

// A confident search: the box moves, the velocity stays.
static void found_at (Track &t, const Box &b) {
  t.box = b;
  t.lost = 0;
}

// Frames are associated in order: a frame begins (its tracks' predictions
// made, its search enqueued) once every frame before it is associated, and
// is associated once its search's results are back.
static Error begin (Tracker::Impl &m, InFlight &f) {
  m.frame++;
  const size_t nt = m.tracks.size ();
  f.nt = nt;
  f.predicted.resize (nt);
  for (size_t i = 0; i < nt; i++) {
    const Track &t = m.tracks[i];
    f.predicted[i] = extrapolate (t, t.lost + 1);
  }
  if (!m.engine || nt == 0)
    return {}; // nothing to search: associated at once
  if (!f.on_device)
    return {"a frame with tracks to search was not uploaded"};
  std::vector<int> slots (nt);
  for (size_t i = 0; i < nt; i++)
    slots[i] = m.tracks[i].slot;
  if (Error e = m.engine->search_async (f.slot, slots, f.predicted))
    return e;
  m.searches += nt;
  f.state = InFlight::State::Searching;
  return {};
}

// The search's results (none where nothing was searched) turned into the
// frame's objects and the tracks' new state; templates refreshed.
static Error associate (Tracker::Impl &m, InFlight &f, const std::vector<Match> &matches) {
  std::vector<TrackedObject> *out = &f.out;
  const std::vector<Detection> &dets = f.dets;
  const int width = f.width, height = f.height;
  out->clear ();
  const bool search = static_cast<bool> (m.engine);
  const size_t nt = f.nt;
  if (m.tracks.size () != nt || (search && nt > 0 && matches.size () != nt))
    return {"tracks changed while a frame was in flight"};

  std::vector<Box> found (f.predicted);
  std::vector<double> conf (nt, 0.0);
  std::vector<bool> ok (nt, false);
  if (search && nt > 0) {
    for (size_t i = 0; i < nt; i++) {
      conf[i] = matches[i].confidence;
      ok[i] = conf[i] >= m.cfg.min_confidence;
      // a lost track is found again by the search only near its prediction
      const Geometry &g = m.engine->geometry ();
      const int off = std::max (std::abs (matches[i].best_x - g.centre_x ()), std::abs (matches[i].best_y - g.centre_y ()));
      if (m.tracks[i].lost > 0 && off > std::max (1, std::min (g.centre_x (), g.centre_y ()) / 4))
        ok[i] = false;
      if (ok[i])
        found[i] = matches[i].box;
    }
  }

  // association: greedy by decreasing IoU
  std::vector<int> det_track (dets.size (), -1), track_det (nt, -1);
  if (!dets.empty () && nt > 0) {
    std::vector<std::tuple<double, size_t, size_t>> pairs;
    for (size_t d = 0; d < dets.size (); d++)
      for (size_t i = 0; i < nt; i++) {
        const double v = iou (dets[d].box, found[i]);
        if (v >= m.cfg.iou_threshold)
          pairs.emplace_back (v, i, d);
      }
    std::stable_sort (pairs.begin (), pairs.end (),
                      [] (const auto &a, const auto &b) { return std::get<0> (a) > std::get<0> (b); });
    for (const auto &[v, i, d] : pairs)
      if (track_det[i] < 0 && det_track[d] < 0) {
        track_det[i] = static_cast<int> (d);
        det_track[d] = static_cast<int> (i);
      }
  }

  // updates
  std::vector<int> upd_slots, new_slots;
  std::vector<Box> upd_boxes, new_boxes;
  std::vector<bool> drop (nt, false);
  for (size_t i = 0; i < nt; i++) {
    Track &t = m.tracks[i];
    if (track_det[i] >= 0) {
      const Detection &d = dets[track_det[i]];
      detected (t, d.box, m.frame);
      t.since_detection = 0;
      t.label_id = d.label_id;
      t.label = d.label;
      t.detection_confidence = d.confidence;
      upd_slots.push_back (t.slot);
      upd_boxes.push_back (d.box);
      continue;
    }
    t.since_detection++;
    if (ok[i])
      found_at (t, found[i]);
    else
      t.lost++; // coasting on its velocity
    const Box now = extrapolate (t, t.lost);
    const double cx = now.x + now.w / 2, cy = now.y + now.h / 2;
    if (t.since_detection > m.cfg.max_lost || cx < 0 || cy < 0 || cx >= width || cy >= height)
      drop[i] = true;
  }
  // duplicates: a track confidently on the box of a track a detection matched
  if (!dets.empty ())
    for (size_t i = 0; i < nt; i++)
      if (track_det[i] < 0 && !drop[i] && ok[i])
        for (size_t j = 0; j < nt; j++)
          if (track_det[j] >= 0 && iou (m.tracks[i].box, m.tracks[j].box) > 0.5) { // both placed on this frame
            drop[i] = true;
            break;
          }

  // max_tracks: tracks no detection matched make room for the new ones,
  // the stalest first, then the least confident detection, then the oldest
  // (the detections, and so the matched and new tracks, are max_tracks at most)
  size_t new_tracks = 0, kept = 0;
  for (size_t d = 0; d < dets.size (); d++)
    new_tracks += det_track[d] < 0;
  std::vector<size_t> unmatched;
  for (size_t i = 0; i < nt; i++)
    if (!drop[i]) {
      kept++;
      if (track_det[i] < 0)
        unmatched.push_back (i);
    }
  const size_t max_tracks = static_cast<size_t> (m.cfg.max_tracks);
  if (kept + new_tracks > max_tracks) {
    std::sort (unmatched.begin (), unmatched.end (), [&] (size_t a, size_t b) {
      const Track &ta = m.tracks[a], &tb = m.tracks[b];
      if (ta.since_detection != tb.since_detection)
        return ta.since_detection > tb.since_detection;
      if (rank (ta.detection_confidence) != rank (tb.detection_confidence))
        return rank (ta.detection_confidence) < rank (tb.detection_confidence);
      return ta.id < tb.id;
    });
    const size_t excess = std::min (kept + new_tracks - max_tracks, unmatched.size ());
    for (size_t k = 0; k < excess; k++)
      drop[unmatched[k]] = true;
    f.dropped += excess;
  }

  // report: detections first (in their order), then confidently tracked ones
  for (size_t d = 0; d < dets.size (); d++) {
    TrackedObject o;
    if (det_track[d] >= 0) {
      const Track &t = m.tracks[det_track[d]];
      o.id = t.id;
      o.confidence = search ? conf[det_track[d]] : 1.0;
    } else {
      Track t;
      t.id = m.next_id++;
      t.slot = search ? m.take_slot () : -1;
      detected (t, dets[d].box, m.frame);
      t.label_id = dets[d].label_id;
      t.label = dets[d].label;
      t.detection_confidence = dets[d].confidence;
      if (search) {
        new_slots.push_back (t.slot);
        new_boxes.push_back (t.box);
      }
      o.id = t.id;
      o.confidence = 1.0;
      m.tracks.push_back (std::move (t));
    }
    o.box = dets[d].box;
    o.label_id = dets[d].label_id;
    o.label = dets[d].label;
    o.detection_confidence = dets[d].confidence;
    o.detection = f.det_index[d];
    o.since_detection = 0;
    out->push_back (std::move (o));
  }
  for (size_t i = 0; i < nt; i++) {
    const Track &t = m.tracks[i];
    if (track_det[i] >= 0 || drop[i] || t.lost > (search ? kCoastReported : 0))
      continue;
    TrackedObject o;
    o.id = t.id;
    o.box = extrapolate (t, t.lost);
    o.label_id = t.label_id;
    o.label = t.label;
    o.detection_confidence = t.detection_confidence;
    o.confidence = conf[i];
    o.since_detection = t.since_detection;
    out->push_back (std::move (o));
  }

  // templates: refreshed from matched detections, cut for new tracks
  if (search && (!upd_slots.empty () || !new_slots.empty ())) {
    if (!f.on_device)
      return {"a frame with templates to cut was not uploaded"};
    if (Error e = m.engine->update_in (f.slot, upd_slots, upd_boxes, m.cfg.blend))
      return e;
    if (Error e = m.engine->update_in (f.slot, new_slots, new_boxes, 256))
      return e;
  }
  // dropped tracks give their slots back (new tracks were appended after nt)
  std::vector<Track> keep;
  keep.reserve (m.tracks.size ());
  for (size_t i = 0; i < m.tracks.size (); i++) {
    if (i < nt && drop[i]) {
      if (m.tracks[i].slot >= 0)
        m.free_slots.push_back (m.tracks[i].slot);
      continue;
    }
    keep.push_back (std::move (m.tracks[i]));
  }
  m.tracks = std::move (keep);
  return {};
}


// Moves the frames in flight on, in order, as far as their device work
// allows; waits for the device only for frames up to `block_until`.
static void advance (Tracker::Impl &m, uint64_t block_until) {
  for (InFlight &f : m.queue) {
    if (f.state == InFlight::State::Done)
      continue;
    if (f.state == InFlight::State::Waiting) {
      if (Error e = begin (m, f)) {
        f.error = e;
        f.state = InFlight::State::Done;
        continue;
      }
      if (f.state == InFlight::State::Waiting) { // nothing searched
        f.error = associate (m, f, {});
        f.state = InFlight::State::Done;
        continue;
      }
    }
    // searching
    if (f.ticket > block_until && !m.engine->search_ready (f.slot))
      return;
    std::vector<Match> matches;
    Error e = m.engine->search_results (f.slot, &matches);
    f.error = e ? e : associate (m, f, matches);
    f.state = InFlight::State::Done;
  }
}

Error Tracker::submit (const ColorFrame *frame, std::shared_ptr<const DeviceFrame> device, int width, int height,
                           std::vector<Detection> dets, uint64_t *ticket) {
  Impl &m = *impl_;
  if (m.queue.size () >= static_cast<size_t> (frames ()))
    return {"every frame slot is in flight"};
  InFlight f;
  f.ticket = ++m.next_ticket;
  f.slot = static_cast<int> (f.ticket % static_cast<uint64_t> (frames ()));
  f.width = width;
  f.height = height;
  f.dets = std::move (dets);
  keep_most_confident (f, static_cast<size_t> (m.cfg.max_tracks));
  // The tracks on this frame are those of now, less those the frames in
  // flight drop, plus those their detections and this frame's start:
  // without any, nothing is searched in the frame nor cut from it.
  bool needed = !m.tracks.empty () || !f.dets.empty ();
  for (const InFlight &q : m.queue)
    needed = needed || !q.dets.empty ();
  if (m.engine && needed && (device || frame)) {
    const bool shared = static_cast<bool> (device);
    Error e = shared ? m.engine->attach (f.slot, std::move (device)) : m.engine->upload_async (f.slot, *frame);
    if (e)
      return e;
    (shared ? m.shared : m.uploads)++;
    f.on_device = true;
  }
  *ticket = f.ticket;
  m.queue.push_back (std::move (f));
  advance (m, 0);
  return {};
}

bool Tracker::ready (uint64_t ticket) {
  Impl &m = *impl_;
  advance (m, 0);
  for (const InFlight &f : m.queue)
    if (f.ticket == ticket)
      return f.state == InFlight::State::Done;
  return true;
}

Error Tracker::collect (uint64_t ticket, std::vector<TrackedObject> *out, size_t *dropped) {
  Impl &m = *impl_;
  out->clear ();
  if (dropped)
    *dropped = 0;
  if (m.queue.empty () || m.queue.front ().ticket != ticket)
    return {"frames are collected in the order they were submitted"};
  advance (m, ticket);
  InFlight f = std::move (m.queue.front ());
  m.queue.pop_front ();
  Error e = f.error;
  // the frame's host memory is free once its upload is done
  if (f.on_device)
    if (Error w = m.engine->wait_upload (f.slot); w && !e)
      e = w;
  // the next frame's search goes to the device while the caller works
  advance (m, 0);
  if (e)
    return e;
  *out = std::move (f.out);
  if (dropped)
    *dropped = f.dropped;
  return {};
}

void Tracker::discard () {
  Impl &m = *impl_;
  if (m.engine)
    m.engine->finish ();
  m.queue.clear ();
}

size_t Tracker::in_flight () const { return impl_->queue.size (); }
int Tracker::frames () const { return impl_->engine ? impl_->engine->frames () : std::max (1, impl_->cfg.frames); }
uint64_t Tracker::uploads () const { return impl_->uploads; }
uint64_t Tracker::shared_frames () const { return impl_->shared; }

Error Tracker::process (const ColorFrame *frame, int width, int height, const std::vector<Detection> &dets,
                            std::vector<TrackedObject> *out) {
  out->clear ();
  uint64_t ticket = 0;
  if (Error e = submit (frame, nullptr, width, height, dets, &ticket))
    return e;
  return collect (ticket, out);
}

} // namespace track
} // namespace gpudetect
