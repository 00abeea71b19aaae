// The hogfilter family with hog-people (OpenCV's people detector converted,
// features hog-dt) against OpenCV's HOGDescriptor itself (the oracle, a test
// dependency only) on the same grey images:
// - raw windows: for every level of OpenCV's pyramid, HOGDescriptor::detect
//   on the level image (cv::resize, INTER_LINEAR_EXACT) with the same
//   hitThreshold gives positions and weights; the engine's windows of that
//   level must be the same positions (a window only one side reports must
//   score within 1e-4 of the threshold), their scores within 1e-3 relative;
// - objects: HOGDescriptor::detectMultiScale (scale 1.05, groupThreshold 2,
//   the overload with foundWeights) against the engine's, matched one to one
//   at IoU >= 0.5: F1 and mean IoU of the matches at least --min-f1 and
//   --min-iou, per image and in total; matched objects' scores (the largest
//   weight of the group) within 1e-3 relative.  detectMultiScale runs on one
//   thread: on several, its levels append their rectangles and their weights
//   under two separate locks, so another level's rectangles can come between
//   them and a group's weights then belong to other windows (a score 7x off
//   in about one run in three on 2 cores).
// At each --threshold given (and 0, detectMultiScale's default).
//
//   test-hog-people-parity [--min-f1 X] [--min-iou X] [--threshold T]... IMAGE.pgm...
#include "check.h"
#include "pgm_cv.h"

#include "detector.h"
#include "families/hogfilter/model.h"

#include <opencv2/core/utility.hpp>
#include <opencv2/imgproc.hpp>
#include <opencv2/objdetect.hpp>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>
#include <tuple>

using namespace gpudetect;

namespace {

// |a - b| relative to b (to 1e-3 for scores nearer 0: the engine's raw score
// is a float sum near -rho, 6.67, with steps of 5e-7)
double rel (double a, double b) { return std::fabs (a - b) / std::max (std::fabs (b), 1e-3); }

struct Tally {
  size_t tp = 0, fp = 0, fn = 0;
  double iou_sum = 0;
  double f1 () const { return tp + fp + fn ? 2.0 * tp / (2.0 * tp + fp + fn) : 1.0; }
  double mean_iou () const { return tp ? iou_sum / tp : 1.0; }
};

} // namespace

int main (int argc, char **argv) {
  double min_f1 = 0.98, min_iou = 0.9;
  std::vector<std::string> images;
  std::vector<double> thresholds = {0};
  for (int i = 1; i < argc; i++) {
    const std::string a = argv[i];
    if (a == "--min-f1" && i + 1 < argc)
      min_f1 = std::atof (argv[++i]);
    else if (a == "--min-iou" && i + 1 < argc)
      min_iou = std::atof (argv[++i]);
    else if (a == "--threshold" && i + 1 < argc)
      thresholds.push_back (std::atof (argv[++i]));
    else
      images.push_back (a);
  }
  CHECK_MSG (!images.empty (), "no images given");

  DetectorConfig cfg;
  cfg.model = "hog-people";
  cfg.slots = 1;
  cfg.hit_capacity = 1 << 20;
  std::string err;
  std::unique_ptr<Detector> det;
  if (gpudetect::Error e_ = Detector::create (cfg, &det))
    err = e_.message;
  if (!det) {
    std::fprintf (stderr, "cannot make the detector: %s\n", err.c_str ());
    return 1;
  }
  std::printf ("device: %s\nmodel: %s (%s)\n", det->device ().describe ().c_str (), det->model ().path.c_str (),
               det->model ().description.c_str ());
  CHECK (det->model ().label == "person");
  cv::HOGDescriptor hog;
  hog.setSVMDetector (cv::HOGDescriptor::getDefaultPeopleDetector ());

  for (const double t : thresholds) {
    det->set_threshold (t);
    size_t raw_ocv = 0, raw_eng = 0, raw_matched = 0, raw_near = 0, raw_far = 0;
    double raw_max_rel = 0, obj_max_rel = 0;
    Tally total;
    for (const std::string &path : images) {
      cv::Mat img;
      if (!read_pgm (path, &img)) {
        CHECK_MSG (false, "cannot read %s", path.c_str ());
        continue;
      }
      FrameResult res;
      const std::string e = det->detect ({img.data, img.cols, img.rows, static_cast<int> (img.step),
                                          PixelFormat::Gray8},
                                         &res).message;
      CHECK_MSG (e.empty (), "%s: %s", path.c_str (), e.c_str ());
      CHECK (!res.truncated && res.lost == 0);
      // raw windows: (level, x, y) -> score
      using Key = std::tuple<int, int, int>;
      std::map<Key, double> eng, ref;
      const double bias = -static_cast<double> (hog.svmDetector.back ());
      for (const RawHit &h : res.hits)
        eng[{h.level, h.x, h.y}] = static_cast<double> (h.score) - bias;
      double scale = 1;
      for (int level = 0; level < hog.nlevels; level++, scale *= 1.05) {
        const cv::Size sz (cvRound (img.cols / scale), cvRound (img.rows / scale));
        if (sz.width < hog.winSize.width || sz.height < hog.winSize.height)
          break;
        cv::Mat lvl;
        if (sz == img.size ())
          lvl = img;
        else
          cv::resize (img, lvl, sz, 0, 0, cv::INTER_LINEAR_EXACT);
        std::vector<cv::Point> hits;
        std::vector<double> weights;
        hog.detect (lvl, hits, weights, t, cv::Size (8, 8), cv::Size ());
        for (size_t k = 0; k < hits.size (); k++)
          ref[{level, hits[k].x, hits[k].y}] = weights[k];
      }
      raw_ocv += ref.size ();
      raw_eng += eng.size ();
      for (const auto &[k, s] : ref) {
        auto it = eng.find (k);
        if (it == eng.end ()) {
          (std::fabs (s - t) <= 1e-4 ? raw_near : raw_far)++;
          CHECK_MSG (std::fabs (s - t) <= 1e-4, "%s: OpenCV's window (level %d, %d, %d) score %.9g, not the engine's",
                     path.c_str (), std::get<0> (k), std::get<1> (k), std::get<2> (k), s);
          continue;
        }
        raw_matched++;
        raw_max_rel = std::max (raw_max_rel, rel (it->second, s));
        CHECK_MSG (rel (it->second, s) <= 1e-3, "%s: window (level %d, %d, %d) score %.9g, OpenCV's %.9g",
                   path.c_str (), std::get<0> (k), std::get<1> (k), std::get<2> (k), it->second, s);
      }
      for (const auto &[k, s] : eng)
        if (!ref.count (k)) {
          (std::fabs (s - t) <= 1e-4 ? raw_near : raw_far)++;
          CHECK_MSG (std::fabs (s - t) <= 1e-4, "%s: the engine's window (level %d, %d, %d) score %.9g, not OpenCV's",
                     path.c_str (), std::get<0> (k), std::get<1> (k), std::get<2> (k), s);
        }
      // objects
      std::vector<cv::Rect> found;
      std::vector<double> fw;
      const int threads = cv::getNumThreads ();
      cv::setNumThreads (1);
      hog.detectMultiScale (img, found, fw, t, cv::Size (), cv::Size (), 1.05, 2.0);
      cv::setNumThreads (threads);
      Tally m;
      std::vector<bool> used (res.objects.size (), false);
      for (size_t i = 0; i < found.size (); i++) {
        const Rect r{found[i].x, found[i].y, found[i].width, found[i].height};
        int best = -1;
        double bi = 0.5;
        for (size_t j = 0; j < res.objects.size (); j++)
          if (!used[j] && iou (r, res.objects[j].rect) >= bi) {
            bi = iou (r, res.objects[j].rect);
            best = static_cast<int> (j);
          }
        if (best < 0) {
          m.fn++;
          std::printf ("  %s: OpenCV's %d,%d %dx%d (%.4f) not found\n", path.c_str (), r.x, r.y, r.width, r.height,
                       fw[i]);
          continue;
        }
        used[best] = true;
        m.tp++;
        m.iou_sum += bi;
        const double s = res.objects[best].score;
        obj_max_rel = std::max (obj_max_rel, rel (s, fw[i]));
        CHECK_MSG (rel (s, fw[i]) <= 1e-3, "%s: object %d,%d score %.7g, OpenCV's %.7g", path.c_str (), r.x, r.y, s,
                   fw[i]);
      }
      for (size_t j = 0; j < res.objects.size (); j++)
        if (!used[j]) {
          m.fp++;
          const Rect &r = res.objects[j].rect;
          std::printf ("  %s: the engine's %d,%d %dx%d (%.4f) not OpenCV's\n", path.c_str (), r.x, r.y, r.width,
                       r.height, res.objects[j].score);
        }
      const std::string name = path.substr (path.find_last_of ('/') + 1);
      std::printf ("threshold %g %-24s raw %4zu/%4zu objects %2zu/%2zu tp %zu fp %zu fn %zu F1 %.3f meanIoU %.4f\n", t,
                   name.c_str (), eng.size (), ref.size (), res.objects.size (), found.size (), m.tp, m.fp, m.fn,
                   m.f1 (), m.mean_iou ());
      CHECK_MSG (m.f1 () >= min_f1 && m.mean_iou () >= min_iou, "%s: F1 %.3f, mean IoU %.4f", name.c_str (), m.f1 (),
                 m.mean_iou ());
      total.tp += m.tp, total.fp += m.fp, total.fn += m.fn, total.iou_sum += m.iou_sum;
    }
    std::printf ("TOTAL threshold %g: raw windows engine %zu, OpenCV %zu, matched %zu (largest relative score "
                 "difference %.2g), one side only %zu within 1e-4 of the threshold, %zu beyond; objects tp %zu fp %zu "
                 "fn %zu F1 %.4f meanIoU %.4f (largest relative score difference %.2g)\n",
                 t, raw_eng, raw_ocv, raw_matched, raw_max_rel, raw_near, raw_far, total.tp, total.fp, total.fn,
                 total.f1 (), total.mean_iou (), obj_max_rel);
    CHECK (raw_ocv > 0 && total.tp > 0); // the images hold windows and people to compare
    CHECK_MSG (total.f1 () >= min_f1 && total.mean_iou () >= min_iou, "total F1 %.4f, mean IoU %.4f", total.f1 (),
               total.mean_iou ());
  }
  return finish ();
}
