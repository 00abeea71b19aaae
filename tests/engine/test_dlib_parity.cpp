// The hogfilter family against dlib's frontal face detector itself (the
// oracle, a test dependency only), on every image:
// - raw windows: every (filter, box) dlib's scan_fhog_pyramid::detect reports
//   for each of the 5 filters at its bias must be one of the engine's raw
//   candidates, with the same box and a score within 1e-3 relative (or 1e-4
//   absolute); a window found by one side only must score within 1e-4 of the
//   threshold (dlib's separable evaluation and the direct correlation add
//   their floats in another order);
// - objects: dlib::get_frontal_face_detector () (img) against the engine's
//   objects (dlib's non-maximum suppression): F1 at IoU >= 0.5, mean IoU of
//   the matched pairs, boxes equal (dlib's clipped to the frame, as the engine
//   reports them), confidences within 1e-3 relative.
//
// Both at dlib's default threshold (adjust_threshold 0) and at a lower one
// (--threshold T, the element's `threshold`), where far more windows and
// objects are found.
//
//   test-dlib-parity [--min-f1 F] [--min-iou I] [--min-equal E] [--threshold T]... IMAGE.pgm...
#include "check.h"
#include "pgm.h"

#include "detector.h"
#include "families/hogfilter/family.h"

#include <dlib/image_processing/frontal_face_detector.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <map>
#include <tuple>

using namespace gpudetect;

namespace {

Rect from_dlib (const dlib::rectangle &r) {
  return {static_cast<int> (r.left ()), static_cast<int> (r.top ()), static_cast<int> (r.width ()),
          static_cast<int> (r.height ())};
}

bool close (double a, double b) { return std::fabs (a - b) <= std::max (1e-4, 1e-3 * std::fabs (b)); }

} // namespace

int main (int argc, char **argv) {
  double min_f1 = 0.98, min_iou = 0.9, min_equal = 0.95;
  std::vector<std::string> images;
  std::vector<double> thresholds = {0};
  for (int i = 1; i < argc; i++) {
    const std::string a = argv[i];
    if (a == "--min-f1" && i + 1 < argc)
      min_f1 = std::atof (argv[++i]);
    else if (a == "--min-iou" && i + 1 < argc)
      min_iou = std::atof (argv[++i]);
    else if (a == "--min-equal" && i + 1 < argc)
      min_equal = std::atof (argv[++i]);
    else if (a == "--threshold" && i + 1 < argc)
      thresholds.push_back (std::atof (argv[++i]));
    else
      images.push_back (a);
  }
  CHECK_MSG (!images.empty (), "no images given");

  DetectorConfig cfg;
  cfg.model = "dlib-frontalface";
  cfg.slots = 1;
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
  HogFilterModel model;
  {
    std::ifstream f (det->model ().path, std::ios::binary);
    std::string text ((std::istreambuf_iterator<char> (f)), std::istreambuf_iterator<char> ());
    CHECK (parse_hogfilter (text, &model).message.empty ());
  }
  dlib::frontal_face_detector dd = dlib::get_frontal_face_detector ();
  const int nf = static_cast<int> (dd.num_detectors ());
  CHECK (nf == static_cast<int> (model.filters.size ()));

  for (const double adjust : thresholds) {
  det->set_threshold (adjust);
  size_t raw_dlib = 0, raw_engine = 0, raw_matched = 0, raw_only_near = 0, raw_only_far = 0;
  double raw_max_rel = 0;
  size_t obj_dlib = 0, obj_engine = 0, obj_matched = 0, obj_equal = 0;
  double iou_sum = 0, obj_max_abs = 0;
  for (const std::string &path : images) {
    Grey g;
    if (!read_pgm (path, &g)) {
      CHECK_MSG (false, "cannot read %s", path.c_str ());
      continue;
    }
    dlib::array2d<unsigned char> img (g.rows, g.cols);
    for (int y = 0; y < g.rows; y++)
      std::memcpy (&img[y][0], &g.px[static_cast<size_t> (y) * g.cols], g.cols);
    // the engine
    FrameResult res;
    const std::string e = det->detect ({g.px.data (), g.cols, g.rows, g.cols, PixelFormat::Gray8}, &res).message;
    CHECK_MSG (e.empty (), "%s: %s", path.c_str (), e.c_str ());
    CHECK (!res.truncated);
    // raw windows: (filter, box) -> score
    using Key = std::tuple<int, int, int, int, int>;
    std::map<Key, double> eng, ref;
    for (const RawHit &h : res.hits) {
      const int f = h.x % nf;
      const Rect r = hogfilter_window_rect (model, h.level, h.x / nf, h.y);
      eng[{f, r.x, r.y, r.width, r.height}] = h.score;
    }
    dlib::scan_fhog_pyramid<dlib::pyramid_down<6>> scanner;
    scanner.copy_configuration (dd.get_scanner ());
    scanner.load (img);
    for (int f = 0; f < nf; f++) {
      std::vector<std::pair<double, dlib::rectangle>> dets;
      const double bias = dd.get_w (f) (scanner.get_num_dimensions ());
      scanner.detect (dd.get_w (f), dets, bias + adjust);
      for (const auto &d : dets) {
        const Rect r = from_dlib (d.second);
        ref[{f, r.x, r.y, r.width, r.height}] = d.first;
      }
    }
    raw_dlib += ref.size ();
    raw_engine += eng.size ();
    for (const auto &[k, s] : ref) {
      auto it = eng.find (k);
      const double thr = model.filters[std::get<0> (k)].bias + adjust;
      if (it == eng.end ()) {
        (std::fabs (s - thr) <= 1e-4 ? raw_only_near : raw_only_far)++;
        if (std::fabs (s - thr) > 1e-4)
          std::fprintf (stderr, "%s: dlib's window (filter %d, %d,%d %dx%d) score %.7g, not the engine's\n",
                        path.c_str (), std::get<0> (k), std::get<1> (k), std::get<2> (k), std::get<3> (k),
                        std::get<4> (k), s);
        continue;
      }
      raw_matched++;
      raw_max_rel = std::max (raw_max_rel, std::fabs (it->second - s) / std::max (std::fabs (s), 1e-9));
      CHECK_MSG (close (it->second, s), "%s: filter %d score %.7g, dlib's %.7g", path.c_str (), std::get<0> (k),
                 it->second, s);
    }
    for (const auto &[k, s] : eng)
      if (!ref.count (k)) {
        const double thr = model.filters[std::get<0> (k)].bias + adjust;
        (std::fabs (s - thr) <= 1e-4 ? raw_only_near : raw_only_far)++;
        if (std::fabs (s - thr) > 1e-4)
          std::fprintf (stderr, "%s: the engine's window (filter %d, %d,%d %dx%d) score %.7g, not dlib's\n",
                        path.c_str (), std::get<0> (k), std::get<1> (k), std::get<2> (k), std::get<3> (k),
                        std::get<4> (k), s);
      }
    // objects
    std::vector<std::pair<double, dlib::rectangle>> dobj;
    dd (img, dobj, adjust);
    obj_dlib += dobj.size ();
    obj_engine += res.objects.size ();
    std::vector<bool> used (res.objects.size (), false);
    for (const auto &d : dobj) {
      // the engine reports the part of dlib's box inside the frame
      const Rect r = clip_rect (from_dlib (d.second), g.cols, g.rows);
      int best = -1;
      double bi = 0.5;
      for (size_t j = 0; j < res.objects.size (); j++)
        if (!used[j] && iou (r, res.objects[j].rect) >= bi) {
          bi = iou (r, res.objects[j].rect);
          best = static_cast<int> (j);
        }
      if (best < 0) {
        std::fprintf (stderr, "%s: dlib's face %d,%d %dx%d (%.4f) not found\n", path.c_str (), r.x, r.y, r.width,
                      r.height, d.first);
        continue;
      }
      used[best] = true;
      obj_matched++;
      iou_sum += bi;
      const Detection &o = res.objects[best];
      if (o.rect == r)
        obj_equal++;
      obj_max_abs = std::max (obj_max_abs, std::fabs (o.score - d.first));
      CHECK_MSG (close (o.score, d.first), "%s: confidence %.7g, dlib's %.7g", path.c_str (), o.score, d.first);
    }
    for (size_t j = 0; j < res.objects.size (); j++)
      if (!used[j])
        std::fprintf (stderr, "%s: the engine's face %d,%d %dx%d (%.4f) not dlib's\n", path.c_str (),
                      res.objects[j].rect.x, res.objects[j].rect.y, res.objects[j].rect.width,
                      res.objects[j].rect.height, res.objects[j].score);
  }
  const double p = obj_engine ? static_cast<double> (obj_matched) / obj_engine : 1;
  const double r = obj_dlib ? static_cast<double> (obj_matched) / obj_dlib : 1;
  const double f1 = p + r > 0 ? 2 * p * r / (p + r) : 0;
  const double mean_iou = obj_matched ? iou_sum / obj_matched : 0;
  const double equal = obj_matched ? static_cast<double> (obj_equal) / obj_matched : 0;
  std::printf ("threshold %g: raw windows: dlib %zu, engine %zu, matched %zu (largest relative score difference %.3g), on one side "
               "only %zu within 1e-4 of the threshold, %zu farther\n",
               adjust, raw_dlib, raw_engine, raw_matched, raw_max_rel, raw_only_near, raw_only_far);
  std::printf ("objects: dlib %zu, engine %zu, matched %zu: F1 %.4f, mean IoU %.4f, boxes equal %zu (%.4f), largest "
               "absolute confidence difference %.3g\n",
               obj_dlib, obj_engine, obj_matched, f1, mean_iou, obj_equal, equal, obj_max_abs);
  CHECK (obj_dlib > 0);
  CHECK (raw_only_far == 0);
  CHECK_MSG (f1 >= min_f1, "F1 %.4f < %.4f", f1, min_f1);
  CHECK_MSG (mean_iou >= min_iou, "mean IoU %.4f < %.4f", mean_iou, min_iou);
  CHECK_MSG (equal >= min_equal, "boxes equal %.4f < %.4f", equal, min_equal);
  }
  return finish ();
}
