// cv::dpm's model files (model.h): the elements its CascadeModel::deserialize
// reads, read as OpenCV's FileStorage stores them.  Every count is bounded
// before anything proportional to it is allocated; a message names the
// element, its index and its line.
#include "model.h"

#include "core/numbers.h"
#include "core/xml.h"

#include <cmath>
#include <cstring>

namespace gpudetect {

namespace {

std::string where (const xmlNode *n, const std::string &what) {
  return "<" + what + "> (line " + std::to_string (xmlGetLineNo (n)) + ")";
}

std::string name_of (const std::string &parent, size_t i) { return parent + ">[" + std::to_string (i) + "]<"; }

// The numbers of a node: its text, or (FileStorage's other way to write a
// sequence) one <_> child per number.  At most `max` of them.
Error numbers (const xmlNode *n, const std::string &what, size_t max, std::vector<double> *out) {
  std::vector<std::string> t;
  std::vector<const xmlNode *> kids = xml::elements (n);
  if (kids.empty ()) {
    t = xml::tokens (n, max + 1);
  } else {
    if (kids.size () > max)
      return where (n, what) + " holds more than " + std::to_string (max) + " values";
    for (const xmlNode *k : kids) {
      std::vector<std::string> v = xml::tokens (k, 2);
      if (!xml::is_elem (k, "_") || !xml::elements (k).empty () || v.size () != 1)
        return where (n, what) + ": a sequence of numbers expected";
      t.push_back (v[0]);
    }
  }
  if (t.size () > max)
    return where (n, what) + " holds more than " + std::to_string (max) + " values";
  out->resize (t.size ());
  for (size_t i = 0; i < t.size (); i++)
    if (!xml::to_double (t[i], &(*out)[i]) || std::fabs ((*out)[i]) > kDpmMaxValue)
      return where (n, what) + "[" + std::to_string (i) + "] = '" + xml::excerpt (t[i]) +
             "' is not a finite number within +-1e6";
  return {};
}

const xmlNode *field (const xmlNode *root, const char *name, Error *err) {
  const xmlNode *n = xml::child (root, name);
  if (!n)
    *err = "no <" + std::string (name) + "> (cv::dpm's models have one)";
  return n;
}

// A field's numbers (at most `max`) and its node.
Error field_numbers (const xmlNode *root, const char *name, size_t max, std::vector<double> *v, const xmlNode **node) {
  Error e;
  if (!(*node = field (root, name, &e)))
    return e;
  return numbers (*node, name, max, v);
}

// A field of one number per component.
Error component_numbers (const xmlNode *root, const char *name, int ncomp, std::vector<double> *v,
                         const xmlNode **node) {
  if (Error e = field_numbers (root, name, ncomp, v, node))
    return e;
  if (v->size () != static_cast<size_t> (ncomp))
    return where (*node, name) + " holds " + std::to_string (v->size ()) + " values, not NumComponents (" +
           std::to_string (ncomp) + ")";
  return {};
}

Error real_field (const xmlNode *root, const char *name, double *v) {
  std::vector<double> t;
  const xmlNode *n;
  if (Error e = field_numbers (root, name, 1, &t, &n))
    return e;
  if (t.size () != 1)
    return where (n, name) + ": one number expected";
  *v = t[0];
  return {};
}

// An integer (FileStorage may write it as a real: "8.000000").
bool integral (double v, int lo, int hi) { return v == std::floor (v) && v >= lo && v <= hi; }

Error int_field (const xmlNode *root, const char *name, int lo, int hi, int *v) {
  double d;
  if (Error e = real_field (root, name, &d))
    return e;
  if (d == std::floor (d) && (d > hi || d < lo))
    return where (xml::child (root, name), name) + " = " + xml::excerpt (number_text (d)) + " is " +
           (d > hi ? "over the cap of " + std::to_string (hi) : "under the least value " + std::to_string (lo)) +
           " (models/README.md)";
  if (!integral (d, lo, hi))
    return where (xml::child (root, name), name) + " = " + xml::excerpt (std::to_string (d)) +
           " is not an integer in [" + std::to_string (lo) + ", " + std::to_string (hi) + "]";
  *v = static_cast<int> (d);
  return {};
}

// The <_> children of a sequence element, exactly `count` of them.
Error items (const xmlNode *root, const char *name, size_t count, std::vector<const xmlNode *> *out) {
  Error e;
  const xmlNode *n = field (root, name, &e);
  if (!n)
    return e;
  out->clear ();
  for (const xmlNode *c = n->children; c; c = c->next) {
    if (!xml::is_elem (c))
      continue;
    if (!xml::is_elem (c, "_"))
      return where (c, std::string (name) + "><" + reinterpret_cast<const char *> (c->name)) +
             ": only <_> items expected";
    if (out->size () == count)
      return where (n, name) + " holds more than " + std::to_string (count) + " items";
    out->push_back (c);
  }
  if (out->size () != count)
    return where (n, name) + " holds " + std::to_string (out->size ()) + " items, not " + std::to_string (count);
  return {};
}

// An opencv-matrix of doubles: rows x cols (cols a multiple of kDpmDims: a
// filter of rows x cols / kDpmDims cells).
Error filter (const xmlNode *m, const std::string &what, DpmFilter *f, size_t *total) {
  std::string type;
  if (!xml::attribute (m, "type_id", &type) || type != "opencv-matrix")
    return where (m, what) + ": an opencv-matrix expected (type_id=\"opencv-matrix\")";
  double rows = 0, cols = 0;
  if (Error e = real_field (m, "rows", &rows))
    return where (m, what) + ": " + e.message;
  if (Error e = real_field (m, "cols", &cols))
    return where (m, what) + ": " + e.message;
  if (!integral (rows, 1, kDpmMaxFilterSide))
    return where (m, what) + ": <rows> = " + std::to_string (rows) + " is not in [1, " +
           std::to_string (kDpmMaxFilterSide) + "]";
  if (!integral (cols, kDpmDims, kDpmMaxFilterSide * kDpmDims) || static_cast<int> (cols) % kDpmDims != 0)
    return where (m, what) + ": <cols> = " + std::to_string (cols) + " is not a multiple of " +
           std::to_string (kDpmDims) + " (cells of " + std::to_string (kDpmDims) + " features) in [" +
           std::to_string (kDpmDims) + ", " + std::to_string (kDpmMaxFilterSide * kDpmDims) + "]";
  const xmlNode *dt = xml::child (m, "dt");
  std::vector<std::string> dtt = xml::tokens (dt, 2);
  if (!dt || dtt.size () != 1 || dtt[0] != "d")
    return where (m, what) + ": <dt> must be 'd' (doubles), as cv::dpm reads them";
  const xmlNode *data = xml::child (m, "data");
  if (!data)
    return where (m, what) + ": no <data>";
  f->rows = static_cast<int> (rows);
  f->cols = static_cast<int> (cols) / kDpmDims;
  const size_t n = static_cast<size_t> (f->rows) * f->cols * kDpmDims;
  if (*total + n > kDpmMaxCoefficients)
    return where (m, what) + ": the filters hold more than " + std::to_string (kDpmMaxCoefficients) +
           " coefficients together";
  *total += n;
  if (Error e = numbers (data, what + "><data", n, &f->coef))
    return e;
  if (f->coef.size () != n)
    return where (data, what + "><data") + " holds " + std::to_string (f->coef.size ()) + " values, not rows x cols (" +
           std::to_string (n) + ")";
  return {};
}

Error filters (const xmlNode *root, const char *name, size_t count, std::vector<DpmFilter> *out,
                     size_t *total) {
  std::vector<const xmlNode *> it;
  if (Error e = items (root, name, count, &it))
    return e;
  out->resize (count);
  for (size_t i = 0; i < count; i++)
    if (Error e = filter (it[i], name_of (name, i) + "_", &(*out)[i], total))
      return e;
  return {};
}

// A sequence of `count` <_> items of lo..hi numbers each.
Error vectors (const xmlNode *root, const char *name, size_t count, size_t lo, size_t hi,
                     std::vector<std::vector<double>> *out) {
  std::vector<const xmlNode *> it;
  if (Error e = items (root, name, count, &it))
    return e;
  out->resize (count);
  for (size_t i = 0; i < count; i++) {
    const std::string what = name_of (name, i) + "_";
    if (Error e = numbers (it[i], what, hi, &(*out)[i]))
      return e;
    if ((*out)[i].size () < lo)
      return where (it[i], what) + " holds " + std::to_string ((*out)[i].size ()) + " values, not " +
             (lo == hi ? std::to_string (lo) : std::to_string (lo) + " to " + std::to_string (hi));
  }
  return {};
}

} // namespace

bool is_dpm_storage (const xmlNode *root) {
  return xml::is_elem (root, "opencv_storage") && xml::child (root, "RootFilters") != nullptr;
}

Error read_dpm_storage (const xmlNode *root, DpmModel *out) {
  if (!is_dpm_storage (root))
    return "not a cv::dpm model (<opencv_storage> with <RootFilters>)";
  DpmModel m;
  int ncomp = 0, nfeat = 0;
  if (Error e = int_field (root, "SBin", kDpmMinSbin, kDpmMaxSbin, &m.sbin))
    return e;
  if (m.sbin % 2 != 0)
    return where (xml::child (root, "SBin"), "SBin") + " = " + std::to_string (m.sbin) +
           " is odd (the part levels have cells of SBin / 2 pixels)";
  if (Error e = int_field (root, "Interval", 1, kDpmMaxInterval, &m.interval))
    return e;
  if (Error e = int_field (root, "MaxSizeX", 0, kDpmMaxPad, &m.pad_x))
    return e;
  if (Error e = int_field (root, "MaxSizeY", 0, kDpmMaxPad, &m.pad_y))
    return e;
  if (Error e = int_field (root, "NumComponents", 1, kDpmMaxComponents, &ncomp))
    return e;
  if (Error e = int_field (root, "NumFeatures", 0, 1 << 20, &nfeat))
    return e;
  if (nfeat != kDpmDims)
    return where (xml::child (root, "NumFeatures"), "NumFeatures") + " = " + std::to_string (nfeat) +
           ": only cv::dpm's 32 features per cell are supported";
  if (Error e = real_field (root, "ScoreThreshold", &m.threshold))
    return e;
  m.threshold = static_cast<float> (m.threshold); // a float in cv::dpm
  Error e;
  std::vector<double> v;
  const xmlNode *n;
  if ((e = component_numbers (root, "Bias", ncomp, &v, &n)))
    return e;
  m.components.resize (ncomp);
  for (int c = 0; c < ncomp; c++)
    m.components[c].bias = static_cast<float> (v[c]);
  if ((e = component_numbers (root, "NumParts", ncomp, &v, &n)))
    return e;
  size_t nparts = 0;
  for (int c = 0; c < ncomp; c++) {
    if (v[c] == std::floor (v[c]) && v[c] > kDpmMaxParts)
      return where (n, "NumParts") + "[" + std::to_string (c) + "] = " + number_text (v[c]) +
             " is over the cap of " + std::to_string (kDpmMaxParts) + " parts a component (models/README.md)";
    if (!integral (v[c], 0, kDpmMaxParts))
      return where (n, "NumParts") + "[" + std::to_string (c) + "] = " + std::to_string (v[c]) +
             " is not an integer in [0, " + std::to_string (kDpmMaxParts) + "]";
    m.components[c].parts.resize (static_cast<size_t> (v[c]));
    nparts += m.components[c].parts.size ();
  }
  if (nparts > static_cast<size_t> (kDpmMaxTotalParts))
    return where (n, "NumParts") + ": " + std::to_string (nparts) + " parts in all, over the cap of " +
           std::to_string (kDpmMaxTotalParts) + " for every component's together (models/README.md)";
  std::vector<DpmFilter> roots, parts;
  size_t total = 0;
  if ((e = filters (root, "RootFilters", ncomp, &roots, &total)))
    return e;
  if ((e = filters (root, "PartFilters", nparts, &parts, &total)))
    return e;
  std::vector<std::vector<double>> anchors, defs, loc;
  if ((e = vectors (root, "Anchor", nparts, 2, 3, &anchors)))
    return e;
  if ((e = vectors (root, "Deformation", nparts, 4, 4, &defs)))
    return e;
  if ((e = vectors (root, "LocationWeight", ncomp, 3, 3, &loc)))
    return e;
  size_t p = 0;
  for (int c = 0; c < ncomp; c++) {
    DpmComponent &comp = m.components[c];
    comp.root = std::move (roots[c]);
    for (int k = 0; k < 3; k++)
      comp.location[k] = loc[c][k];
    for (DpmPart &part : comp.parts) {
      part.filter = std::move (parts[p]);
      for (int k = 0; k < 2; k++)
        if (std::fabs (anchors[p][k]) > kDpmMaxAnchor)
          return "<Anchor>[" + std::to_string (p) + "] = " + std::to_string (anchors[p][k]) +
                 " is farther than " + std::to_string (kDpmMaxAnchor) + " cells";
      part.anchor_x = static_cast<int> (anchors[p][0]); // cv::dpm: (int) anchors[pId][0]
      part.anchor_y = static_cast<int> (anchors[p][1]);
      for (int k = 0; k < 4; k++)
        part.def[k] = defs[p][k];
      p++;
    }
  }
  *out = std::move (m);
  return {};
}

Error parse_dpm_xml (const std::string &text, DpmModel *out) {
  return xml::read_document (text, read_dpm_storage, out);
}

} // namespace gpudetect
