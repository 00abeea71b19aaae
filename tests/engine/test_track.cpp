// The template search engine (gst/detect/track) against its host reference:
// the device's colour conversion of every input format, the templates it
// cuts, and every distance D of every search, bit for bit; best and
// alternative offsets as the reference picks them; a moved textured object
// found at its true offset; the tracker with frames in flight giving the
// objects it gives one frame at a time.  Several geometries (search areas in one band and
// in several, asymmetric areas, small work-groups).  Needs an OpenCL device.
#include "check.h"
#include "track/reference.h"
#include "track/tracker.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <string>
#include <random>
#include <vector>

using namespace gpudetect;
using namespace gpudetect::track;

namespace {

// A textured RGB scene: smooth colour gradients plus blobs, so that searches
// have a clear best and a spread of distances.
std::vector<uint8_t> scene (int w, int h, int seed) {
  std::mt19937 rng (seed);
  std::vector<uint8_t> rgbx (static_cast<size_t> (w) * h * 4);
  std::uniform_int_distribution<int> u (0, 255);
  const int k = u (rng) % 7 + 3;
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++) {
      uint8_t *p = &rgbx[(static_cast<size_t> (y) * w + x) * 4];
      p[0] = static_cast<uint8_t> ((x * k + y * 3 + ((x / 7 + y / 5) % 3) * 40) & 255);
      p[1] = static_cast<uint8_t> ((y * k + (x ^ y) % 50) & 255);
      p[2] = static_cast<uint8_t> (((x * y) / 13 + seed * 17) & 255);
      p[3] = 255;
    }
  // noise so that no two places look alike
  for (size_t i = 0; i < rgbx.size (); i++)
    if (i % 4 != 3)
      rgbx[i] = static_cast<uint8_t> (rgbx[i] + (u (rng) % 16));
  return rgbx;
}

// The scene in `format`, with its planes (owned by `store`).
ColorFrame as_format (const std::vector<uint8_t> &rgbx, int w, int h, ColorFormat format, std::vector<uint8_t> *store) {
  ColorFrame f;
  f.format = format;
  f.width = w;
  f.height = h;
  const int cw = (w + 1) / 2, ch = (h + 1) / 2;
  if (format == ColorFormat::Nv12 || format == ColorFormat::I420) {
    const int ys = w + 3, cs = format == ColorFormat::Nv12 ? 2 * cw + 5 : cw + 5; // padded strides
    // NV12's planes follow one another (uploaded in one write), I420's V
    // plane lies 64 bytes after its U plane (one write per plane)
    const size_t gap = format == ColorFormat::I420 ? 64 : 0;
    store->assign (static_cast<size_t> (ys) * h + static_cast<size_t> (cs) * ch * 2 + gap, 0);
    uint8_t *Y = store->data ();
    uint8_t *C = Y + static_cast<size_t> (ys) * h;
    for (int y = 0; y < h; y++)
      for (int x = 0; x < w; x++) {
        const uint8_t *p = &rgbx[(static_cast<size_t> (y) * w + x) * 4];
        Y[static_cast<size_t> (y) * ys + x] = static_cast<uint8_t> ((66 * p[0] + 129 * p[1] + 25 * p[2] + 128) / 256 + 16);
      }
    for (int y = 0; y < ch; y++)
      for (int x = 0; x < cw; x++) {
        const uint8_t *p = &rgbx[(static_cast<size_t> (2 * y) * w + 2 * x) * 4];
        const uint8_t U = static_cast<uint8_t> ((-38 * p[0] - 74 * p[1] + 112 * p[2] + 128 + 128 * 256) / 256);
        const uint8_t V = static_cast<uint8_t> ((112 * p[0] - 94 * p[1] - 18 * p[2] + 128 + 128 * 256) / 256);
        if (format == ColorFormat::Nv12) {
          C[static_cast<size_t> (y) * cs + 2 * x] = U;
          C[static_cast<size_t> (y) * cs + 2 * x + 1] = V;
        } else {
          C[static_cast<size_t> (y) * cs + x] = U;
          C[static_cast<size_t> (ch + y) * cs + gap + x] = V;
        }
      }
    f.planes[0] = Y;
    f.strides[0] = ys;
    f.planes[1] = C;
    f.strides[1] = cs;
    if (format == ColorFormat::I420) {
      f.planes[2] = C + static_cast<size_t> (cs) * ch + gap;
      f.strides[2] = cs;
    }
    return f;
  }
  if (format == ColorFormat::Gray8) {
    const int s = w + 7;
    store->assign (static_cast<size_t> (s) * h, 0);
    for (int y = 0; y < h; y++)
      for (int x = 0; x < w; x++) {
        const uint8_t *p = &rgbx[(static_cast<size_t> (y) * w + x) * 4];
        (*store)[static_cast<size_t> (y) * s + x] = static_cast<uint8_t> ((p[0] + 2 * p[1] + p[2]) / 4);
      }
    f.planes[0] = store->data ();
    f.strides[0] = s;
    return f;
  }
  const int s = w * 4 + 8;
  store->assign (static_cast<size_t> (s) * h, 0);
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++) {
      const uint8_t *p = &rgbx[(static_cast<size_t> (y) * w + x) * 4];
      uint8_t *d = &(*store)[static_cast<size_t> (y) * s + 4 * x];
      const bool bgr = format == ColorFormat::Bgrx || format == ColorFormat::Bgra;
      d[0] = bgr ? p[2] : p[0];
      d[1] = p[1];
      d[2] = bgr ? p[0] : p[2];
      d[3] = 200;
    }
  f.planes[0] = store->data ();
  f.strides[0] = s;
  return f;
}

// The area grid of a predicted box, as search() computes it.
Grid area_grid (const Box &b, const Geometry &g) {
  Grid r = grid_for (b, g);
  r.ox -= g.centre_x () * r.sx;
  r.oy -= g.centre_y () * r.sy;
  return r;
}

struct Case {
  const char *name;
  Geometry g;
  int work_group;
  size_t local_bytes;
  int offsets_per_item = 1;
  int parts = 1;
  TemplateSearch::Config::Schedule schedule = TemplateSearch::Config::Schedule::Rows;
};

void run_case (const Case &c) {
  std::printf ("case %s: template %dx%d, area %dx%d, alt %d\n", c.name, c.g.template_w, c.g.template_h, c.g.search_w,
               c.g.search_h, c.g.alt_distance);
  TemplateSearch::Config cfg;
  cfg.geometry = c.g;
  cfg.work_group = c.work_group;
  cfg.local_bytes = c.local_bytes;
  cfg.offsets_per_item = c.offsets_per_item;
  cfg.parts = c.parts;
  cfg.schedule = c.schedule;
  std::string err;
  std::unique_ptr<TemplateSearch> ts;
  if (gpudetect::Error e_ = TemplateSearch::create (cfg, &ts))
    err = e_.message;
  CHECK_MSG (ts != nullptr, "%s", err.c_str ());
  if (!ts)
    return;
  const bool tiles = ts->schedule () == TemplateSearch::Config::Schedule::Tiles;
  // (the default is the tiles on every device)
  CHECK (tiles == (c.schedule != TemplateSearch::Config::Schedule::Rows));
  std::printf ("  on %s, %s schedule, work-group %d, %d offset rows per band, %d offsets per work-item, %d "
               "work-groups per template, template rows %d at a time\n", ts->device ().info.name.c_str (),
               tiles ? "tiles" : "rows", tiles ? ts->tile_work_group (6) : ts->work_group (), ts->band_rows (),
               ts->offsets_per_item (), ts->parts_for (6), ts->template_chunk_rows ());
  if (c.local_bytes == 12288 && tiles)
    CHECK_MSG (ts->template_chunk_rows () < c.g.template_h, "template rows %d at a time", ts->template_chunk_rows ());
  const std::vector<uint8_t> mask = default_mask (c.g.template_w, c.g.template_h);
  const int W = 237, H = 181;
  const std::vector<uint8_t> a = scene (W, H, 1);

  // Templates: boxes of several sizes (scales below and above 1), some
  // partly outside the frame.
  const std::vector<Box> boxes = {{40, 30, 32, 32}, {100.4, 60.7, 45, 30}, {-10, -5, 20, 28},
                                  {200, 150, 60, 50}, {10, 120, 12, 12},   {150, 20, 80, 90}};
  std::vector<int> slots;
  for (size_t i = 0; i < boxes.size (); i++)
    slots.push_back (static_cast<int> (i) * 2 + 1); // sparse slots, to grow the store

  const ColorFormat formats[] = {ColorFormat::Rgbx, ColorFormat::Bgrx, ColorFormat::Rgba,
                                 ColorFormat::Bgra, ColorFormat::Nv12, ColorFormat::I420, ColorFormat::Gray8};
  for (ColorFormat fmt : formats) {
    std::vector<uint8_t> store_a, store_b;
    const ColorFrame fa = as_format (a, W, H, fmt, &store_a);
    // the second frame: the scene moved by (5, -3) pixels
    std::vector<uint8_t> bsc (a.size ());
    for (int y = 0; y < H; y++)
      for (int x = 0; x < W; x++) {
        const int sx = std::clamp (x - 5, 0, W - 1), sy = std::clamp (y + 3, 0, H - 1);
        std::copy_n (&a[(static_cast<size_t> (sy) * W + sx) * 4], 4, &bsc[(static_cast<size_t> (y) * W + x) * 4]);
      }
    const ColorFrame fb = as_format (bsc, W, H, fmt, &store_b);

    Error e = ts->upload (fa);
    CHECK_MSG (!e, "%s", e.message.c_str ());
    std::vector<uint8_t> dev_rgb;
    e = ts->read_frame (&dev_rgb);
    CHECK_MSG (!e, "%s", e.message.c_str ());
    const std::vector<uint8_t> ref_a = reference::convert (fa);
    CHECK_MSG (dev_rgb == ref_a, "format %d: converted frame differs", static_cast<int> (fmt));
    e = ts->update (slots, boxes);
    CHECK_MSG (!e, "%s", e.message.c_str ());
    std::vector<std::vector<uint8_t>> ref_t;
    for (size_t i = 0; i < boxes.size (); i++) {
      ref_t.push_back (reference::extract (ref_a.data (), W, H, grid_for (boxes[i], c.g), c.g, mask));
      std::vector<uint8_t> t;
      e = ts->read_template (slots[i], &t);
      CHECK_MSG (!e && t == ref_t.back (), "format %d template %zu differs", static_cast<int> (fmt), i);
    }

    // Search in the same frame (D = 0 at the centre) and in the moved one.
    for (int which = 0; which < 2; which++) {
      if (which == 1) {
        e = ts->upload (fb);
        CHECK_MSG (!e, "%s", e.message.c_str ());
      }
      const std::vector<uint8_t> ref = which ? reference::convert (fb) : ref_a;
      std::vector<Match> got;
      e = ts->search (slots, boxes, &got);
      CHECK_MSG (!e, "%s", e.message.c_str ());
      if (e || got.size () != boxes.size ())
        continue;
      for (size_t i = 0; i < boxes.size (); i++) {
        std::vector<uint32_t> dref, ddev;
        Match mref;
        reference::search (ref.data (), W, H, ref_t[i].data (), area_grid (boxes[i], c.g), c.g, &dref, &mref);
        e = ts->read_distances (static_cast<int> (i), &ddev);
        CHECK_MSG (!e && ddev == dref, "format %d frame %d request %zu: distances differ", static_cast<int> (fmt),
                   which, i);
        CHECK_MSG (got[i].best == mref.best && got[i].best_x == mref.best_x && got[i].best_y == mref.best_y,
                   "best %u (%d,%d) vs reference %u (%d,%d)", got[i].best, got[i].best_x, got[i].best_y, mref.best,
                   mref.best_x, mref.best_y);
        CHECK_MSG (got[i].alt == mref.alt && got[i].alt_x == mref.alt_x && got[i].alt_y == mref.alt_y,
                   "alt %u (%d,%d) vs reference %u (%d,%d)", got[i].alt, got[i].alt_x, got[i].alt_y, mref.alt,
                   mref.alt_x, mref.alt_y);
        if (which == 0) {
          CHECK_MSG (got[i].best == 0 && got[i].best_x == c.g.centre_x () && got[i].best_y == c.g.centre_y (),
                     "unmoved template %zu at (%d,%d) D %u", i, got[i].best_x, got[i].best_y, got[i].best);
        }
      }
      // The 32x32 box at scale 1, fully inside the frame and the search:
      // found where it moved, confidently.
      if (which == 1 && c.g.search_w - c.g.template_w >= 12 && c.g.template_w == 32) {
        CHECK_MSG (std::abs (got[0].box.x - (boxes[0].x + 5)) < 1e-9 && std::abs (got[0].box.y - (boxes[0].y - 3)) < 1e-9,
                   "moved box at (%.2f, %.2f)", got[0].box.x, got[0].box.y);
        // exact in RGB; in NV12 / I420 an odd move shifts the chroma siting
        const bool yuv = fmt == ColorFormat::Nv12 || fmt == ColorFormat::I420;
        const bool grey = fmt == ColorFormat::Gray8;
        CHECK_MSG (yuv || got[0].best == 0, "best D %u", got[0].best);
        CHECK_MSG (got[0].confidence > (yuv ? 0.25 : grey ? 0.5 : 0.99), "confidence %.3f", got[0].confidence);
      }
    }
  }
}


// Small local memory: Config::local_bytes caps what the planner may use, as
// on a device of 32 or 48 KB (OpenCL's least for a full-profile device is
// 32 KB).  Every allowed template size by search radius of gputrack (8..64
// by 1..64) must be searchable there: templates of 64 rows leave no room for
// the whole template beside its area rows, so the tiles take its rows in
// chunks.  Every distance, the best and the alternative as the reference's.
struct Limited {
  int size, radius;
  size_t local_bytes;
  int offsets_per_item = 0, parts = -1, work_group = 0;
  TemplateSearch::Config::Schedule schedule = TemplateSearch::Config::Schedule::Default;
};

void run_limited (const Limited &c) {
  const Geometry g = Geometry::square (c.size, c.radius, std::max (2, c.size / 4));
  TemplateSearch::Config cfg;
  cfg.geometry = g;
  cfg.local_bytes = c.local_bytes;
  cfg.offsets_per_item = c.offsets_per_item;
  cfg.parts = c.parts;
  cfg.work_group = c.work_group;
  cfg.schedule = c.schedule;
  std::string err;
  std::unique_ptr<TemplateSearch> ts;
  if (gpudetect::Error e_ = TemplateSearch::create (cfg, &ts))
    err = e_.message;
  CHECK_MSG (ts != nullptr, "template %d radius %d in %zu bytes: %s", c.size, c.radius, c.local_bytes, err.c_str ());
  if (!ts)
    return;
  const bool tiles = ts->schedule () == TemplateSearch::Config::Schedule::Tiles;
  const int n = 3;
  std::printf ("template %dx%d +-%d in %zu bytes of local memory: %s, %d offsets per work-item, %d parts of %d "
               "work-items, template rows %d at a time\n", c.size, c.size, c.radius, c.local_bytes,
               tiles ? "tiles" : "rows", ts->offsets_per_item (), ts->parts_for (n), ts->tile_work_group (n),
               ts->template_chunk_rows ());
  CHECK_MSG (tiles, "template %d radius %d: the rows schedule", c.size, c.radius);
  // 64 rows of template do not fit beside their area rows in 48 KB or less
  if (c.size == 64)
    CHECK_MSG (ts->template_chunk_rows () < 64, "template rows %d at a time", ts->template_chunk_rows ());

  const int W = 320, H = 240;
  const std::vector<uint8_t> a = scene (W, H, 4);
  std::vector<uint8_t> bsc (a.size ()); // moved by (3, -2)
  for (int y = 0; y < H; y++)
    for (int x = 0; x < W; x++) {
      const int sx = std::clamp (x - 3, 0, W - 1), sy = std::clamp (y + 2, 0, H - 1);
      std::copy_n (&a[(static_cast<size_t> (sy) * W + sx) * 4], 4, &bsc[(static_cast<size_t> (y) * W + x) * 4]);
    }
  std::vector<uint8_t> store_a, store_b;
  const ColorFrame fa = as_format (a, W, H, ColorFormat::Rgbx, &store_a);
  const ColorFrame fb = as_format (bsc, W, H, ColorFormat::Rgbx, &store_b);
  // scales 1, above and below 1, one box partly outside the frame
  const std::vector<Box> boxes = {{60, 50, double (c.size), double (c.size)}, {150.3, 90.6, 90, 70}, {-8, 180, 40, 48}};
  const std::vector<int> slots = {0, 1, 2};
  Error e = ts->upload (fa);
  if (!e)
    e = ts->update (slots, boxes);
  if (!e)
    e = ts->upload (fb);
  std::vector<Match> got;
  if (!e)
    e = ts->search (slots, boxes, &got);
  CHECK_MSG (!e, "%s", e.message.c_str ());
  if (e || got.size () != boxes.size ())
    return;
  const std::vector<uint8_t> ref_a = reference::convert (fa), ref_b = reference::convert (fb);
  const std::vector<uint8_t> mask = default_mask (g.template_w, g.template_h);
  for (size_t i = 0; i < boxes.size (); i++) {
    const std::vector<uint8_t> t = reference::extract (ref_a.data (), W, H, grid_for (boxes[i], g), g, mask);
    std::vector<uint32_t> dref, ddev;
    Match mref;
    reference::search (ref_b.data (), W, H, t.data (), area_grid (boxes[i], g), g, &dref, &mref);
    e = ts->read_distances (static_cast<int> (i), &ddev);
    size_t differ = 0;
    for (size_t j = 0; j < std::min (ddev.size (), dref.size ()); j++)
      differ += ddev[j] != dref[j];
    CHECK_MSG (!e && ddev.size () == dref.size () && differ == 0, "template %d radius %d request %zu: %zu of %zu "
               "distances differ", c.size, c.radius, i, differ, dref.size ());
    CHECK_MSG (got[i].best == mref.best && got[i].best_x == mref.best_x && got[i].best_y == mref.best_y &&
                   got[i].alt == mref.alt && got[i].alt_x == mref.alt_x && got[i].alt_y == mref.alt_y,
               "template %d radius %d request %zu: best %u (%d,%d) alt %u (%d,%d), reference %u (%d,%d) %u (%d,%d)",
               c.size, c.radius, i, got[i].best, got[i].best_x, got[i].best_y, got[i].alt, got[i].alt_x, got[i].alt_y,
               mref.best, mref.best_x, mref.best_y, mref.alt, mref.alt_x, mref.alt_y);
  }
  // the box at scale 1, moved by (3, -2) within the search: found there
  if (c.radius >= 3)
    CHECK_MSG (got[0].best == 0 && std::abs (got[0].box.x - (boxes[0].x + 3)) < 1e-9 &&
                   std::abs (got[0].box.y - (boxes[0].y - 2)) < 1e-9,
               "moved box at (%.2f, %.2f), D %u", got[0].box.x, got[0].box.y, got[0].best);
}

// A clip for the tracker: two textured sprites moving over a textured
// background, detections on every 5th frame (at the sprites' boxes).
struct Clip {
  int w = 200, h = 150, frames = 24;
  std::vector<std::vector<uint8_t>> rgbx;            // each frame
  std::vector<std::vector<Detection>> dets;
};

Clip make_clip () {
  Clip c;
  const std::vector<uint8_t> bg = scene (c.w, c.h, 1), s1 = scene (40, 40, 2), s2 = scene (36, 30, 3);
  struct Sprite {
    const std::vector<uint8_t> *tex;
    int sw, sh;
    double x, y, vx, vy;
  } sprites[] = {{&s1, 40, 40, 20, 30, 3, 1}, {&s2, 36, 30, 140, 90, -2, -1.5}};
  for (int n = 0; n < c.frames; n++) {
    std::vector<uint8_t> f = bg;
    std::vector<Detection> d;
    for (const Sprite &s : sprites) {
      const int x0 = static_cast<int> (s.x + s.vx * n), y0 = static_cast<int> (s.y + s.vy * n);
      for (int y = 0; y < s.sh; y++)
        for (int x = 0; x < s.sw; x++)
          if (x0 + x >= 0 && x0 + x < c.w && y0 + y >= 0 && y0 + y < c.h)
            std::copy_n (&(*s.tex)[(static_cast<size_t> (y) * s.sw + x) * 4], 4,
                         &f[(static_cast<size_t> (y0 + y) * c.w + x0 + x) * 4]);
      if (n % 5 == 0) {
        Detection det;
        det.box = {double (x0), double (y0), double (s.sw), double (s.sh)};
        det.label = "object";
        det.confidence = 0.9;
        d.push_back (det);
      }
    }
    c.rgbx.push_back (std::move (f));
    c.dets.push_back (std::move (d));
  }
  return c;
}

using Objects = std::vector<std::vector<TrackedObject>>;

bool same (const Objects &a, const Objects &b, std::string *why) {
  if (a.size () != b.size ()) {
    *why = "frame counts differ";
    return false;
  }
  for (size_t n = 0; n < a.size (); n++) {
    if (a[n].size () != b[n].size ()) {
      *why = "frame " + std::to_string (n) + ": object counts differ";
      return false;
    }
    for (size_t i = 0; i < a[n].size (); i++) {
      const TrackedObject &p = a[n][i], &q = b[n][i];
      if (p.id != q.id || p.box.x != q.box.x || p.box.y != q.box.y || p.box.w != q.box.w || p.box.h != q.box.h ||
          p.confidence != q.confidence || p.detection != q.detection || p.since_detection != q.since_detection) {
        *why = "frame " + std::to_string (n) + " object " + std::to_string (i) + " differs";
        return false;
      }
    }
  }
  return true;
}

// The clip through a tracker with `frames` frames in flight: as many
// submitted as fit, the oldest collected when none does; each frame's
// memory overwritten once it is collected (the tracker must be done with it).
Objects run_tracker (const Clip &c, int frames, int upload_queue, bool sync, uint64_t *uploads) {
  TrackerConfig cfg;
  cfg.frames = frames;
  cfg.engine.geometry = Geometry::square (32, 16, 8);
  cfg.engine.upload_queue = upload_queue;
  std::string err;
  std::unique_ptr<Tracker> t;
  if (gpudetect::Error e_ = Tracker::create (cfg, &t))
    err = e_.message;
  CHECK_MSG (t != nullptr, "%s", err.c_str ());
  Objects out;
  if (!t)
    return out;
  std::vector<std::vector<uint8_t>> mem (c.frames);
  std::deque<std::pair<uint64_t, int>> flight;
  auto collect_oldest = [&] () {
    std::vector<TrackedObject> objs;
    Error e = t->collect (flight.front ().first, &objs);
    CHECK_MSG (!e, "%s", e.message.c_str ());
    std::fill (mem[flight.front ().second].begin (), mem[flight.front ().second].end (), 0x5a);
    flight.pop_front ();
    out.push_back (std::move (objs));
  };
  for (int n = 0; n < c.frames; n++) {
    mem[n] = c.rgbx[n];
    ColorFrame f;
    f.format = ColorFormat::Rgbx;
    f.width = c.w;
    f.height = c.h;
    f.planes[0] = mem[n].data ();
    f.strides[0] = c.w * 4;
    if (sync) {
      std::vector<TrackedObject> objs;
      Error e = t->process (&f, c.w, c.h, c.dets[n], &objs);
      CHECK_MSG (!e, "%s", e.message.c_str ());
      out.push_back (std::move (objs));
      continue;
    }
    if (t->in_flight () == static_cast<size_t> (t->frames ()))
      collect_oldest ();
    uint64_t ticket = 0;
    Error e = t->submit (&f, nullptr, c.w, c.h, c.dets[n], &ticket);
    CHECK_MSG (!e, "%s", e.message.c_str ());
    flight.emplace_back (ticket, n);
    CHECK (t->in_flight () <= static_cast<size_t> (frames));
    // frames come out in order: a later frame is never ready before an earlier one
    bool later_ready = false;
    for (auto it = flight.rbegin (); it != flight.rend (); ++it) {
      const bool r = t->ready (it->first);
      CHECK_MSG (!(later_ready && !r), "frame %d not ready while a later one is", it->second);
      later_ready = later_ready || r;
    }
  }
  while (!flight.empty ())
    collect_oldest ();
  CHECK_MSG (t->in_flight () == 0, "%zu frames still in flight", t->in_flight ());
  *uploads = t->uploads ();
  return out;
}

void test_in_flight () {
  const Clip c = make_clip ();
  uint64_t up_sync = 0;
  const Objects ref = run_tracker (c, 1, 0, true, &up_sync);
  CHECK_MSG (ref.size () == static_cast<size_t> (c.frames), "%zu frames", ref.size ());
  // the tracker works: both sprites reported on every frame, with the ids of frame 0
  int both = 0;
  for (const auto &objs : ref)
    both += objs.size () == 2 && objs[0].id == ref[0][0].id && objs[1].id == ref[0][1].id;
  CHECK_MSG (both == c.frames, "both sprites with their ids on %d of %d frames", both, c.frames);
  CHECK_MSG (up_sync == static_cast<uint64_t> (c.frames), "%llu uploads", (unsigned long long) up_sync);
  for (int frames : {1, 2, 8})
    for (int uq : {0, 1}) {
      uint64_t up = 0;
      const Objects got = run_tracker (c, frames, uq, false, &up);
      std::string why;
      CHECK_MSG (same (ref, got, &why), "%d in flight, upload queue %d: %s", frames, uq, why.c_str ());
      CHECK_MSG (up == up_sync, "%d in flight: %llu uploads", frames, (unsigned long long) up);
      std::printf ("tracker, %d frames in flight, upload queue %d: same objects as one at a time\n", frames, uq);
    }
  // Without tracks nor detections, frames are not uploaded.
  Clip empty = c;
  for (auto &d : empty.dets)
    d.clear ();
  uint64_t up = 0;
  const Objects none = run_tracker (empty, 2, 0, false, &up);
  CHECK_MSG (up == 0, "%llu uploads without anything to track", (unsigned long long) up);
}

} // namespace

int main (int argc, char **argv) {
  using S = TemplateSearch::Config::Schedule;
  const Case cases[] = {
      {"32x32 +-16, one band", Geometry::square (32, 16, 8), 0, 0},
      {"32x32 +-16, bands of 3 rows, work-group 64", Geometry::square (32, 16, 8), 64, 64 * 4 * 34},
      {"16x16 in 143x143 (the benchmark's)", {16, 16, 143, 143, 6}, 0, 0},
      {"24x16 in 40x61, work-group 32", {24, 16, 40, 61, 3}, 32, 0},
      {"8x8, no room for an alternative", {8, 8, 10, 10, 5}, 0, 0},
      // register tiling and split searches: the same distances, bit for bit
      {"32x32 +-16, 4 offsets per work-item", Geometry::square (32, 16, 8), 0, 0, 4, 1},
      {"32x32 +-16, bands of 2 rows, work-group 64, 3 offsets per work-item", Geometry::square (32, 16, 8), 64,
       66 * 4 * 33, 3, 1},
      {"16x16 in 143x143, 8 offsets per work-item", {16, 16, 143, 143, 6}, 0, 0, 8, 1},
      {"24x16 in 40x61, work-group 32, 2 offsets per work-item", {24, 16, 40, 61, 3}, 32, 0, 2, 1},
      {"8x8 in 10x10, 5 offsets per work-item", {8, 8, 10, 10, 5}, 0, 0, 5, 1},
  };
  // Tiles: area pixels and template pixels 4 at a time (K 4, 8) or one at a
  // time (odd K, templates of widths not a multiple of 4), one part or
  // several (the alternative from the parts' bests and the distances of the
  // parts near the best), work-groups that loop over their groups of offsets.
  const Case tile_cases[] = {
      {"tiles: 32x32 +-16, 4 offsets per work-item, one part", Geometry::square (32, 16, 8), 0, 0, 4, 1, S::Tiles},
      {"tiles: 32x32 +-16, 5 offsets per work-item, automatic parts", Geometry::square (32, 16, 8), 0, 0, 5, 0,
       S::Tiles},
      {"tiles: 32x32 +-16, 4 offsets per work-item, 33 parts of one row", Geometry::square (32, 16, 8), 0, 0, 4, 33,
       S::Tiles},
      {"tiles: 16x16 in 143x143, 8 offsets per work-item, 16 KB local memory (parts by the area's rows)",
       {16, 16, 143, 143, 6}, 0, 16384, 8, 0, S::Tiles},
      {"tiles: 24x16 in 40x61, work-group 32, 3 offsets per work-item, 7 parts", {24, 16, 40, 61, 3}, 32, 0, 3, 7,
       S::Tiles},
      {"tiles: 13x11 in 40x35, work-group 32, 4 offsets per work-item, 3 parts", {13, 11, 40, 35, 4}, 32, 0, 4, 3,
       S::Tiles},
      {"tiles: 8x8 in 10x10, 1 offset per work-item, more parts than rows", {8, 8, 10, 10, 5}, 0, 0, 1, 100, S::Tiles},
      // the default schedule where the whole template and its area rows do not fit: the template's rows in chunks
      {"default: 32x32 +-16 in 12 KB of local memory (tiles, the template's rows in chunks)",
       Geometry::square (32, 16, 8), 0, 12288, 0, -1, S::Default},
  };
  // gputrack's corners (template-size 8 and 64, search-radius 1 and 64) and some between, in 32 KB with the
  // device's default schedule and in 48 KB with the GPUs' (tiles of 4, automatic parts); work-groups of 32 (a
  // part's offsets in several passes, a pass's rows partly covered), fixed parts, odd K (one pixel at a time)
  const int geometries[][2] = {{8, 1}, {8, 64}, {64, 1}, {64, 64}, {64, 16}, {48, 32}, {32, 64}, {20, 40}};
  std::vector<Limited> limited;
  for (const auto &sr : geometries)
    limited.push_back ({sr[0], sr[1], 32768});
  for (const auto &sr : geometries)
    limited.push_back ({sr[0], sr[1], 49152, 4, 0, 0, S::Tiles});
  limited.push_back ({64, 64, 32768, 4, 1, 32, S::Tiles});
  limited.push_back ({64, 40, 32768, 3, 4, 0, S::Tiles});
  if (argc > 1 && std::string (argv[1]) == "limited") {
    for (const Limited &c : limited)
      run_limited (c);
    return finish ();
  }
  const bool only_tiles = argc > 1 && std::string (argv[1]) == "tiles";
  if (only_tiles) {
    for (const Case &c : tile_cases)
      run_case (c);
    return finish ();
  }
  for (const Case &c : cases)
    run_case (c);
  test_in_flight ();
  // Geometry that cannot be built.
  {
    TemplateSearch::Config cfg;
    cfg.geometry = Geometry::square (65, 4, 4);
    std::unique_ptr<TemplateSearch> ts;
    CHECK (TemplateSearch::create (cfg, &ts) && !ts);
  }
  return finish ();
}
