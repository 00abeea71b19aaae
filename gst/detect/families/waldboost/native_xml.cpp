// The project's WaldBoost XML (models/README.md):
//
//   <WaldBoostClassifier classifierName="..." minStdDev="0" imageSizeX="24" imageSizeY="24" type="LBP"
//                        threshold="0" lbpBitOrder="topLeftHigh">
//     <schedule divisors="8 4 4 4" syncFirst="4" syncStep="2"/>        (optional)
//     <stage posT="1e+50" negT="-1.5">
//       <HistogramWeakHypothesis predictionValues="v0 ... v255">
//         <LBPFeature positionX="3" positionY="4" blockWidth="2" blockHeight="1" binMappingType="NONE"/>
//       </HistogramWeakHypothesis>
//     </stage>
//     ...
//   </WaldBoostClassifier>
//
// |posT|, |negT| >= 1e30 (or inf) mean never.  lbpBitOrder (optional) says how
// predictionValues are indexed by the LBP code: topLeftHigh (the default,
// OpenCV's order and the shipped models') has the top-left block as bit 7,
// then clockwise down to the left block as bit 0; topLeftLow (the WaldBoost
// paper's figure) has the top-left block as bit 0, then clockwise up to the
// left block as bit 7.  The engine computes codes in OpenCV's order, so a
// topLeftLow table is read reordered: response[c] = predictionValues[reverse
// of c's bits].  The writer writes topLeftHigh (the attribute left out).
#include "model.h"

#include "core/models.h"
#include "core/numbers.h"
#include "core/xml.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>

namespace gpudetect {

namespace {

constexpr int kMaxWindow = 1024;
constexpr size_t kMaxStages = 100000;
constexpr int kMaxDivisors = 6;
constexpr double kNever = 1e30;          // thresholds at or beyond this magnitude never decide
constexpr double kMaxResponse = 1e6;     // |response| bound
constexpr double kMaxSumBound = 1 << 30; // sum over stages of the largest |response|: int64 sums never overflow

std::string stage_where (size_t i) { return "stage " + std::to_string (i); }

// c's 8 bits in the other order (bit 0 <-> bit 7, ...).
int reverse_bits8 (int c) {
  int r = 0;
  for (int b = 0; b < 8; b++)
    r |= ((c >> b) & 1) << (7 - b);
  return r;
}

bool attr_double (const xmlNode *n, const char *name, double *v, bool allow_inf) {
  std::string s;
  if (!xml::attribute (n, name, &s))
    return false;
  std::vector<std::string> t = xml::split (s, 2);
  if (t.size () != 1)
    return false;
  if (allow_inf && (t[0] == "inf" || t[0] == "+inf" || t[0] == "-inf" || t[0] == "Inf" || t[0] == "-Inf")) {
    *v = t[0][0] == '-' ? -INFINITY : INFINITY;
    return true;
  }
  if (!xml::to_double (t[0], v)) {
    if (!allow_inf)
      return false;
    // 1e+400 and the like: beyond double, i.e. never
    errno = 0;
    char *end = nullptr;
    const double d = std::strtod (t[0].c_str (), &end);
    if (!end || *end || !std::isinf (d))
      return false;
    *v = d;
  }
  if (allow_inf && std::fabs (*v) >= kNever)
    *v = *v > 0 ? INFINITY : -INFINITY;
  return true;
}

bool attr_int (const xmlNode *n, const char *name, long long lo, long long hi, int *v) {
  std::string s;
  long long x;
  std::vector<std::string> t;
  if (!xml::attribute (n, name, &s) || (t = xml::split (s, 2)).size () != 1 || !xml::to_long (t[0], &x) || x < lo ||
      x > hi)
    return false;
  *v = static_cast<int> (x);
  return true;
}

Error read_stage (const xmlNode *sn, size_t si, WaldBoostModel *m) {
  const std::string where = stage_where (si);
  WaldBoostModel::Stage st;
  if (!attr_double (sn, "negT", &st.neg_t, true) || !attr_double (sn, "posT", &st.pos_t, true))
    return where + ": missing or malformed negT or posT";
  if (st.neg_t > st.pos_t)
    return where + ": negT is above posT";
  const xmlNode *wh = xml::child (sn, "HistogramWeakHypothesis");
  if (!wh)
    return where + ": no <HistogramWeakHypothesis>";
  if (xml::elements (sn).size () != 1)
    return where + ": a stage holds exactly one <HistogramWeakHypothesis>";
  std::string values;
  if (!xml::attribute (wh, "predictionValues", &values))
    return where + ": missing predictionValues";
  std::vector<std::string> t = xml::split (values, 1025);
  if (t.size () != 256)
    return where + ": predictionValues holds " +
           (t.size () > 1024 ? std::string ("more than 1024") : std::to_string (t.size ())) + " values, not 256";
  for (int c = 0; c < 256; c++) {
    double v;
    if (!xml::to_double (t[c], &v) || std::fabs (v) > kMaxResponse)
      return where + ": prediction value " + std::to_string (c) + " is malformed or beyond +-1e6";
    st.response[c] = static_cast<float> (v);
  }
  const xmlNode *f = xml::child (wh, "LBPFeature");
  if (!f || xml::elements (wh).size () != 1)
    return where + ": <HistogramWeakHypothesis> holds exactly one <LBPFeature>";
  std::string mapping;
  if (xml::attribute (f, "binMappingType", &mapping) && mapping != "NONE")
    return where + ": binMappingType '" + xml::excerpt (mapping) + "' is not supported (only NONE: the 256 codes as they are)";
  if (!attr_int (f, "positionX", 0, kMaxWindow, &st.x) || !attr_int (f, "positionY", 0, kMaxWindow, &st.y) ||
      !attr_int (f, "blockWidth", 1, kMaxWindow, &st.w) || !attr_int (f, "blockHeight", 1, kMaxWindow, &st.h))
    return where + ": <LBPFeature> needs integer positionX, positionY >= 0 and blockWidth, blockHeight >= 1";
  if (st.x + 3 * st.w > m->window_width || st.y + 3 * st.h > m->window_height)
    return where + ": the LBP grid at (" + std::to_string (st.x) + ", " + std::to_string (st.y) + ") with " +
           std::to_string (st.w) + "x" + std::to_string (st.h) + " blocks lies outside the " +
           std::to_string (m->window_width) + "x" + std::to_string (m->window_height) + " window";
  m->stages.push_back (st);
  return {};
}

Error read_schedule (const xmlNode *n, WaldBoostModel *m) {
  std::string d;
  if (xml::attribute (n, "divisors", &d)) {
    std::vector<std::string> t = xml::split (d, kMaxDivisors + 1);
    if (t.empty () || t.size () > kMaxDivisors)
      return "<schedule>: divisors must hold 1 to " + std::to_string (kMaxDivisors) + " integers";
    for (const std::string &s : t) {
      long long v;
      if (!xml::to_long (s, &v) || v < 1 || v > 1024)
        return "<schedule>: a divisor must be an integer in [1, 1024]";
      m->divisors.push_back (static_cast<int> (v));
    }
  }
  std::string s;
  if (xml::attribute (n, "syncFirst", &s) && !attr_int (n, "syncFirst", 0, 100000, &m->sync_first))
    return "<schedule>: syncFirst must be an integer in [0, 100000]";
  if (xml::attribute (n, "syncStep", &s) && !attr_int (n, "syncStep", 0, 100000, &m->sync_step))
    return "<schedule>: syncStep must be an integer in [0, 100000]";
  return {};
}

std::string escape (const std::string &s) {
  std::string o;
  for (char c : s) {
    switch (c) {
    case '&': o += "&amp;"; break;
    case '<': o += "&lt;"; break;
    case '>': o += "&gt;"; break;
    case '"': o += "&quot;"; break;
    // Literal tabs and line breaks in an attribute read back as spaces.
    case '\t': o += "&#9;"; break;
    case '\n': o += "&#10;"; break;
    case '\r': o += "&#13;"; break;
    default: o += c;
    }
  }
  return o;
}

// A threshold: "never" as 1e+50, what a reader of the format takes for it
// (|posT|, |negT| >= 1e30).
std::string threshold_text (double v) {
  if (std::isinf (v))
    return v > 0 ? "1e+50" : "-1e+50";
  return number_text (v);
}

// Either of the two formats, by its root element.
Error read_waldboost (const xmlNode *root, WaldBoostModel *out) {
  if (is_waldboost_xobjdetect (root))
    return read_waldboost_xobjdetect (root, out);
  return read_waldboost_native (root, out);
}

} // namespace

bool is_waldboost_native (const xmlNode *root) { return xml::is_elem (root, "WaldBoostClassifier"); }

Error read_waldboost_native (const xmlNode *root, WaldBoostModel *out) {
  if (!is_waldboost_native (root))
    return "not a WaldBoost classifier (root element is not <WaldBoostClassifier>)";
  WaldBoostModel m;
  std::string type;
  if (!xml::attribute (root, "type", &type) || type != "LBP")
    return "<WaldBoostClassifier>: type must be \"LBP\" (the only feature type supported)";
  xml::attribute (root, "classifierName", &m.name);
  if (!attr_int (root, "imageSizeX", 1, kMaxWindow, &m.window_width) ||
      !attr_int (root, "imageSizeY", 1, kMaxWindow, &m.window_height))
    return "<WaldBoostClassifier>: imageSizeX and imageSizeY must be integers in [1, " + std::to_string (kMaxWindow) +
           "]";
  std::string s;
  if (xml::attribute (root, "minStdDev", &s) && (!attr_double (root, "minStdDev", &m.min_std_dev, false) ||
                                                 m.min_std_dev < 0 || m.min_std_dev > 255))
    return "<WaldBoostClassifier>: minStdDev must be a number in [0, 255]";
  if (xml::attribute (root, "threshold", &s) &&
      (!attr_double (root, "threshold", &m.threshold, false) || std::fabs (m.threshold) > kMaxSumBound))
    return "<WaldBoostClassifier>: threshold must be a number within +-2^30";
  std::vector<const xmlNode *> children = xml::elements (root);
  double bound = 0;
  bool schedule = false;
  for (const xmlNode *c : children) {
    if (xml::is_elem (c, "schedule")) {
      if (schedule)
        return "<WaldBoostClassifier> holds more than one <schedule>";
      schedule = true;
      if (Error e = read_schedule (c, &m))
        return e;
      continue;
    }
    if (!xml::is_elem (c, "stage"))
      return "unexpected element <" + xml::excerpt (reinterpret_cast<const char *> (c->name)) +
             "> in <WaldBoostClassifier>";
    if (m.stages.size () >= kMaxStages)
      return "more than " + std::to_string (kMaxStages) + " stages";
    if (Error e = read_stage (c, m.stages.size (), &m))
      return e;
    float mx = 0;
    for (float r : m.stages.back ().response)
      mx = std::max (mx, std::fabs (r));
    bound += mx;
    if (bound > kMaxSumBound)
      return stage_where (m.stages.size () - 1) + ": the responses could sum beyond +-2^30";
  }
  if (m.stages.empty ())
    return "<WaldBoostClassifier> holds no <stage>";
  if (xml::attribute (root, "lbpBitOrder", &s)) {
    if (s == "topLeftLow") {
      for (WaldBoostModel::Stage &st : m.stages) {
        const std::array<float, 256> file = st.response;
        for (int c = 0; c < 256; c++)
          st.response[c] = file[reverse_bits8 (c)];
      }
    } else if (s != "topLeftHigh") {
      return "<WaldBoostClassifier>: lbpBitOrder must be topLeftHigh (the top-left block is bit 7) or topLeftLow "
             "(the top-left block is bit 0), not \"" + xml::excerpt (s) + "\"";
    }
  }
  m.format = WaldBoostModel::Format::Native;
  *out = std::move (m);
  return {};
}

Error parse_waldboost (const std::string &text, WaldBoostModel *out) {
  return xml::read_document (text, read_waldboost, out);
}

Error load_waldboost_file (const std::string &path, WaldBoostModel *out) {
  return load_model_file (path, parse_waldboost, out);
}

std::string write_waldboost_xml (const WaldBoostModel &m) {
  std::string o = "<?xml version=\"1.0\"?>\n<WaldBoostClassifier classifierName=\"" + escape (m.name) +
                  "\" minStdDev=\"" + number_text (m.min_std_dev) + "\" imageSizeX=\"" +
                  std::to_string (m.window_width) + "\" imageSizeY=\"" + std::to_string (m.window_height) +
                  "\" type=\"LBP\" threshold=\"" + number_text (m.threshold) + "\">\n";
  if (!m.divisors.empty () || m.sync_first || m.sync_step) {
    o += "  <schedule";
    if (!m.divisors.empty ()) {
      o += " divisors=\"";
      for (size_t i = 0; i < m.divisors.size (); i++)
        o += (i ? " " : "") + std::to_string (m.divisors[i]);
      o += "\"";
    }
    if (m.sync_first)
      o += " syncFirst=\"" + std::to_string (m.sync_first) + "\"";
    if (m.sync_step)
      o += " syncStep=\"" + std::to_string (m.sync_step) + "\"";
    o += "/>\n";
  }
  for (const WaldBoostModel::Stage &st : m.stages) {
    o += "  <stage posT=\"" + threshold_text (st.pos_t) + "\" negT=\"" + threshold_text (st.neg_t) + "\">\n";
    o += "    <HistogramWeakHypothesis predictionValues=\"";
    for (int c = 0; c < 256; c++)
      o += (c ? " " : "") + float_text (st.response[c]);
    o += "\">\n      <LBPFeature positionX=\"" + std::to_string (st.x) + "\" positionY=\"" + std::to_string (st.y) +
         "\" blockWidth=\"" + std::to_string (st.w) + "\" blockHeight=\"" + std::to_string (st.h) +
         "\" binMappingType=\"NONE\"/>\n    </HistogramWeakHypothesis>\n  </stage>\n";
  }
  o += "</WaldBoostClassifier>\n";
  return o;
}

} // namespace gpudetect
