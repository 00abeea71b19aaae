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
#include "detector.h"

#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>
#include <opencv2/objdetect.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>
#include <string>
#include <tuple>
#include <vector>

using namespace gpudetect;

namespace {

struct Match {
  int tp = 0, fp = 0, fn = 0;
  double iou_sum = 0;
};

// Greedy one-to-one matching by IoU (>= 0.5).
Match match (const std::vector<Rect> &ours, const std::vector<Rect> &ref) {
  Match m;
  std::vector<bool> used (ref.size (), false);
  for (const Rect &a : ours) {
    int best = -1;
    double bi = 0.5;
    for (size_t j = 0; j < ref.size (); j++)
      if (!used[j] && iou (a, ref[j]) >= bi) {
        bi = iou (a, ref[j]);
        best = static_cast<int> (j);
      }
    if (best >= 0) {
      used[best] = true;
      m.tp++;
      m.iou_sum += bi;
    } else {
      m.fp++;
    }
  }
  m.fn = static_cast<int> (std::count (used.begin (), used.end (), false));
  return m;
}

std::vector<Rect> from_cv (const std::vector<cv::Rect> &v) {
  std::vector<Rect> r;
  for (const cv::Rect &c : v)
    r.push_back ({c.x, c.y, c.width, c.height});
  return r;
}

std::string basename (const std::string &p) {
  size_t s = p.find_last_of ('/');
  return s == std::string::npos ? p : p.substr (s + 1);
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
      std::printf ("usage: %s --model NAME [--scale-factor F] [--min-neighbors N] [--min-size S] [--device SEL]\n"
                   "       [--write-gray DIR] [--min-f1 X] [--min-iou X] [--min-jaccard X] IMAGE...\n", argv[0]);
      return 0;
    } else images.push_back (a);
  }
  if (images.empty ()) {
    std::fprintf (stderr, "no images given\n");
    return 2;
  }
  std::string err;
  std::unique_ptr<Detector> det = Detector::create (cfg, &err);
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
  std::printf ("%-28s %6s %6s %4s %4s %4s %7s %8s %8s %8s\n", "image", "ours", "ocv", "tp", "fp", "fn", "meanIoU",
               "raw_ours", "raw_ocv", "jaccard");
  Match total;
  long raw_inter = 0, raw_union = 0;
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
    if (std::string e = det->detect (f, &res); !e.empty ()) {
      std::fprintf (stderr, "gpudetect: %s\n", e.c_str ());
      return 2;
    }
    std::vector<cv::Rect> ocv_grouped, ocv_raw;
    cv::Size mins (cfg.min_size.width, cfg.min_size.height);
    ocv.detectMultiScale (g, ocv_grouped, cfg.scale_factor, cfg.min_neighbors, 0, mins);
    ocv.detectMultiScale (g, ocv_raw, cfg.scale_factor, 0, 0, mins);
    std::vector<Rect> ours;
    for (const Detection &d : res.objects)
      ours.push_back (d.rect);
    Match m = match (ours, from_cv (ocv_grouped));
    total.tp += m.tp, total.fp += m.fp, total.fn += m.fn, total.iou_sum += m.iou_sum;
    // Raw hits compared as (x, y, w, h): each level has its own window size.
    std::set<std::tuple<int, int, int, int>> a, b;
    for (const RawHit &h : res.hits) {
      Rect r = clip_rect (h.rect, g.cols, g.rows); // OpenCV reports raw windows clipped too
      a.insert ({r.x, r.y, r.width, r.height});
    }
    for (const cv::Rect &r : ocv_raw)
      b.insert ({r.x, r.y, r.width, r.height});
    int inter = 0;
    for (const auto &t : a)
      inter += b.count (t) ? 1 : 0;
    int uni = static_cast<int> (a.size () + b.size ()) - inter;
    if (verbose)
      for (const auto &t : a)
        if (!b.count (t) || !a.count (t))
          std::printf ("  only ours: %d %d %d %d\n", std::get<0> (t), std::get<1> (t), std::get<2> (t), std::get<3> (t));
    if (verbose)
      for (const auto &t : b)
        if (!a.count (t))
          std::printf ("  only OpenCV: %d %d %d %d\n", std::get<0> (t), std::get<1> (t), std::get<2> (t), std::get<3> (t));
    raw_inter += inter, raw_union += uni;
    std::printf ("%-28s %6zu %6zu %4d %4d %4d %7.3f %8zu %8zu %8.4f%s\n", basename (path).c_str (), ours.size (),
                 ocv_grouped.size (), m.tp, m.fp, m.fn, m.tp ? m.iou_sum / m.tp : 1.0, a.size (), b.size (),
                 uni ? static_cast<double> (inter) / uni : 1.0, res.truncated ? " (hits truncated)" : "");
  }
  double precision = total.tp + total.fp ? static_cast<double> (total.tp) / (total.tp + total.fp) : 1.0;
  double recall = total.tp + total.fn ? static_cast<double> (total.tp) / (total.tp + total.fn) : 1.0;
  double f1 = precision + recall > 0 ? 2 * precision * recall / (precision + recall) : 0.0;
  double mean_iou = total.tp ? total.iou_sum / total.tp : 1.0;
  double jaccard = raw_union ? static_cast<double> (raw_inter) / raw_union : 1.0;
  std::printf ("TOTAL images=%zu tp=%d fp=%d fn=%d precision=%.4f recall=%.4f F1=%.4f meanIoU=%.4f "
               "raw_jaccard=%.4f\n",
               images.size (), total.tp, total.fp, total.fn, precision, recall, f1, mean_iou, jaccard);
  bool ok = f1 >= min_f1 && mean_iou >= min_iou && jaccard >= min_jaccard;
  if (!ok)
    std::printf ("FAIL: F1 %.4f (min %.4f), mean IoU %.4f (min %.4f), raw Jaccard %.4f (min %.4f)\n", f1, min_f1,
                 mean_iou, min_iou, jaccard, min_jaccard);
  return ok ? 0 : 1;
}
