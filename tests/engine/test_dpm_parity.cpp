// The deformable part model family against OpenCV's cv::dpm itself (the
// oracle, a test dependency only), on every image (grey, as both are given
// it: cv::dpm makes it BGR with three equal channels):
// - features: the host reference (families/dpm/dpm.h) against cv::dpm's own
//   Feature::computeHOG32D (linked from Debian's libopencv_dpm.a: the
//   function is internal to the module) on cv::resize's images of every
//   level, bit for bit; the device's (single precision) against the same,
//   where the device has double precision its features (computed in double,
//   stored as float) must be cv::dpm's rounded to float, every one; in single
//   precision (devices without double) the largest difference is bounded by
//   --feature-tol and at most 1 in 1000 values may be off by more than 1e-5
//   (orientations snapped on the other side of a tie, which single precision
//   cannot avoid: pixels of flat regions resample to values a rounding away
//   from equal, so that a vertical gradient leans one way or the other);
// - windows: every window the host reference scores at least the threshold
//   (the full model, double precision) must be one of the engine's raw
//   candidates with a score within 1e-3 relative (or 1e-3 absolute under 1),
//   and the reverse; a window found by one side only must score within 1e-3
//   of the threshold;
// - objects (after cv::dpm's non-maximum suppression): the engine's against
//   the reference's, equal boxes and scores within the same tolerance; and
//   against cv::dpm::DPMDetector::detect's: with a model whose pruning
//   thresholds prune nothing (the made test model) cv::dpm's cascade reports
//   the full model's windows, so every object must be equal (--exact); with
//   inriaperson.xml the cascade drops a few windows the full model keeps
//   (docs/dpm.md): objects on one side only are listed, and the share of
//   cv::dpm's objects the engine reports with the same box and score must
//   reach --min-equal.
//
//   test-dpm-parity --model PATH [--exact] [--min-equal E] [--feature-tol T]
//                   [--video FILE --frames I,J,...] IMAGE...
#include "check.h"

#include "detector.h"
#include "families/dpm/family.h"

#include <opencv2/dpm.hpp>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>
#include <opencv2/videoio.hpp>

#include <cmath>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <tuple>

namespace cv::dpm {
// cv::dpm's feature extraction (modules/dpm/src/dpm_feature.hpp): a static
// member of an internal class, in libopencv_dpm.a.
class Feature {
public:
  static void computeHOG32D (const cv::Mat &imageM, cv::Mat &featM, const int sbin, const int pad_x, const int pad_y);
};
} // namespace cv::dpm

using namespace gpudetect;

namespace {

bool close (double a, double b) { return std::fabs (a - b) <= 1e-3 * std::max (std::fabs (b), 1.0); }

struct Obj {
  Rect rect;
  double score;
};

Rect box_rect (const DpmBox &b) {
  const int x1 = static_cast<int> (b.x1), y1 = static_cast<int> (b.y1);
  return {x1, y1, static_cast<int> (b.x2) - x1 + 1, static_cast<int> (b.y2) - y1 + 1};
}

std::string str (const Rect &r) {
  return std::to_string (r.x) + "," + std::to_string (r.y) + " " + std::to_string (r.width) + "x" +
         std::to_string (r.height);
}

} // namespace

int main (int argc, char **argv) {
  std::string model_path, video;
  std::vector<int> frames;
  bool exact = false;
  double min_equal = 0.9, feature_tol = 0.25;
  std::vector<std::string> images;
  for (int i = 1; i < argc; i++) {
    const std::string a = argv[i];
    if (a == "--model" && i + 1 < argc)
      model_path = argv[++i];
    else if (a == "--exact")
      exact = true;
    else if (a == "--min-equal" && i + 1 < argc)
      min_equal = std::atof (argv[++i]);
    else if (a == "--feature-tol" && i + 1 < argc)
      feature_tol = std::atof (argv[++i]);
    else if (a == "--video" && i + 1 < argc)
      video = argv[++i];
    else if (a == "--frames" && i + 1 < argc) {
      std::stringstream s (argv[++i]);
      for (std::string t; std::getline (s, t, ',');)
        frames.push_back (std::atoi (t.c_str ()));
    } else
      images.push_back (a);
  }
  CHECK_MSG (!model_path.empty () && (!images.empty () || !frames.empty ()), "usage: see the source");
  if (model_path.empty ())
    return finish ();

  DetectorConfig cfg;
  cfg.model = model_path;
  cfg.slots = 1;
  std::string err;
  std::unique_ptr<Detector> det;
  if (gpudetect::Error e_ = Detector::create (cfg, &det))
    err = e_.message;
  if (!det) {
    std::fprintf (stderr, "cannot make the detector: %s\n", err.c_str ());
    return 1;
  }
  const std::string path = det->model ().path;
  std::printf ("device: %s\nmodel: %s (%s)\n", det->device ().describe ().c_str (), path.c_str (),
               det->model ().description.c_str ());
  DpmModel model;
  {
    std::ifstream f (path, std::ios::binary);
    std::stringstream s;
    s << f.rdbuf ();
    CHECK (parse_dpm_xml (s.str (), &model).message.empty ());
  }
  cv::Ptr<cv::dpm::DPMDetector> oracle = cv::dpm::DPMDetector::create ({path});
  CHECK (oracle && !oracle->isEmpty ());
  cl::Device dev;
  if (Error e = cl::open_device ("", false, &dev)) {
    std::fprintf (stderr, "no OpenCL device: %s\n", e.message.c_str ());
    return 1;
  }

  // the inputs: images, and frames of a video
  std::vector<std::pair<std::string, cv::Mat>> inputs;
  for (const std::string &p : images) {
    cv::Mat g = cv::imread (p, cv::IMREAD_GRAYSCALE);
    CHECK_MSG (!g.empty (), "cannot read %s", p.c_str ());
    if (!g.empty ())
      inputs.push_back ({p, g});
  }
  if (!frames.empty ()) {
    cv::VideoCapture cap (video);
    CHECK_MSG (cap.isOpened (), "cannot open %s", video.c_str ());
    cv::Mat f;
    for (int i = 0; cap.isOpened () && cap.read (f); i++)
      if (std::find (frames.begin (), frames.end (), i) != frames.end ()) {
        cv::Mat g;
        cv::cvtColor (f, g, cv::COLOR_BGR2GRAY);
        inputs.push_back ({video + "#" + std::to_string (i), g});
      }
    CHECK_MSG (inputs.size () == images.size () + frames.size (), "frames missing from %s", video.c_str ());
  }

  size_t ref_feat_differ = 0, feat_values = 0, dev_feat_differ = 0, float_feat_far = 0; // far: by more than 1e-5
  double float_feat_max = 0;
  size_t win_ref = 0, win_eng = 0, win_matched = 0, win_only_near = 0, win_only_far = 0;
  double win_max_abs = 0;
  size_t obj_ref = 0, obj_eng = 0, obj_ref_equal = 0, obj_cv = 0, obj_cv_equal = 0, obj_cv_ref_equal = 0;
  double obj_max_abs = 0;
  const double threshold = model.threshold;
  for (const auto &[name, g] : inputs) {
    const DpmPlan plan = plan_dpm (g.cols, g.rows, model);
    // features: reference and device against cv::dpm's
    const std::vector<std::vector<double>> feats = dpm_features (plan, g.data, static_cast<int> (g.step));
    {
      // the device's, as the family computes them (double where the device
      // has it) and in single precision (devices without double)
      DpmPlan dplan;
      std::vector<float> planes[2];
      for (int k = 0; k < 2; k++) {
        const std::string e =
            dpm_device_features (dev, false, k == 0, model, g.data, g.cols, g.rows, &dplan, &planes[k]).message;
        CHECK_MSG (e.empty () && planes[k].size () == plan.feat_plane * kDpmDims, "%s: device features: %s",
                   name.c_str (), e.c_str ());
      }
      cv::Mat c3;
      cv::cvtColor (g, c3, cv::COLOR_GRAY2BGR);
      c3.convertTo (c3, CV_64F);
      std::vector<cv::Mat> ims (plan.images.size ());
      for (size_t k = 0; k < plan.images.size (); k++) {
        const DpmImage &im = plan.images[k];
        cv::resize (im.source < 0 ? c3 : ims[im.source], ims[k], cv::Size (im.width, im.height));
      }
      for (size_t li = 0; li < plan.levels.size (); li++) {
        const DpmLevel &l = plan.levels[li];
        if (!l.computed)
          continue;
        cv::Mat fm;
        cv::dpm::Feature::computeHOG32D (ims[l.image], fm, l.cell, plan.pad_x, plan.pad_y);
        if (fm.rows != l.feat_h || fm.cols != l.feat_w * kDpmDims) {
          CHECK_MSG (false, "%s: level %zu: cv::dpm's plane is %dx%d, the plan's %dx%d", name.c_str (), li,
                     fm.cols / kDpmDims, fm.rows, l.feat_w, l.feat_h);
          continue;
        }
        for (int y = 0; y < l.feat_h; y++)
          for (int x = 0; x < l.feat_w; x++)
            for (int d = 0; d < kDpmDims; d++) {
              const double o = fm.at<double> (y, x * kDpmDims + d);
              const size_t at = static_cast<size_t> (y) * l.feat_w + x, dev_at = d * plan.feat_plane + l.feat_offset + at;
              feat_values++;
              if (feats[li][at * kDpmDims + d] != o)
                ref_feat_differ++;
              if (planes[0].size () > dev_at && planes[0][dev_at] != static_cast<float> (o))
                dev_feat_differ++;
              if (planes[1].size () > dev_at) {
                const double diff = std::fabs (planes[1][dev_at] - o);
                float_feat_max = std::max (float_feat_max, diff);
                float_feat_far += diff > 1e-5;
              }
            }
      }
    }
    // windows: the reference's against the engine's raw candidates
    const std::vector<DpmWindow> ref = dpm_reference (model, plan, feats, threshold);
    FrameResult res;
    const std::string e = det->detect ({g.data, g.cols, g.rows, static_cast<int> (g.step), PixelFormat::Gray8}, &res).message;
    CHECK_MSG (e.empty (), "%s: %s", name.c_str (), e.c_str ());
    CHECK (!res.truncated);
    using Key = std::tuple<int, int, int, int>;
    std::map<Key, double> eng, refw;
    for (const RawHit &h : res.hits) {
      const DpmHit d = dpm_hit (model, h);
      eng[{d.comp, d.level, d.rx, d.ry}] = h.score;
    }
    for (const DpmWindow &w : ref)
      refw[{w.comp, w.level, w.rx, w.ry}] = w.score;
    win_ref += refw.size ();
    win_eng += eng.size ();
    for (const auto &[k, s] : refw) {
      auto it = eng.find (k);
      if (it == eng.end ()) {
        const bool near = std::fabs (s - threshold) <= 1e-3;
        (near ? win_only_near : win_only_far)++;
        CHECK_MSG (near, "%s: the reference's window (component %d, level %d, %d,%d) scores %.7g, not the engine's",
                   name.c_str (), std::get<0> (k), std::get<1> (k), std::get<2> (k), std::get<3> (k), s);
        continue;
      }
      win_matched++;
      win_max_abs = std::max (win_max_abs, std::fabs (it->second - s));
      CHECK_MSG (close (it->second, s), "%s: window score %.7g, the reference's %.7g", name.c_str (), it->second, s);
    }
    for (const auto &[k, s] : eng)
      if (!refw.count (k)) {
        const bool near = std::fabs (s - threshold) <= 1e-3;
        (near ? win_only_near : win_only_far)++;
        CHECK_MSG (near, "%s: the engine's window (component %d, level %d, %d,%d) scores %.7g, not the reference's",
                   name.c_str (), std::get<0> (k), std::get<1> (k), std::get<2> (k), std::get<3> (k), s);
      }
    // objects: the reference's (the full model in double) and cv::dpm's
    std::vector<DpmBox> boxes;
    for (const DpmWindow &w : ref) {
      DpmBox b = dpm_window_box (model, plan, w.level, w.comp, w.rx, w.ry);
      b.score = w.score;
      boxes.push_back (b);
    }
    std::vector<Obj> robj;
    for (const DpmBox &b : dpm_suppress (boxes)) {
      const Rect r = clip_rect (box_rect (b), g.cols, g.rows);
      if (r.width > 0 && r.height > 0)
        robj.push_back ({r, b.score});
    }
    cv::Mat im = g.clone (); // detect() converts its argument
    std::vector<cv::dpm::DPMDetector::ObjectDetection> cvd;
    oracle->detect (im, cvd);
    std::vector<Obj> cobj;
    for (const auto &o : cvd) {
      const Rect r = clip_rect ({o.rect.x, o.rect.y, o.rect.width, o.rect.height}, g.cols, g.rows);
      if (r.width > 0 && r.height > 0)
        cobj.push_back ({r, o.score});
    }
    auto match = [&] (const std::vector<Obj> &a, const std::vector<Obj> &b, const char *an, const char *bn,
                      bool report, size_t *equal, double *max_abs) {
      std::vector<bool> used (b.size (), false);
      for (const Obj &o : a) {
        bool found = false;
        for (size_t j = 0; j < b.size () && !found; j++)
          if (!used[j] && b[j].rect == o.rect && close (b[j].score, o.score)) {
            used[j] = found = true;
            (*equal)++;
            if (max_abs)
              *max_abs = std::max (*max_abs, std::fabs (b[j].score - o.score));
          }
        if (!found && report)
          std::fprintf (stderr, "%s: %s's object %s (%.6f) is not %s's\n", name.c_str (), an, str (o.rect).c_str (),
                        o.score, bn);
      }
      for (size_t j = 0; j < b.size (); j++)
        if (!used[j] && report)
          std::fprintf (stderr, "%s: %s's object %s (%.6f) is not %s's\n", name.c_str (), bn,
                        str (b[j].rect).c_str (), b[j].score, an);
    };
    std::vector<Obj> eobj;
    for (const Detection &d : res.objects)
      eobj.push_back ({d.rect, d.score});
    obj_ref += robj.size ();
    obj_eng += eobj.size ();
    obj_cv += cobj.size ();
    const size_t before = obj_ref_equal;
    match (robj, eobj, "the reference", "the engine", true, &obj_ref_equal, &obj_max_abs);
    CHECK_MSG (obj_ref_equal - before == robj.size () && robj.size () == eobj.size (),
               "%s: the engine's objects are not the reference's", name.c_str ());
    match (cobj, eobj, "cv::dpm", "the engine", true, &obj_cv_equal, nullptr);
    const size_t before_cv = obj_cv_ref_equal;
    match (cobj, robj, "cv::dpm", "the reference", false, &obj_cv_ref_equal, nullptr);
    if (exact)
      CHECK_MSG (obj_cv_ref_equal - before_cv == cobj.size () && cobj.size () == robj.size (),
                 "%s: cv::dpm's objects are not the full model's", name.c_str ());
    std::printf ("%s: %dx%d, %zu levels: windows reference %zu, engine %zu; objects cv::dpm %zu, engine %zu\n",
                 name.c_str (), g.cols, g.rows, plan.levels.size (), refw.size (), eng.size (), cobj.size (),
                 eobj.size ());
    std::fflush (stdout);
  }
  std::printf ("features: of %zu values, the reference's differ from cv::dpm's in %zu, the device's (%s) from cv::dpm's "
               "rounded to float in %zu; in single precision: largest difference %.3g, %zu values off by more than "
               "1e-5\n",
               feat_values, ref_feat_differ, dev.info.fp64 ? "in double" : "no double on this device: in single",
               dev_feat_differ, float_feat_max, float_feat_far);
  std::printf ("windows at threshold %g: reference %zu, engine %zu, matched %zu (largest score difference %.3g), on "
               "one side only %zu within 1e-3 of the threshold, %zu farther\n",
               threshold, win_ref, win_eng, win_matched, win_max_abs, win_only_near, win_only_far);
  const double eq = obj_cv ? static_cast<double> (obj_cv_equal) / obj_cv : 1;
  std::printf ("objects: reference %zu, engine %zu, equal %zu (largest score difference %.3g); cv::dpm %zu, equal to "
               "the engine's %zu (%.4f), to the full model's %zu\n",
               obj_ref, obj_eng, obj_ref_equal, obj_max_abs, obj_cv, obj_cv_equal, eq, obj_cv_ref_equal);
  CHECK (ref_feat_differ == 0);
  if (dev.info.fp64)
    CHECK (dev_feat_differ == 0);
  CHECK_MSG (float_feat_max <= feature_tol && float_feat_far <= feat_values / 1000,
             "single precision: features off by up to %.3g, %zu by more than 1e-5", float_feat_max, float_feat_far);
  CHECK (obj_cv > 0);
  CHECK (win_only_far == 0);
  CHECK_MSG (eq >= (exact ? 1.0 : min_equal), "objects equal to cv::dpm's %.4f < %.4f", eq, exact ? 1.0 : min_equal);
  return finish ();
}
