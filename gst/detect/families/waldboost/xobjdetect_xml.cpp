// OpenCV xobjdetect's WBDetector files: what WaldBoost::write puts in a
// FileStorage (XML), under the one top-level node its caller names
// ("waldboost" in OpenCV's tool and ours):
//
//   <opencv_storage>
//   <waldboost>
//     <waldboost_params><weak_count>N</weak_count></waldboost_params>
//     <thresholds>N floats</thresholds>            a stump's threshold on the LBP code
//     <alphas>N floats</alphas>                    its weight
//     <polarities>N ints</polarities>              its direction
//     <cascade_thresholds>N floats</cascade_thresholds>  rejection after each stump
//     <feature_indices>N ints</feature_indices>    into the LBP feature pool
//   </waldboost></opencv_storage>
//
// OpenCV 4.6 (modules/xobjdetect/src/waldboost.cpp, WaldBoost::predict): in
// stump order, val = the LBP code (0..255) of feature_indices[i] as a float,
// label = polarities[i] * (val - thresholds[i]) > 0 ? +1 : -1, res +=
// alphas[i] * label in single precision, rejected when res <
// cascade_thresholds[i]; a window that passes every stump is a hit when res >
// cascade_thresholds[N - 1].  The feature pool (lbpfeatures.cpp,
// generateFeatures) lists, for a 24x24 window, x then y then block width then
// block height, each grid of 3x3 blocks that fits.
//
// Each stump becomes a stage whose 256 responses are alpha * label by code,
// computed as OpenCV computes them; negT = its cascade threshold, posT never;
// gamma the last threshold, exclusive; sums in single precision, in stage order
// (float_sums), as OpenCV adds them.
#include "model.h"

#include "core/xml.h"

#include <cmath>
#include <cstring>

namespace gpudetect {

namespace {

constexpr int kWindow = 24;               // WBDetector's window (wbdetector.cpp: Size(24, 24))
constexpr long long kMaxWeak = 100000;    // weak_count at most this
constexpr double kMaxAlpha = 1e6;         // |alpha| bound
constexpr double kMaxThreshold = 1e30;    // |threshold| bound (stumps and cascade)

struct Grid {
  int x, y, w, h;
};

// CvLBPEvaluator::generateFeatures for a 24x24 window.
const std::vector<Grid> &feature_pool () {
  static const std::vector<Grid> pool = [] {
    std::vector<Grid> v;
    for (int x = 0; x < kWindow; x++)
      for (int y = 0; y < kWindow; y++)
        for (int w = 1; w <= kWindow / 3; w++)
          for (int h = 1; h <= kWindow / 3; h++)
            if (x + 3 * w <= kWindow && y + 3 * h <= kWindow)
              v.push_back ({x, y, w, h});
    return v;
  }();
  return pool;
}

const char *name_of (const xmlNode *n) { return reinterpret_cast<const char *> (n->name); }

// A FileStorage sequence of scalars: the element's text, or one <_> child per
// value.
Error sequence (const xmlNode *map, const char *name, size_t count, std::vector<std::string> *out) {
  const xmlNode *n = xml::child (map, name);
  if (!n)
    return "no <" + std::string (name) + ">";
  std::vector<const xmlNode *> kids = xml::elements (n);
  if (kids.empty ()) {
    *out = xml::tokens (n);
  } else {
    out->clear ();
    for (const xmlNode *k : kids) {
      std::vector<std::string> t = xml::tokens (k);
      if (!xml::is_elem (k, "_") || !xml::elements (k).empty () || t.size () != 1)
        return "<" + std::string (name) + ">: a sequence of numbers expected";
      if (out->size () >= count)
        break;
      out->push_back (t[0]);
    }
  }
  if (out->size () != count)
    return "<" + std::string (name) + "> holds " + std::to_string (out->size ()) + " values, not weak_count (" +
           std::to_string (count) + ")";
  return {};
}

// FileStorage writes non-finite reals as .Inf, -.Inf and .Nan; those are
// refused with the rest.
Error reals (const xmlNode *map, const char *name, size_t count, double bound, std::vector<float> *out) {
  std::vector<std::string> t;
  if (Error e = sequence (map, name, count, &t))
    return e;
  out->resize (count);
  for (size_t i = 0; i < count; i++) {
    double v;
    if (!xml::to_double (t[i], &v) || std::fabs (v) > bound)
      return "<" + std::string (name) + ">[" + std::to_string (i) + "] = '" + t[i].substr (0, 32) +
             "' is not a finite number within +-" + (bound >= 1e30 ? "1e30" : "1e6") +
             (t[i].find ("Inf") != std::string::npos
                  ? " (OpenCV's trainer writes .Inf where a weak learner separated its samples exactly; such a model "
                    "accepts nothing)"
                  : "");
    (*out)[i] = static_cast<float> (v); // FileNode >> float: the double, rounded to float
  }
  return {};
}

Error ints (const xmlNode *map, const char *name, size_t count, long long lo, long long hi,
                  std::vector<int> *out) {
  std::vector<std::string> t;
  if (Error e = sequence (map, name, count, &t))
    return e;
  out->resize (count);
  for (size_t i = 0; i < count; i++) {
    long long v;
    if (!xml::to_long (t[i], &v) || v < lo || v > hi)
      return "<" + std::string (name) + ">[" + std::to_string (i) + "] = '" + t[i].substr (0, 32) +
             "' is not an integer in [" + std::to_string (lo) + ", " + std::to_string (hi) + "]";
    (*out)[i] = static_cast<int> (v);
  }
  return {};
}

// The node WBDetector::read is given: the storage's first top-level node.
const xmlNode *top_node (const xmlNode *root) {
  if (!xml::is_elem (root, "opencv_storage"))
    return nullptr;
  std::vector<const xmlNode *> tops = xml::elements (root);
  return tops.empty () ? nullptr : tops[0];
}

} // namespace

bool is_waldboost_xobjdetect (const xmlNode *root) {
  const xmlNode *top = top_node (root);
  return top && xml::child (top, "waldboost_params");
}

Error read_waldboost_xobjdetect (const xmlNode *root, WaldBoostModel *out) {
  const xmlNode *top = top_node (root);
  if (!top)
    return "not an OpenCV storage file with a top-level node (<opencv_storage><waldboost>)";
  const std::string where = "<" + std::string (name_of (top)) + ">";
  const xmlNode *params = xml::child (top, "waldboost_params");
  if (!params)
    return where + ": no <waldboost_params>";
  std::vector<std::string> t = xml::tokens (xml::child (params, "weak_count"));
  long long n = 0;
  if (t.size () != 1 || !xml::to_long (t[0], &n) || n < 1 || n > kMaxWeak)
    return where + ": <waldboost_params><weak_count> must be an integer in [1, " + std::to_string (kMaxWeak) + "]";
  const size_t count = static_cast<size_t> (n);
  const std::vector<Grid> &pool = feature_pool ();
  std::vector<float> thresholds, alphas, cascade;
  std::vector<int> polarities, features;
  Error e;
  if ((e = reals (top, "thresholds", count, kMaxThreshold, &thresholds)) ||
      (e = reals (top, "alphas", count, kMaxAlpha, &alphas)) ||
      (e = ints (top, "polarities", count, -1000000, 1000000, &polarities)) ||
      (e = reals (top, "cascade_thresholds", count, kMaxThreshold, &cascade)) ||
      (e = ints (top, "feature_indices", count, 0, static_cast<long long> (pool.size ()) - 1, &features)))
    return where + ": " + e.message;

  WaldBoostModel m;
  m.name = name_of (top);
  m.window_width = m.window_height = kWindow;
  m.float_sums = true;
  m.threshold = cascade[count - 1];
  m.threshold_exclusive = true;
  m.stages.resize (count);
  for (size_t i = 0; i < count; i++) {
    WaldBoostModel::Stage &s = m.stages[i];
    const Grid &g = pool[features[i]];
    s.x = g.x, s.y = g.y, s.w = g.w, s.h = g.h;
    s.neg_t = cascade[i];
    for (int code = 0; code < 256; code++) {
      const float val = static_cast<float> (code);
      const int label = polarities[i] * (val - thresholds[i]) > 0 ? +1 : -1;
      s.response[code] = alphas[i] * static_cast<float> (label);
    }
  }
  m.format = WaldBoostModel::Format::XObjDetect;
  *out = std::move (m);
  return {};
}

} // namespace gpudetect
