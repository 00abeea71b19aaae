// Searching regions of a frame (Detector::submit with regions: a second
// detector inside the objects of a first, e.g. eyes in faces).  Every region
// is searched in one pass over the device, and must give exactly what the
// region cut out as a frame of its own gives:
// - against the engine itself, bit for bit: each region's objects (boxes,
//   neighbours, confidence, score) and raw windows equal those of a
//   whole-frame search of the cut-out region, moved into the frame; for
//   Haar (with trees, with tilted features) and LBP cascades, WaldBoost
//   (the project's and OpenCV xobjdetect's layout), on both schedules
//   (CPU: Haar with tilted features, xobjdetect; GPU: LBP, Haar with trees,
//   WaldBoost);
// - against OpenCV's CascadeClassifier on the cut-out regions, for the
//   cascades, with the whole-frame parity test's thresholds (tools/compare.h);
// and for the random-forest cascades, which blur each region apart, against
// the engine on the cut-out region.
// Two cases read the frame another detector on the same context uploaded
// (Detector::submit with a DeviceFrame), as a second gpudetect does behind a
// first.
// Regions: the faces OpenCV's LBP cascade finds in the image, enlarged by a
// fifth, and fixed ones (overlapping quadrants, one past the frame's edges,
// one smaller than the window, an empty one).  A model of a family that
// searches whole frames only is refused with a configuration error.
//
//   test-regions [--verbose] IMAGE.pgm...
#include "../../tools/compare.h"
#include "check.h"
#include "pgm_cv.h"

#include "cl/cl.h"
#include "detector.h"

#include <opencv2/imgproc.hpp>
#include <opencv2/objdetect.hpp>

#include <cstring>
#include <string>
#include <vector>

using namespace gpudetect;

namespace {

bool verbose = false;

Frame frame_of (const cv::Mat &g) {
  Frame f;
  f.data = g.data;
  f.width = g.cols;
  f.height = g.rows;
  f.stride = static_cast<int> (g.step);
  return f;
}

std::vector<Region> regions_of (const cv::Mat &g, cv::CascadeClassifier &faces) {
  std::vector<cv::Rect> found;
  faces.detectMultiScale (g, found, 1.1, 3, 0, cv::Size (24, 24));
  std::vector<Region> r;
  for (const cv::Rect &f : found)
    r.push_back ({f.x - f.width / 10, f.y - f.height / 10, f.width + f.width / 5, f.height + f.height / 5});
  const int w = g.cols, h = g.rows;
  r.push_back ({0, 0, w / 2, h / 2});
  r.push_back ({w / 3, h / 3, w / 2, h / 2});
  r.push_back ({w * 3 / 4, h * 3 / 4, w / 2, h / 2}); // past the right and bottom edges
  r.push_back ({5, 5, 12, 12});                       // smaller than every window
  r.push_back ({w / 2, h / 2, 0, 0});                 // empty
  return r;
}

// The part of r inside a w x h frame (as the detector clips regions).
Region clipped (const Region &r, int w, int h) {
  const int x0 = std::clamp (r.x, 0, w), y0 = std::clamp (r.y, 0, h);
  const int x1 = std::clamp (r.x + r.width, x0, w), y1 = std::clamp (r.y + r.height, y0, h);
  return {x0, y0, x1 - x0, y1 - y0};
}

bool same (const Detection &a, const Detection &b) {
  return a.rect == b.rect && a.neighbors == b.neighbors && a.confidence == b.confidence && a.score == b.score;
}

struct Case {
  std::string model;
  const char *tuning;
  bool opencv;       // a cascade OpenCV reads
  bool device_frame; // the frame another detector on the context uploaded (DeviceFrame), not uploaded again
};

void run_case (const Case &c, const std::vector<std::string> &images, cv::CascadeClassifier &faces,
               const cl::Device &shared) {
  DetectorConfig cfg;
  cfg.model = c.model;
  cfg.tuning = c.tuning;
  cfg.min_neighbors = 3;
  cfg.hit_capacity = 1 << 18;
  if (c.device_frame)
    cfg.share = &shared;
  std::unique_ptr<Detector> regions, whole, uploader;
  if (Error e = Detector::create (cfg, &regions)) {
    CHECK_MSG (false, "%s: %s", c.model.c_str (), e.message.c_str ());
    return;
  }
  CHECK (!Detector::create (cfg, &whole));
  if (c.device_frame) {
    // the first engine of a pipeline: it uploads each frame and leaves it on the device
    DetectorConfig u;
    u.model = "lbp-frontalface-improved";
    u.share = &shared;
    u.share_frames = true;
    CHECK (!Detector::create (u, &uploader));
  }
  CHECK (regions->searches_regions ());
  cv::CascadeClassifier ocv;
  if (c.opencv)
    CHECK (ocv.load (regions->model ().path));
  compare::Totals total;
  size_t objects = 0, windows = 0, searched = 0;
  for (const std::string &path : images) {
    cv::Mat g;
    CHECK (read_pgm (path, &g));
    const std::vector<Region> rs = regions_of (g, faces);
    FrameResult got;
    int ticket = -1, up = -1;
    Error submitted;
    if (uploader) {
      CHECK (!uploader->submit (frame_of (g), &up));
      std::shared_ptr<const DeviceFrame> on_device = uploader->device_frame (up);
      CHECK (on_device != nullptr);
      submitted = regions->submit (on_device, rs, &ticket);
    } else {
      submitted = regions->submit (frame_of (g), rs, &ticket);
    }
    if (submitted) {
      CHECK_MSG (false, "%s: %s", path.c_str (), submitted.message.c_str ());
      continue;
    }
    CHECK (!regions->collect (ticket, &got));
    if (uploader) {
      FrameResult first;
      CHECK (!uploader->collect (up, &first));
    }
    CHECK (!got.truncated && got.regions_left_out == 0);
    for (size_t ri = 0; ri < rs.size (); ri++) {
      const Region r = clipped (rs[ri], g.cols, g.rows);
      std::vector<Detection> mine;
      for (const Detection &d : got.objects)
        if (d.region == static_cast<int> (ri))
          mine.push_back (d);
      std::vector<RawHit> my_hits;
      for (const RawHit &h : got.hits)
        if (regions->geometry ()->levels[h.level].region == static_cast<int> (ri))
          my_hits.push_back (h);
      if (r.width == 0 || r.height == 0) {
        CHECK_MSG (mine.empty (), "%s: objects in an empty region", path.c_str ());
        continue;
      }
      // the region cut out, searched whole
      cv::Mat crop = g (cv::Rect (r.x, r.y, r.width, r.height)).clone ();
      FrameResult ref;
      CHECK (!whole->detect (frame_of (crop), &ref));
      searched++;
      bool equal = mine.size () == ref.objects.size ();
      for (size_t i = 0; equal && i < mine.size (); i++) {
        Detection d = ref.objects[i];
        d.rect.x += r.x;
        d.rect.y += r.y;
        equal = same (mine[i], d);
      }
      CHECK_MSG (equal, "%s %s, region %zu (%d,%d %dx%d): %zu objects, %zu searched alone", c.model.c_str (),
                 path.c_str (), ri, r.x, r.y, r.width, r.height, mine.size (), ref.objects.size ());
      // the same raw windows as the region alone
      CHECK_MSG (my_hits.size () == ref.hits.size (), "%s %s, region %zu: %zu raw windows, %zu searched alone",
                 c.model.c_str (), path.c_str (), ri, my_hits.size (), ref.hits.size ());
      size_t found = 0;
      for (const RawHit &h : ref.hits)
        for (const RawHit &m : my_hits)
          if (m.rect.x == h.rect.x + r.x && m.rect.y == h.rect.y + r.y && m.rect.width == h.rect.width &&
              m.rect.height == h.rect.height && m.score == h.score) {
            found++;
            break;
          }
      CHECK_MSG (found == ref.hits.size (), "%s %s, region %zu: %zu of %zu raw windows", c.model.c_str (),
                 path.c_str (), ri, found, ref.hits.size ());
      objects += mine.size ();
      windows += ref.hits.size ();
      if (c.opencv) {
        // OpenCV on the cut-out region: the region's objects and raw windows
        // in the region's pixels
        FrameResult in_region;
        for (Detection d : mine) {
          d.rect.x -= r.x;
          d.rect.y -= r.y;
          in_region.objects.push_back (d);
        }
        for (RawHit h : my_hits) {
          h.rect.x -= r.x;
          h.rect.y -= r.y;
          in_region.hits.push_back (h);
        }
        const std::string name = path.substr (path.rfind ('/') + 1) + "#" + std::to_string (ri);
        compare::image (ocv, crop, cfg, in_region, name, &total, verbose);
      }
    }
  }
  std::printf ("%s [%s]%s: %zu regions searched, %zu objects, %zu raw windows\n", c.model.c_str (), c.tuning,
               c.device_frame ? " on the device frame" : "", searched,
               objects, windows);
  CHECK (searched > images.size ());
  if (c.opencv) {
    total.print ();
    CHECK_MSG (total.f1 () >= 0.98 && total.mean_iou () >= 0.9 && total.jaccard () >= 0.99,
               "%s against OpenCV on the cut-out regions: F1 %.4f, mean IoU %.4f, raw Jaccard %.4f", c.model.c_str (),
               total.f1 (), total.mean_iou (), total.jaccard ());
  }
}

} // namespace

int main (int argc, char **argv) {
  std::vector<std::string> images;
  for (int i = 1; i < argc; i++) {
    if (std::strcmp (argv[i], "--verbose") == 0)
      verbose = true;
    else
      images.push_back (argv[i]);
  }
  if (images.empty ()) {
    std::fprintf (stderr, "usage: %s [--verbose] IMAGE.pgm...\n", argv[0]);
    return 2;
  }
  cv::CascadeClassifier faces;
  CHECK (faces.load ("/usr/share/opencv4/lbpcascades/lbpcascade_frontalface_improved.xml"));
  const Case cases[] = {
      {"haar-eye", "", true, true},                           // eyes in faces, on the frame a face detector uploaded
      {"lbp-frontalface-improved", "schedule=gpu", true, false},
      {"haar-frontalface-alt2", "schedule=gpu", true, true},  // trees
      {"haar-upperbody", "", true, false},                    // tilted features
      {"waldboost-frontalface", "schedule=gpu", false, false},
      {GPUDETECT_TEST_DATA "/xobjdetect-lfw-face.xml", "", false, false},
      {"forest-frontalface", "", false, false},                // the regions blurred apart
      {"forest-frontalface-accurate", "schedule=gpu", false, true},
  };
  cl::Device shared;
  if (Error e = cl::open_device ("", false, &shared)) {
    std::fprintf (stderr, "no OpenCL device: %s\n", e.message.c_str ());
    return 1;
  }
  for (const Case &c : cases)
    run_case (c, images, faces, shared);

  // a family that searches whole frames only
  {
    DetectorConfig cfg;
    cfg.model = GPUDETECT_TEST_DATA "/dpm-test.xml";
    std::unique_ptr<Detector> d;
    CHECK (!Detector::create (cfg, &d));
    if (d) {
      CHECK (!d->searches_regions ());
      std::vector<uint8_t> px (64 * 64, 128);
      Frame f;
      f.data = px.data ();
      f.width = f.height = f.stride = 64;
      int t = -1;
      const Error e = d->submit (f, {{0, 0, 32, 32}}, &t);
      CHECK (e.kind == Error::Kind::Config && e.message.find ("whole frames") != std::string::npos);
    }
  }
  return finish ();
}
