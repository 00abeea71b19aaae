// Comparison of gpudetect's answers with OpenCV's on one image, shared by
// gpudetect-parity and gpudetect-bench --parity.
#pragma once

#include "detector.h"

#include <opencv2/core.hpp>
#include <opencv2/objdetect.hpp>

#include <algorithm>
#include <cstdio>
#include <set>
#include <string>
#include <tuple>
#include <vector>

namespace gpudetect::compare {

struct Totals {
  int tp = 0, fp = 0, fn = 0;
  double iou_sum = 0;
  long raw_inter = 0, raw_union = 0;
  int images = 0;

  double precision () const { return tp + fp ? static_cast<double> (tp) / (tp + fp) : 1.0; }
  double recall () const { return tp + fn ? static_cast<double> (tp) / (tp + fn) : 1.0; }
  double f1 () const {
    const double p = precision (), r = recall ();
    return p + r > 0 ? 2 * p * r / (p + r) : 0.0;
  }
  double mean_iou () const { return tp ? iou_sum / tp : 1.0; }
  double jaccard () const { return raw_union ? static_cast<double> (raw_inter) / raw_union : 1.0; }
  void print () const {
    std::printf ("TOTAL images=%d tp=%d fp=%d fn=%d precision=%.4f recall=%.4f F1=%.4f meanIoU=%.4f "
                 "raw_jaccard=%.4f\n",
                 images, tp, fp, fn, precision (), recall (), f1 (), mean_iou (), jaccard ());
  }
};

// One image: grouped boxes matched greedily one to one at IoU >= 0.5; raw
// windows (before grouping) compared as clipped (x, y, w, h) sets, since each
// level has its own window size.  Adds to `t`; returns this image's figures.
inline Totals add_image (const FrameResult &ours, const std::vector<cv::Rect> &ocv_grouped,
                         const std::vector<cv::Rect> &ocv_raw, int width, int height, Totals *t,
                         bool verbose = false) {
  Totals m;
  m.images = 1;
  std::vector<bool> used (ocv_grouped.size (), false);
  for (const Detection &d : ours.objects) {
    int best = -1;
    double bi = 0.5;
    for (size_t j = 0; j < ocv_grouped.size (); j++) {
      const cv::Rect &c = ocv_grouped[j];
      const double v = iou (d.rect, {c.x, c.y, c.width, c.height});
      if (!used[j] && v >= bi) {
        bi = v;
        best = static_cast<int> (j);
      }
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
  std::set<std::tuple<int, int, int, int>> a, b;
  for (const RawHit &h : ours.hits) {
    Rect r = clip_rect (h.rect, width, height); // OpenCV reports raw windows clipped too
    a.insert ({r.x, r.y, r.width, r.height});
  }
  for (const cv::Rect &r : ocv_raw)
    b.insert ({r.x, r.y, r.width, r.height});
  for (const auto &k : a)
    m.raw_inter += b.count (k) ? 1 : 0;
  m.raw_union = static_cast<long> (a.size () + b.size ()) - m.raw_inter;
  if (verbose) {
    for (const auto &k : a)
      if (!b.count (k))
        std::printf ("  only ours: %d %d %d %d\n", std::get<0> (k), std::get<1> (k), std::get<2> (k), std::get<3> (k));
    for (const auto &k : b)
      if (!a.count (k))
        std::printf ("  only OpenCV: %d %d %d %d\n", std::get<0> (k), std::get<1> (k), std::get<2> (k),
                     std::get<3> (k));
  }
  t->tp += m.tp, t->fp += m.fp, t->fn += m.fn, t->iou_sum += m.iou_sum;
  t->raw_inter += m.raw_inter, t->raw_union += m.raw_union, t->images++;
  return m;
}

inline void print_header () {
  std::printf ("%-28s %6s %6s %4s %4s %4s %7s %8s %8s %8s\n", "image", "ours", "ocv", "tp", "fp", "fn", "meanIoU",
               "raw_ours", "raw_ocv", "jaccard");
}

// Runs OpenCV on the same grey pixels and parameters (grouped, and raw with
// min_neighbors 0), compares with `ours`, adds to `t` and prints the image's row.
inline void image (cv::CascadeClassifier &ocv, const cv::Mat &grey, const DetectorConfig &cfg, const FrameResult &ours,
                   const std::string &name, Totals *t, bool verbose = false) {
  std::vector<cv::Rect> grouped, raw;
  const cv::Size mins (cfg.min_size.width, cfg.min_size.height);
  ocv.detectMultiScale (grey, grouped, cfg.scale_factor, cfg.min_neighbors, 0, mins);
  ocv.detectMultiScale (grey, raw, cfg.scale_factor, 0, 0, mins);
  const Totals m = add_image (ours, grouped, raw, grey.cols, grey.rows, t, verbose);
  std::printf ("%-28s %6zu %6zu %4d %4d %4d %7.3f %8zu %8zu %8.4f%s\n", name.c_str (), ours.objects.size (),
               grouped.size (), m.tp, m.fp, m.fn, m.mean_iou (), ours.hits.size (), raw.size (), m.jaccard (),
               ours.truncated ? " (hits truncated)" : "");
}

} // namespace gpudetect::compare
