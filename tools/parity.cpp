// gpudetect-parity: compares the engine's answers with OpenCV's own
// CascadeClassifier (CPU) on the same grey pixels.
//
//   gpudetect-parity --model NAME [--scale-factor 1.1] [--min-neighbors 3]
//                    [--min-size 24] [--device SEL] [--write-gray DIR]
//                    [--min-f1 0.98] [--min-iou 0.9] [--min-jaccard 0] [--verbose] IMAGE...
//
// Each image is read as 8-bit grey (cv::IMREAD_GRAYSCALE); both detectors see
// that buffer.  Prints per-image and total figures; exits 1 when a threshold
// is not met, 2 on errors.  --write-gray stores the grey inputs as PNG.
#include "compare.h"
#include "detector.h"

#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>
#include <opencv2/objdetect.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

using namespace gpudetect;

namespace {

std::string basename (const std::string &p) {
  size_t s = p.find_last_of ('/');
  return s == std::string::npos ? p : p.substr (s + 1);
}

void usage (FILE *to, const char *self) {
  std::fprintf (to, "usage: %s --model NAME [--scale-factor F] [--min-neighbors N] [--min-size S] [--device SEL]\n"
                    "       [--write-gray DIR] [--min-f1 X] [--min-iou X] [--min-jaccard X] [--verbose] IMAGE...\n"
                    "Compares gpudetect's objects with OpenCV's CascadeClassifier on each image; exits 1 when a\n"
                    "threshold is not met, 2 on errors.\n", self);
}

} // namespace

int main (int argc, char **argv) {
  DetectorConfig cfg;
  cfg.scale_factor = 1.1;
  cfg.min_neighbors = 3;
  cfg.min_size = {24, 24};
  cfg.slots = 1;
  double min_f1 = 0, min_iou = 0, min_jaccard = 0;
  std::string gray_dir;
  bool verbose = false;
  std::vector<std::string> images;
  for (int i = 1; i < argc; i++) {
    std::string a = argv[i];
    auto next = [&] () -> std::string {
      if (i + 1 >= argc) {
        std::fprintf (stderr, "%s needs a value\n", a.c_str ());
        std::exit (2);
      }
      return argv[++i];
    };
    if (a == "--model") cfg.model = next ();
    else if (a == "--device") cfg.device = next ();
    else if (a == "--scale-factor") cfg.scale_factor = std::atof (next ().c_str ());
    else if (a == "--min-neighbors") cfg.min_neighbors = std::atoi (next ().c_str ());
    else if (a == "--min-size") { int s = std::atoi (next ().c_str ()); cfg.min_size = {s, s}; }
    else if (a == "--write-gray") gray_dir = next ();
    else if (a == "--verbose") verbose = true;
    else if (a == "--min-f1") min_f1 = std::atof (next ().c_str ());
    else if (a == "--min-iou") min_iou = std::atof (next ().c_str ());
    else if (a == "--min-jaccard") min_jaccard = std::atof (next ().c_str ());
    else if (a == "-h" || a == "--help") {
      usage (stdout, argv[0]);
      return 0;
    } else images.push_back (a);
  }
  if (images.empty ()) {
    std::fprintf (stderr, "no images given\n");
    usage (stderr, argv[0]);
    return 2;
  }
  std::string err;
  std::unique_ptr<Detector> det;
  if (gpudetect::Error e_ = Detector::create (cfg, &det))
    err = e_.message;
  if (!det) {
    std::fprintf (stderr, "gpudetect: %s\n", err.c_str ());
    return 2;
  }
  cv::CascadeClassifier ocv;
  if (!ocv.load (det->model ().path)) {
    std::fprintf (stderr, "OpenCV cannot load %s\n", det->model ().path.c_str ());
    return 2;
  }
  std::printf ("model %s\ndevice %s\n", det->model ().path.c_str (), det->device ().describe ().c_str ());
  compare::print_header ();
  compare::Totals total;
  for (const std::string &path : images) {
    cv::Mat g = cv::imread (path, cv::IMREAD_GRAYSCALE);
    if (g.empty ()) {
      std::fprintf (stderr, "cannot read %s\n", path.c_str ());
      return 2;
    }
    if (!gray_dir.empty ()) {
      std::string name = basename (path);
      name = name.substr (0, name.find_last_of ('.')) + ".png";
      cv::imwrite (gray_dir + "/" + name, g);
    }
    Frame f;
    f.data = g.data;
    f.width = g.cols;
    f.height = g.rows;
    f.stride = static_cast<int> (g.step);
    FrameResult res;
    if (gpudetect::Error e = det->detect (f, &res)) {
      std::fprintf (stderr, "gpudetect: %s\n", e.message.c_str ());
      return 2;
    }
    compare::image (ocv, g, cfg, res, basename (path), &total, verbose);
  }
  total.print ();
  const double f1 = total.f1 (), mean_iou = total.mean_iou (), jaccard = total.jaccard ();
  bool ok = f1 >= min_f1 && mean_iou >= min_iou && jaccard >= min_jaccard;
  if (!ok)
    std::printf ("FAIL: F1 %.4f (min %.4f), mean IoU %.4f (min %.4f), raw Jaccard %.4f (min %.4f)\n", f1, min_f1,
                 mean_iou, min_iou, jaccard, min_jaccard);
  return ok ? 0 : 1;
}
