// OpenCV cascade XML (new format, <opencv_storage><cascade>) → CascadeModel.
#include "model.h"

#include "core/models.h"
#include "core/xml.h"

#include <cstdint>
#include <cstring>

namespace gpudetect {

namespace {

using xml::child;
using xml::elements;
using xml::is_elem;
using xml::to_double;
using xml::to_long;
using xml::tokens;

constexpr int kMaxWindow = 1024;
constexpr size_t kMaxStages = 10000;
constexpr size_t kMaxTrees = 1u << 20;
constexpr int kMaxNodesPerTree = 1024;
constexpr size_t kMaxFeatures = 1u << 20;
// OpenCV lowers every stage threshold by this float epsilon when loading.
constexpr float kThresholdEps = 1e-5f;

struct Parser {
  CascadeModel &m;
  std::string err;

  bool fail (const std::string &e) {
    if (err.empty ())
      err = e;
    return false;
  }

  bool read_int (const xmlNode *parent, const char *name, int lo, int hi, int *v) {
    const xmlNode *n = child (parent, name);
    if (!n)
      return fail (std::string ("missing <") + name + ">");
    std::vector<std::string> t = tokens (n, 2);
    long long x;
    if (t.size () != 1 || !to_long (t[0], &x) || x < lo || x > hi)
      return fail (std::string ("<") + name + "> must be an integer in [" + std::to_string (lo) + ", " +
                   std::to_string (hi) + "]");
    *v = static_cast<int> (x);
    return true;
  }

  // Each child element of root's <name> (its <stages> or <features>), 1 to
  // `max` of them, read by `read (element, index)`.
  template <typename Read> bool read_each (const xmlNode *root, const char *name, size_t max, Read read) {
    const xmlNode *n = child (root, name);
    if (!n)
      return fail (std::string ("missing <") + name + ">");
    const std::vector<const xmlNode *> list = elements (n);
    if (list.empty () || list.size () > max)
      return fail (std::string ("<") + name + "> must hold between 1 and " + std::to_string (max) + " " + name);
    for (size_t i = 0; i < list.size (); i++)
      if (!read (list[i], i))
        return false;
    return true;
  }

  bool read_weak (const xmlNode *w, int stage_idx) {
    const xmlNode *in = child (w, "internalNodes");
    const xmlNode *lv = child (w, "leafValues");
    std::string where = "stage " + std::to_string (stage_idx) + ", tree " +
                        std::to_string (m.trees.size ());
    if (!in || !lv)
      return fail (where + ": missing <internalNodes> or <leafValues>");
    const bool cat = m.ncategories > 0;
    const size_t step = cat ? 3 + 8 : 4;
    std::vector<std::string> nt = tokens (in, kMaxNodesPerTree * step + 1);
    if (nt.size () > kMaxNodesPerTree * step)
      return fail (where + ": too many nodes (more than " + std::to_string (kMaxNodesPerTree) + ")");
    if (nt.empty () || nt.size () % step != 0)
      return fail (where + ": <internalNodes> holds " + std::to_string (nt.size ()) +
                   " numbers, not a multiple of " + std::to_string (step));
    int count = static_cast<int> (nt.size () / step);
    std::vector<std::string> lt = tokens (lv, count + 2);
    if (lt.size () != static_cast<size_t> (count) + 1)
      return fail (where + ": expected " + std::to_string (count + 1) + " leaf values, found " +
                   (lt.size () > static_cast<size_t> (count) + 1 ? std::string ("more") : std::to_string (lt.size ())));
    CascadeModel::Tree tree;
    tree.first_node = static_cast<int> (m.nodes.size ());
    tree.node_count = count;
    tree.first_leaf = static_cast<int> (m.leaves.size ());
    for (int i = 0; i < count; i++) {
      const std::string *p = &nt[i * step];
      long long l, r, f;
      if (!to_long (p[0], &l) || !to_long (p[1], &r) || !to_long (p[2], &f))
        return fail (where + ": malformed node");
      // Children: > 0 is a node of this tree, <= 0 is -leaf index.
      if (l >= count || r >= count || l < -count || r < -count || (l > 0 && l <= i) || (r > 0 && r <= i))
        return fail (where + ": node child index out of range");
      if (f < 0 || f >= static_cast<long long> (kMaxFeatures))
        return fail (where + ": feature index out of range");
      CascadeModel::Node node;
      node.left = static_cast<int> (l);
      node.right = static_cast<int> (r);
      node.feature = static_cast<int> (f);
      if (cat) {
        for (int k = 0; k < 8; k++) {
          long long s;
          if (!to_long (p[3 + k], &s) || s < INT32_MIN || s > UINT32_MAX)
            return fail (where + ": malformed category subset");
          node.subset[k] = static_cast<uint32_t> (s);
        }
      } else {
        if (!to_float (p[3], &node.threshold))
          return fail (where + ": malformed node threshold (a number within the range of a float)");
      }
      m.nodes.push_back (node);
    }
    for (const std::string &s : lt) {
      float v;
      if (!to_float (s, &v))
        return fail (where + ": malformed leaf value (a number within the range of a float)");
      m.leaves.push_back (v);
    }
    m.max_nodes_per_tree = std::max (m.max_nodes_per_tree, count);
    m.trees.push_back (tree);
    return true;
  }

  bool read_stage (const xmlNode *sn, size_t si) {
    const xmlNode *thr = child (sn, "stageThreshold");
    const xmlNode *weak = child (sn, "weakClassifiers");
    std::vector<std::string> t = tokens (thr, 2);
    float v;
    if (!thr || t.size () != 1 || !to_float (t[0], &v))
      return fail ("stage " + std::to_string (si) + ": missing or malformed <stageThreshold> (a number within the "
                   "range of a float)");
    std::vector<const xmlNode *> ws = elements (weak);
    if (ws.empty ())
      return fail ("stage " + std::to_string (si) + ": no weak classifiers");
    CascadeModel::Stage stage;
    stage.threshold = v - kThresholdEps;
    stage.first_tree = static_cast<int> (m.trees.size ());
    stage.ntrees = static_cast<int> (ws.size ());
    for (const xmlNode *w : ws) {
      if (m.trees.size () >= kMaxTrees)
        return fail ("too many weak classifiers");
      if (!read_weak (w, static_cast<int> (si)))
        return false;
    }
    m.stages.push_back (stage);
    return true;
  }

  bool read_feature (const xmlNode *fn, size_t fi) {
    const int W = m.window_width, H = m.window_height;
    const std::string where = "feature " + std::to_string (fi);
    if (m.feature_type == CascadeModel::FeatureType::Lbp) {
      std::vector<std::string> t = tokens (child (fn, "rect"), 5);
      long long v[4];
      if (t.size () != 4 || !to_long (t[0], &v[0]) || !to_long (t[1], &v[1]) || !to_long (t[2], &v[2]) ||
          !to_long (t[3], &v[3]))
        return fail (where + ": <rect> must hold 4 integers");
      if (v[0] < 0 || v[1] < 0 || v[2] <= 0 || v[3] <= 0 || v[0] + 3 * v[2] > W || v[1] + 3 * v[3] > H)
        return fail (where + ": LBP block lies outside the " + std::to_string (W) + "x" + std::to_string (H) +
                     " window");
      m.lbp_features.push_back ({int (v[0]), int (v[1]), int (v[2]), int (v[3])});
      return true;
    }
    CascadeModel::HaarFeature f;
    std::vector<const xmlNode *> rects = elements (child (fn, "rects"));
    if (rects.empty () || rects.size () > 3)
      return fail (where + ": <rects> must hold 1 to 3 rectangles");
    const xmlNode *tn = child (fn, "tilted");
    if (tn) {
      std::vector<std::string> t = tokens (tn, 2);
      long long tv;
      if (t.size () != 1 || !to_long (t[0], &tv))
        return fail (where + ": malformed <tilted>");
      f.tilted = tv != 0;
    }
    for (size_t ri = 0; ri < rects.size (); ri++) {
      std::vector<std::string> t = tokens (rects[ri], 6);
      long long v[4];
      float w;
      if (t.size () != 5 || !to_long (t[0], &v[0]) || !to_long (t[1], &v[1]) || !to_long (t[2], &v[2]) ||
          !to_long (t[3], &v[3]) || !to_float (t[4], &w))
        return fail (where + ": a rectangle must be 'x y width height weight' (the weight within the range of a "
                     "float)");
      long long x = v[0], y = v[1], rw = v[2], rh = v[3];
      bool inside = f.tilted ? (x - rh >= 0 && x + rw <= W && y >= 0 && y + rw + rh <= H && rw >= 0 && rh >= 0)
                             : (x >= 0 && y >= 0 && rw >= 0 && rh >= 0 && x + rw <= W && y + rh <= H);
      if (!inside)
        return fail (where + ": rectangle lies outside the " + std::to_string (W) + "x" + std::to_string (H) +
                     " window");
      f.rect[ri] = {int (x), int (y), int (rw), int (rh), w};
    }
    m.has_tilted = m.has_tilted || f.tilted;
    m.haar_features.push_back (f);
    return true;
  }

  bool read (const xmlNode *root) {
    const xmlNode *st = child (root, "stageType");
    std::vector<std::string> t = tokens (st, 2);
    if (!st || t.size () != 1 || t[0] != "BOOST")
      return fail ("unsupported <stageType> (only BOOST cascades are supported)");
    t = tokens (child (root, "featureType"), 2);
    if (t.size () != 1)
      return fail ("missing <featureType>");
    if (t[0] == "HAAR")
      m.feature_type = CascadeModel::FeatureType::Haar;
    else if (t[0] == "LBP")
      m.feature_type = CascadeModel::FeatureType::Lbp;
    else
      return fail ("unsupported <featureType> '" + xml::excerpt (t[0]) + "' (HAAR and LBP are supported)");
    if (!read_int (root, "width", 1, kMaxWindow, &m.window_width) ||
        !read_int (root, "height", 1, kMaxWindow, &m.window_height))
      return false;
    const xmlNode *fp = child (root, "featureParams");
    if (!fp)
      return fail ("missing <featureParams>");
    if (!read_int (fp, "maxCatCount", 0, 256, &m.ncategories))
      return false;
    if (m.feature_type == CascadeModel::FeatureType::Lbp && m.ncategories != 256)
      return fail ("LBP cascades must have maxCatCount 256");
    if (m.feature_type == CascadeModel::FeatureType::Haar && m.ncategories != 0)
      return fail ("HAAR cascades must have maxCatCount 0");
    auto stage = [this] (const xmlNode *n, size_t i) { return read_stage (n, i); };
    auto feature = [this] (const xmlNode *n, size_t i) { return read_feature (n, i); };
    if (!read_each (root, "stages", kMaxStages, stage) || !read_each (root, "features", kMaxFeatures, feature))
      return false;
    for (const CascadeModel::Node &n : m.nodes)
      if (static_cast<size_t> (n.feature) >= m.feature_count ())
        return fail ("a node uses feature " + std::to_string (n.feature) + " of " +
                     std::to_string (m.feature_count ()));
    return true;
  }
};

} // namespace

bool is_cascade_storage (const xmlNode *top) {
  if (!is_elem (top, "opencv_storage"))
    return false;
  std::vector<const xmlNode *> tops = elements (top);
  if (tops.empty ())
    return true; // read_cascade_storage says what is missing
  const xmlNode *root = tops[0];
  if (is_elem (root, "cascade") || xmlHasProp (root, BAD_CAST "type_id"))
    return true;
  for (const char *c : {"stageType", "featureType", "stages", "features", "size"})
    if (child (root, c))
      return true;
  return false;
}

Error read_cascade_storage (const xmlNode *top, CascadeModel *out) {
  if (!is_elem (top, "opencv_storage"))
    return "not an OpenCV storage file (root element is not <opencv_storage>)";
  std::vector<const xmlNode *> tops = elements (top);
  if (tops.empty ())
    return "<opencv_storage> is empty";
  const xmlNode *root = tops[0];
  xmlChar *type = xmlGetProp (root, BAD_CAST "type_id");
  bool old_format = type && std::strcmp (reinterpret_cast<char *> (type), "opencv-haar-classifier") == 0;
  xmlFree (type);
  if (old_format || (!child (root, "stageType") && child (root, "size")))
    return "old-format Haar cascade (opencv-haar-classifier) is not supported; convert it with OpenCV's "
           "opencv_traincascade-era tools to the <cascade> format";
  CascadeModel m;
  Parser p{m, {}};
  if (!p.read (root))
    return p.err;
  *out = std::move (m);
  return {};
}

Error parse_cascade_xml (const std::string &text, CascadeModel *out) {
  return xml::read_document (text, read_cascade_storage, out);
}

Error load_cascade_file (const std::string &path, CascadeModel *out) {
  return load_model_file (path, parse_cascade_xml, out);
}

} // namespace gpudetect
