// The deformable part model family on the device against the host reference
// (families/dpm/dpm.h: cv::dpm's computation in double, whose features and
// objects test-dpm-parity checks against cv::dpm itself), without OpenCV, so
// that it runs on any host with a device: every feature (where the device has
// double precision: the reference's rounded to float), every window reaching
// the threshold with its score within 1e-3 (windows on one side only must lie
// within 1e-3 of the threshold), and every object after the suppression.
// Each variant of the family's schedules runs: the device's defaults, then
// the CPU and GPU schedules with the filters correlated directly and through
// the FFT, whatever hog-eval=auto picks.
//
//   test-dpm-device --model PATH [--threshold T] FRAME.pgm...
#include "check.h"
#include "pgm.h"

#include "detector.h"
#include "families/dpm/family.h"

#include <cmath>
#include <fstream>
#include <map>
#include <sstream>
#include <tuple>

using namespace gpudetect;

namespace {

bool close (double a, double b) { return std::fabs (a - b) <= 1e-3 * std::max (std::fabs (b), 1.0); }

const char *const kVariants[] = {"",
                                 "schedule=gpu",
                                 "hog-eval=direct;schedule=cpu",
                                 "hog-eval=direct;schedule=gpu",
                                 "hog-eval=fft;schedule=cpu",
                                 "hog-eval=fft;schedule=gpu"};

// One variant: the detector with `tuning` against the reference.
void check_variant (const std::string &model_path, double threshold, const std::string &tuning,
                    const std::vector<std::string> &frames, const cl::Device &dev) {
  DetectorConfig cfg;
  cfg.model = model_path;
  cfg.slots = 1;
  cfg.tuning = tuning;
  std::string err;
  std::unique_ptr<Detector> det;
  if (gpudetect::Error e_ = Detector::create (cfg, &det))
    err = e_.message;
  CHECK_MSG (det, "tuning '%s': cannot make the detector: %s", tuning.c_str (), err.c_str ());
  if (!det)
    return;
  DpmModel model;
  {
    std::ifstream f (det->model ().path, std::ios::binary);
    std::stringstream s;
    s << f.rdbuf ();
    CHECK (parse_dpm_xml (s.str (), &model).message.empty ());
  }
  if (std::isnan (threshold))
    threshold = model.threshold;
  else
    det->set_threshold (threshold);
  std::printf ("tuning '%s': device %s (%s schedule)\nmodel: %s (%s), threshold %g\n", tuning.c_str (),
               det->device ().describe ().c_str (), det->gpu_schedule () ? "GPU" : "CPU", det->model ().path.c_str (),
               det->model ().description.c_str (), threshold);
  size_t values = 0, feat_differ = 0, w_ref = 0, w_eng = 0, w_near = 0, w_far = 0, o_ref = 0, o_eng = 0, o_equal = 0;
  double w_max = 0, f_max = 0;
  for (const std::string &path : frames) {
    Grey g;
    if (!read_pgm (path, &g)) {
      CHECK_MSG (false, "cannot read %s", path.c_str ());
      continue;
    }
    const DpmPlan plan = plan_dpm (g.cols, g.rows, model);
    const std::vector<std::vector<double>> feats = dpm_features (plan, g.px.data (), g.cols);
    {
      DpmPlan dp;
      std::vector<float> planes;
      const std::string e =
          dpm_device_features (dev, det->gpu_schedule (), true, model, g.px.data (), g.cols, g.rows, &dp, &planes).message;
      CHECK_MSG (e.empty () && planes.size () == plan.feat_plane * kDpmDims, "%s: %s", path.c_str (), e.c_str ());
      for (size_t li = 0; li < plan.levels.size () && !planes.empty (); li++) {
        const DpmLevel &l = plan.levels[li];
        for (size_t at = 0; l.computed && at < static_cast<size_t> (l.feat_w) * l.feat_h; at++)
          for (int d = 0; d < kDpmDims; d++) {
            const double r = feats[li][at * kDpmDims + d];
            const float v = planes[d * plan.feat_plane + l.feat_offset + at];
            values++;
            feat_differ += v != static_cast<float> (r);
            f_max = std::max (f_max, std::fabs (v - r));
          }
      }
    }
    using Key = std::tuple<int, int, int, int>;
    std::map<Key, double> ref, eng;
    for (const DpmWindow &w : dpm_reference (model, plan, feats, threshold))
      ref[{w.comp, w.level, w.rx, w.ry}] = w.score;
    FrameResult res;
    const std::string e = det->detect ({g.px.data (), g.cols, g.rows, g.cols, PixelFormat::Gray8}, &res).message;
    CHECK_MSG (e.empty () && !res.truncated, "%s: %s", path.c_str (), e.c_str ());
    for (const RawHit &h : res.hits) {
      const DpmHit d = dpm_hit (model, h);
      eng[{d.comp, d.level, d.rx, d.ry}] = h.score;
    }
    w_ref += ref.size ();
    w_eng += eng.size ();
    for (auto [a, b, an] : {std::tuple<const std::map<Key, double> *, const std::map<Key, double> *, const char *> {
                                &ref, &eng, "the reference"},
                            {&eng, &ref, "the engine"}})
      for (const auto &[k, s] : *a) {
        auto it = b->find (k);
        if (it != b->end ()) {
          w_max = std::max (w_max, std::fabs (it->second - s));
          CHECK_MSG (close (it->second, s), "%s: window score %.7g against %.7g", path.c_str (), it->second, s);
          continue;
        }
        const bool near = std::fabs (s - threshold) <= 1e-3;
        (near ? w_near : w_far)++;
        CHECK_MSG (near, "%s: %s's window (component %d, level %d, %d,%d) scores %.7g, on one side only", path.c_str (),
                   an, std::get<0> (k), std::get<1> (k), std::get<2> (k), std::get<3> (k), s);
      }
    // objects: the reference's windows through the family's own rule
    std::vector<DpmBox> boxes;
    for (const auto &[k, s] : ref) {
      DpmBox b = dpm_window_box (model, plan, std::get<1> (k), std::get<0> (k), std::get<2> (k), std::get<3> (k));
      b.score = s;
      boxes.push_back (b);
    }
    std::vector<Detection> robj;
    for (const DpmBox &b : dpm_suppress (boxes)) {
      const int x1 = static_cast<int> (b.x1), y1 = static_cast<int> (b.y1);
      const Rect r = clip_rect ({x1, y1, static_cast<int> (b.x2) - x1 + 1, static_cast<int> (b.y2) - y1 + 1}, g.cols,
                                g.rows);
      if (r.width > 0 && r.height > 0) {
        Detection d;
        d.rect = r;
        d.score = static_cast<float> (b.score);
        robj.push_back (d);
      }
    }
    o_ref += robj.size ();
    o_eng += res.objects.size ();
    for (size_t i = 0; i < robj.size () && i < res.objects.size (); i++)
      o_equal += robj[i].rect == res.objects[i].rect && close (res.objects[i].score, robj[i].score);
    CHECK_MSG (robj.size () == res.objects.size (), "%s: %zu objects, the reference's %zu", path.c_str (),
               res.objects.size (), robj.size ());
    std::printf ("%s: %dx%d: windows reference %zu, engine %zu; objects reference %zu, engine %zu\n", path.c_str (),
                 g.cols, g.rows, ref.size (), eng.size (), robj.size (), res.objects.size ());
    std::fflush (stdout);
  }
  std::printf ("features: %zu values, %zu differ from the reference's rounded to float (largest difference %.3g)%s\n",
               values, feat_differ, f_max, det->device ().fp64 ? "" : " (no double on this device)");
  std::printf ("windows: reference %zu, engine %zu, largest score difference %.3g, on one side only %zu within 1e-3 of "
               "the threshold, %zu farther\nobjects: reference %zu, engine %zu, equal in order %zu\n",
               w_ref, w_eng, w_max, w_near, w_far, o_ref, o_eng, o_equal);
  if (det->device ().fp64)
    CHECK (feat_differ == 0);
  CHECK (w_far == 0);
  CHECK (o_equal == o_ref && o_ref == o_eng);
}

} // namespace

int main (int argc, char **argv) {
  std::string model_path;
  double threshold = NAN;
  std::vector<std::string> frames;
  for (int i = 1; i < argc; i++) {
    const std::string a = argv[i];
    if (a == "--model" && i + 1 < argc)
      model_path = argv[++i];
    else if (a == "--threshold" && i + 1 < argc)
      threshold = std::atof (argv[++i]);
    else
      frames.push_back (a);
  }
  CHECK_MSG (!model_path.empty () && !frames.empty (), "usage: test-dpm-device --model PATH [--threshold T] FRAME.pgm...");
  if (model_path.empty ())
    return finish ();
  cl::Device dev; // the same default device as the detector's, for the features
  if (Error e = cl::open_device ("", false, &dev)) {
    std::fprintf (stderr, "no OpenCL device: %s\n", e.message.c_str ());
    return 1;
  }
  for (const char *tuning : kVariants)
    check_variant (model_path, threshold, tuning, frames, dev);
  return finish ();
}
