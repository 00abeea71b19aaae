// gpudetect-parity-xobjdetect: compares the engine's answers for a WaldBoost
// model of OpenCV xobjdetect (a WBDetector file) with OpenCV's own
// cv::xobjdetect::WBDetector::detect on the same grey pixels.
//
//   gpudetect-parity-xobjdetect --model FILE [--device SEL] [--min-f1 0.98] [--min-iou 0.9]
//                               [--min-jaccard 1] [--verbose] IMAGE...
//
// WBDetector::detect only returns grouped boxes.  Its raw windows are
// rebuilt here from OpenCV's parts as WaldBoost::detect and predict run them
// (xobjdetect 4.6: cv::resize INTER_LINEAR_EXACT at each float factor, cv::integral,
// the LBP feature pool, single-precision sums), and that rebuild is proved
// against OpenCV itself: grouped with cv::groupRectangles as WaldBoost::detect
// groups (3, 0.7), its windows must give exactly WBDetector::detect's boxes and
// confidences on every image.  Then gpudetect's raw windows (with the same
// clipping on both sides) and grouped boxes are compared with OpenCV's.  Exits
// 1 when a threshold is not met or the rebuild disagrees, 2 on errors.
#include "compare.h"
#include "detector.h"

#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>
#include <opencv2/objdetect.hpp>
#include <opencv2/xobjdetect.hpp>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

using namespace gpudetect;

namespace {

std::string basename (const std::string &p) {
  size_t s = p.find_last_of ('/');
  return s == std::string::npos ? p : p.substr (s + 1);
}

// A WBDetector file as WaldBoost::read reads it.
struct Stumps {
  std::vector<float> thresholds, alphas, cascade;
  std::vector<int> polarities, features;
  std::vector<cv::Rect> pool; // CvLBPEvaluator::generateFeatures, 24x24
};

bool read_stumps (const std::string &path, Stumps *s) {
  cv::FileStorage fs (path, cv::FileStorage::READ);
  if (!fs.isOpened ())
    return false;
  const cv::FileNode node = fs.getFirstTopLevelNode ();
  const int n = static_cast<int> (node["waldboost_params"]["weak_count"]);
  auto seq = [&] (const char *name, auto *out) {
    cv::FileNodeIterator it = node[name].begin ();
    out->resize (n);
    for (int i = 0; i < n; i++, ++it)
      *it >> (*out)[i];
  };
  seq ("thresholds", &s->thresholds);
  seq ("alphas", &s->alphas);
  seq ("polarities", &s->polarities);
  seq ("cascade_thresholds", &s->cascade);
  seq ("feature_indices", &s->features);
  for (int x = 0; x < 24; x++)
    for (int y = 0; y < 24; y++)
      for (int w = 1; w <= 8; w++)
        for (int h = 1; h <= 8; h++)
          if (x + 3 * w <= 24 && y + 3 * h <= 24)
            s->pool.push_back ({x, y, w, h});
  return n > 0;
}

// CvLBPEvaluator::Feature::calc on the integral `sum` at window (c, r).
int lbp (const cv::Mat &sum, int c, int r, const cv::Rect &f) {
  auto block = [&] (int bx, int by) {
    const int x = c + f.x + bx * f.width, y = r + f.y + by * f.height;
    return sum.at<int> (y, x) - sum.at<int> (y, x + f.width) - sum.at<int> (y + f.height, x) +
           sum.at<int> (y + f.height, x + f.width);
  };
  const int cv = block (1, 1);
  return (block (0, 0) >= cv ? 128 : 0) | (block (1, 0) >= cv ? 64 : 0) | (block (2, 0) >= cv ? 32 : 0) |
         (block (2, 1) >= cv ? 16 : 0) | (block (2, 2) >= cv ? 8 : 0) | (block (1, 2) >= cv ? 4 : 0) |
         (block (0, 2) >= cv ? 2 : 0) | (block (0, 1) >= cv ? 1 : 0);
}

// WaldBoost::detect without its grouping: the raw windows and their sums.
void raw_windows (const Stumps &s, const cv::Mat &img, std::vector<cv::Rect> *boxes, std::vector<double> *conf) {
  const int n = static_cast<int> (s.alphas.size ());
  for (float scale = 0.2f; scale < 1.2f; scale *= 1.1f) {
    cv::Mat resized, sum;
    cv::resize (img, resized, cv::Size (), scale, scale, cv::INTER_LINEAR_EXACT);
    cv::integral (resized, sum, CV_32S);
    const int side = static_cast<int> (24 / scale);
    for (int r = 0; r + 24 < resized.rows; r += 4)
      for (int c = 0; c + 24 < resized.cols; c += 4) {
        float res = 0;
        int i = 0;
        for (; i < n; i++) {
          const float val = static_cast<float> (lbp (sum, c, r, s.pool[s.features[i]]));
          const int label = s.polarities[i] * (val - s.thresholds[i]) > 0 ? +1 : -1;
          res += s.alphas[i] * label;
          if (res < s.cascade[i])
            break;
        }
        if (i == n && res > s.cascade[n - 1]) {
          boxes->push_back ({static_cast<int> (c / scale), static_cast<int> (r / scale), side, side});
          conf->push_back (res);
        }
      }
  }
}

cv::Rect clip (const cv::Rect &r, int w, int h) { return r & cv::Rect (0, 0, w, h); }

} // namespace

int main (int argc, char **argv) {
  DetectorConfig cfg;
  cfg.scale_factor = 1.1;
  cfg.min_neighbors = 3; // WaldBoost::detect's groupThreshold
  cfg.slots = 1;
  cfg.hit_capacity = 1 << 20;
  double min_f1 = 0, min_iou = 0, min_jaccard = 0;
  bool verbose = false;
  std::vector<std::string> images;
  for (int i = 1; i < argc; i++) {
    const std::string a = argv[i];
    auto next = [&] () -> std::string {
      if (i + 1 >= argc) {
        std::fprintf (stderr, "%s needs a value\n", a.c_str ());
        std::exit (2);
      }
      return argv[++i];
    };
    if (a == "--model") cfg.model = next ();
    else if (a == "--device") cfg.device = next ();
    else if (a == "--verbose") verbose = true;
    else if (a == "--min-f1") min_f1 = std::atof (next ().c_str ());
    else if (a == "--min-iou") min_iou = std::atof (next ().c_str ());
    else if (a == "--min-jaccard") min_jaccard = std::atof (next ().c_str ());
    else if (a == "-h" || a == "--help") {
      std::printf ("usage: %s --model FILE [--device SEL] [--min-f1 X] [--min-iou X] [--min-jaccard X] [--verbose] "
                   "IMAGE...\n", argv[0]);
      return 0;
    } else images.push_back (a);
  }
  if (images.empty ()) {
    std::fprintf (stderr, "no images given\n");
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
  const std::string path = det->model ().path;
  cv::Ptr<cv::xobjdetect::WBDetector> ocv = cv::xobjdetect::WBDetector::create ();
  Stumps stumps;
  {
    cv::FileStorage fs (path, cv::FileStorage::READ);
    if (!fs.isOpened () || !read_stumps (path, &stumps)) {
      std::fprintf (stderr, "OpenCV cannot read %s\n", path.c_str ());
      return 2;
    }
    ocv->read (fs.getFirstTopLevelNode ());
  }
  std::printf ("model %s (%s)\ndevice %s\n", path.c_str (), det->model ().description.c_str (),
               det->device ().describe ().c_str ());
  compare::print_header ();
  compare::Totals total;
  int rebuild_differs = 0;
  for (const std::string &p : images) {
    cv::Mat g = cv::imread (p, cv::IMREAD_GRAYSCALE);
    if (g.empty ()) {
      std::fprintf (stderr, "cannot read %s\n", p.c_str ());
      return 2;
    }
    std::vector<cv::Rect> grouped, raw;
    std::vector<double> confidences, raw_conf;
    ocv->detect (g, grouped, confidences);
    raw_windows (stumps, g, &raw, &raw_conf);
    // the rebuild against OpenCV: grouped as WaldBoost::detect groups
    std::vector<cv::Rect> regrouped = raw;
    std::vector<double> reconf = raw_conf;
    std::vector<int> levels (regrouped.size (), 0);
    cv::groupRectangles (regrouped, levels, reconf, 3, 0.7);
    if (regrouped != grouped || reconf != confidences) {
      rebuild_differs++;
      std::printf ("%s: the raw windows rebuilt here do not group into WBDetector::detect's boxes (%zu vs %zu)\n",
                   basename (p).c_str (), regrouped.size (), grouped.size ());
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
    std::vector<cv::Rect> raw_clipped;
    for (const cv::Rect &r : raw)
      raw_clipped.push_back (clip (r, g.cols, g.rows));
    const compare::Totals m = compare::add_image (res, grouped, raw_clipped, g.cols, g.rows, &total, verbose);
    std::printf ("%-28s %6zu %6zu %4d %4d %4d %7.3f %8zu %8zu %8.4f%s\n", basename (p).c_str (), res.objects.size (),
                 grouped.size (), m.tp, m.fp, m.fn, m.mean_iou (), res.hits.size (), raw.size (), m.jaccard (),
                 res.truncated ? " (hits truncated)" : "");
  }
  total.print ();
  const double f1 = total.f1 (), mean_iou = total.mean_iou (), jaccard = total.jaccard ();
  const bool ok = f1 >= min_f1 && mean_iou >= min_iou && jaccard >= min_jaccard && rebuild_differs == 0;
  if (!ok)
    std::printf ("FAIL: F1 %.4f (min %.4f), mean IoU %.4f (min %.4f), raw Jaccard %.4f (min %.4f), %d images where "
                 "the rebuilt raw windows disagree with WBDetector::detect\n",
                 f1, min_f1, mean_iou, min_iou, jaccard, min_jaccard, rebuild_differs);
  return ok ? 0 : 1;
}
