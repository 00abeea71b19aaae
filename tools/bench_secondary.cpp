// gpudetect-bench-secondary: the cost of a second model searched inside the
// objects of a first (inference-region=roi-list: eyes inside faces), beside
// the first's, on the same frames; and OpenCV's CascadeClassifier doing the
// same on the CPU (the second model on each object cut out), where built with
// OpenCV.
//
//   gpudetect-bench-secondary [--primary lbp-frontalface-improved] [--secondary haar-eye]
//                             [--margin 0.2] [--device SEL] [--frames 200] [--warmup 20]
//                             [--opencv-frames 20] [--tuning KEY=VALUE;...] FRAME.pgm...
//
// Both detectors share one OpenCL context, as two gpudetects of a pipeline
// do.  Per frame: the primary's device time (first command to last, OpenCL
// profiling events) and its objects; the secondary over those objects
// enlarged by --margin, all in one pass: its device time uploading the frame
// itself ("upload"), and on the frame the primary left on the device
// ("on frame": no upload, as the element does), with its host time from
// submit to its objects and each phase's device time; and again on the
// device frame with objects that move by a pixel every frame (a new plan,
// and a wait for the device, every frame, as in a live video).  Medians over
// --frames frames after --warmup.
#include "cl/cl.h"
#include "detector.h"

#ifdef HAVE_OPENCV
#include <opencv2/core/utility.hpp>
#include <opencv2/objdetect.hpp>
#endif

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

using namespace gpudetect;
using Clock = std::chrono::steady_clock;

namespace {

struct Image {
  std::string name;
  int width = 0, height = 0;
  std::vector<uint8_t> pixels;
};

bool read_pgm (const std::string &path, Image *img) {
  std::ifstream f (path, std::ios::binary);
  std::string magic;
  int maxval = 0;
  if (!(f >> magic >> img->width >> img->height >> maxval) || magic != "P5" || maxval != 255 || img->width <= 0 ||
      img->height <= 0)
    return false;
  f.get ();
  img->pixels.resize (static_cast<size_t> (img->width) * img->height);
  f.read (reinterpret_cast<char *> (img->pixels.data ()), img->pixels.size ());
  const size_t s = path.find_last_of ('/');
  img->name = s == std::string::npos ? path : path.substr (s + 1);
  return static_cast<bool> (f);
}

double median (std::vector<double> v) {
  if (v.empty ())
    return 0;
  std::sort (v.begin (), v.end ());
  return v.size () % 2 ? v[v.size () / 2] : 0.5 * (v[v.size () / 2 - 1] + v[v.size () / 2]);
}

double us_since (Clock::time_point t0) {
  return std::chrono::duration<double, std::micro> (Clock::now () - t0).count ();
}

int fail (const char *what, const Error &e) {
  std::fprintf (stderr, "%s: %s\n", what, e.message.c_str ());
  return 1;
}

} // namespace

int main (int argc, char **argv) {
  DetectorConfig p, s;
  p.model = "lbp-frontalface-improved";
  p.min_size = {24, 24};
  s.model = "haar-eye";
  p.profile = s.profile = true;
  double margin = 0.2;
  int frames = 200, warmup = 20, opencv_frames = 20;
  std::vector<std::string> paths;
  for (int i = 1; i < argc; i++) {
    const std::string a = argv[i];
    auto next = [&] () -> std::string {
      if (i + 1 >= argc) {
        std::fprintf (stderr, "%s needs a value\n", a.c_str ());
        std::exit (2);
      }
      return argv[++i];
    };
    if (a == "--primary") p.model = next ();
    else if (a == "--secondary") s.model = next ();
    else if (a == "--margin") margin = std::atof (next ().c_str ());
    else if (a == "--device") p.device = s.device = next ();
    else if (a == "--frames") frames = std::max (1, std::atoi (next ().c_str ()));
    else if (a == "--warmup") warmup = std::max (0, std::atoi (next ().c_str ()));
    else if (a == "--opencv-frames") opencv_frames = std::max (0, std::atoi (next ().c_str ()));
    else if (a == "--tuning") p.tuning = s.tuning = next ();
    else if (a == "-h" || a == "--help") {
      std::printf ("usage: %s [--primary MODEL] [--secondary MODEL] [--margin F] [--device SEL] [--frames N]\n"
                   "       [--warmup N] [--opencv-frames N] [--tuning KEY=VALUE;...] FRAME.pgm...\n", argv[0]);
      return 0;
    } else if (!a.empty () && a[0] == '-') {
      std::fprintf (stderr, "unknown option %s (--help)\n", a.c_str ());
      return 2;
    } else paths.push_back (a);
  }
  if (paths.empty ()) {
    std::fprintf (stderr, "no frames given (--help)\n");
    return 2;
  }
  cl::Device shared;
  if (Error e = cl::open_device (p.device, true, &shared))
    return fail ("device", e);
  p.share = s.share = &shared;
  p.share_frames = true; // the primary leaves each frame on the device for the secondary
  std::unique_ptr<Detector> primary, secondary;
  if (Error e = Detector::create (p, &primary))
    return fail ("primary", e);
  if (Error e = Detector::create (s, &secondary))
    return fail ("secondary", e);
  std::printf ("device %s\nprimary %s, secondary %s inside its objects (margin %.2f)\n",
               primary->device ().describe ().c_str (), primary->model ().path.c_str (),
               secondary->model ().path.c_str (), margin);
  std::printf ("%-16s %7s %9s %9s %9s %8s %9s %9s %9s %6s\n", "frame", "objects", "primary", "upload",
               "on_frame", "/primary", "host", "moving", "mov_host", "found");
  for (const std::string &path : paths) {
    Image img;
    if (!read_pgm (path, &img)) {
      std::fprintf (stderr, "cannot read %s\n", path.c_str ());
      return 1;
    }
    Frame f;
    f.data = img.pixels.data ();
    f.width = img.width;
    f.height = img.height;
    f.stride = img.width;
    std::vector<double> prim_dev, up_dev, sec_dev, sec_host, mov_dev, mov_host;
    std::vector<std::vector<double>> phases (secondary->phases ().size ());
    std::vector<double> launches;
    std::vector<Region> regions;
    size_t found = 0;
    for (int k = 0; k < warmup + frames; k++) {
      FrameResult r;
      int pt = -1;
      if (Error e = primary->submit (f, &pt))
        return fail ("primary", e);
      std::shared_ptr<const DeviceFrame> on_device = primary->device_frame (pt);
      if (Error e = primary->collect (pt, &r))
        return fail ("primary", e);
      regions.clear ();
      for (const Detection &d : r.objects) {
        const int mx = static_cast<int> (d.rect.width * margin), my = static_cast<int> (d.rect.height * margin);
        regions.push_back ({d.rect.x - mx, d.rect.y - my, d.rect.width + 2 * mx, d.rect.height + 2 * my});
      }
      // uploading the frame itself, then on the primary's device frame: the
      // same objects as the frame before, then objects that moved
      for (int run = 0; run < 3; run++) {
        std::vector<Region> rs = regions;
        if (run == 2)
          for (Region &q : rs)
            q.x += k % 2;
        const auto t0 = Clock::now ();
        int ticket = -1;
        FrameResult sr;
        if (Error e = run == 0 ? secondary->submit (f, rs, &ticket) : secondary->submit (on_device, rs, &ticket))
          return fail ("secondary", e);
        if (Error e = secondary->collect (ticket, &sr))
          return fail ("secondary", e);
        const double host = us_since (t0);
        if (k < warmup)
          continue;
        if (run == 0) {
          up_dev.push_back (sr.times.total_device);
        } else if (run == 1) {
          sec_dev.push_back (sr.times.total_device);
          sec_host.push_back (host);
          for (size_t i = 0; i < phases.size () && i < sr.times.phases.size (); i++)
            phases[i].push_back (sr.times.phases[i]);
          launches.push_back (sr.times.launches);
          found = sr.objects.size ();
        } else {
          mov_dev.push_back (sr.times.total_device);
          mov_host.push_back (host);
        }
      }
      if (k >= warmup)
        prim_dev.push_back (r.times.total_device);
    }
    const double pd = median (prim_dev), sd = median (sec_dev);
    std::printf ("%-16s %7zu %7.1fus %7.1fus %7.1fus %7.1f%% %7.1fus %7.1fus %7.1fus %6zu\n", img.name.c_str (),
                 regions.size (), pd, median (up_dev), sd, pd > 0 ? 100.0 * sd / pd : 0.0, median (sec_host),
                 median (mov_dev), median (mov_host), found);
    std::printf ("  on frame, by phase:");
    for (size_t i = 0; i < phases.size (); i++)
      std::printf (" %s %.1fus", secondary->phases ()[i].c_str (), median (phases[i]));
    std::printf ("; %.0f launches\n", median (launches));
#ifdef HAVE_OPENCV
    if (opencv_frames > 0) {
      cv::CascadeClassifier ocv;
      if (!ocv.load (secondary->model ().path)) {
        std::printf ("  OpenCV cannot read %s\n", secondary->model ().path.c_str ());
        continue;
      }
      const cv::Mat g (img.height, img.width, CV_8U, img.pixels.data ());
      std::vector<double> t;
      for (int k = 0; k < opencv_frames + 2; k++) {
        const auto t0 = Clock::now ();
        for (const Region &q : regions) {
          const cv::Rect rect = cv::Rect (q.x, q.y, q.width, q.height) & cv::Rect (0, 0, g.cols, g.rows);
          if (rect.area () == 0)
            continue;
          std::vector<cv::Rect> out;
          ocv.detectMultiScale (g (rect), out, s.scale_factor, s.min_neighbors);
        }
        if (k >= 2)
          t.push_back (us_since (t0));
      }
      std::printf ("  OpenCV CascadeClassifier, the same objects cut out, %d threads: %.1f us a frame\n",
                   cv::getNumThreads (), median (t));
    }
#endif
  }
  return 0;
}
