// The filter model's file (models/README.md): a header of "key value..."
// lines, then each filter as a line "filter BIAS" followed by dims x rows
// lines of `cols` coefficients (31 dimensions of FHOG, or 36 of Dalal and
// Triggs' blocks: `features hog-dt`, whose keys come after it).  Sizes are checked against their caps before
// anything is allocated, and a line is split into at most one token more
// than it may hold, so that any input costs time and memory in proportion to
// its size.
#include "model.h"

#include "core/models.h"
#include "core/numbers.h"

#include <cmath>
#include <cstdint>
#include <cstring>

namespace gpudetect {

namespace {

constexpr char kMagic[] = "gpudetect-hogfilter";
constexpr int kVersion = 1;

struct Token {
  std::string text;
  size_t column = 0; // 1-based
};

struct Lines {
  ModelLines in;
  // The next line that is neither blank nor a comment, cut into at most
  // `max` tokens (the last holds the rest) at blanks (so that a value never
  // ends in a CR the writer could not write back); false at the end.
  bool next (std::vector<Token> *tokens, size_t max) {
    std::string line;
    if (!in.next (&line))
      return false;
    tokens->clear ();
    size_t i = 0;
    for (;;) {
      while (i < line.size () && is_model_blank (line[i]))
        i++;
      if (i >= line.size ())
        break;
      size_t j = i;
      if (tokens->size () + 1 == max)
        j = line.find_last_not_of (" \t\r") + 1;
      else
        while (j < line.size () && !is_model_blank (line[j]))
          j++;
      tokens->push_back ({line.substr (i, j - i), i + 1});
      i = j;
    }
    return true;
  }
  size_t number () const { return in.number (); }
};

// The header's keys and how many values each takes (0: any, the rest of the
// line).
const std::pair<const char *, size_t> kKeys[] = {
    {"name", 0},  {"features", 1},  {"cell", 1},      {"pyramid-down", 1}, {"min-level", 2}, {"max-levels", 1},
    {"block", 2}, {"bins", 1},      {"win-sigma", 1}, {"l2-hys", 1},       {"scale", 1},     {"gamma", 1},
    {"group", 2}, {"filter-size", 2}, {"overlap", 2}, {"threshold", 1},    {"filters", 1},
};

} // namespace

bool is_hogfilter_text (const std::string &text) {
  const size_t n = std::strlen (kMagic);
  return text.compare (0, n, kMagic) == 0 && (text.size () == n || text[n] == ' ' || text[n] == '\t' ||
                                              text[n] == '\r' || text[n] == '\n');
}

Error parse_hogfilter (const std::string &text, HogFilterModel *out) {
  Lines in{ModelLines (text)};
  std::vector<Token> t;
  auto at = [&] (const Token &k) {
    return "line " + std::to_string (in.number ()) + ", column " + std::to_string (k.column) + ": ";
  };
  auto line_at = [&] () { return "line " + std::to_string (in.number ()) + ": "; };
  if (!in.next (&t, 3) || t[0].text != kMagic)
    return "line 1: the first line must be '" + std::string (kMagic) + " " + std::to_string (kVersion) + "'";
  int version = 0;
  if (t.size () != 2 || !to_int (t[1].text, 0, 1 << 30, &version) || version != kVersion)
    return at (t.size () > 1 ? t[1] : t[0]) + "version " + (t.size () > 1 ? quoted (t[1].text) : "(none)") +
           " is not supported (this gpudetect reads version " + std::to_string (kVersion) + ")";
  HogFilterModel m;
  int nfilters = -1;
  bool have_size = false;
  std::string fhog_key; // a key read as FHOG's (before any 'features')
  // the header, up to the first filter
  for (;;) {
    if (!in.next (&t, 4))
      return "the file ends before its first filter (line " + std::to_string (in.number ()) + ")";
    const std::string &key = t[0].text;
    if (key == "filter")
      break;
    size_t values = SIZE_MAX;
    for (const auto &[name, n] : kKeys)
      if (key == name)
        values = n;
    if (values == SIZE_MAX)
      return at (t[0]) + "unknown key " + quoted (key);
    const bool dt = m.features == HogFeatures::DalalTriggs;
    if ((key == "pyramid-down" || key == "min-level" || key == "overlap") && dt)
      return at (t[0]) + "'" + key + "' applies to fhog31 features only";
    if ((key == "block" || key == "bins" || key == "win-sigma" || key == "l2-hys" || key == "gamma" ||
         key == "scale" || key == "group") &&
        !dt)
      return at (t[0]) + "'" + key + "' applies to hog-dt features only ('features hog-dt' before it)";
    if (key == "pyramid-down" || key == "min-level" || key == "overlap" || (key == "max-levels" && !dt))
      fhog_key = key;
    if (values && t.size () != values + 1)
      return line_at () + "'" + key + "' takes " + std::to_string (values) + " value" + (values > 1 ? "s" : "");
    // the key's two integers, from lo to hi (in `unit`), into *first and *second
    auto two_ints = [&] (int lo, int hi, int *first, int *second, const char *what, const char *unit) -> Error {
      for (int k = 0; k < 2; k++)
        if (!to_int (t[1 + k].text, lo, hi, k ? second : first))
          return at (t[1 + k]) + what + " must be integers from " + std::to_string (lo) + " to " +
                 std::to_string (hi) + " (" + unit + ")";
      return {};
    };
    if (key == "name") {
      if (t.size () < 2)
        return line_at () + "'name' takes a value";
      m.name = t[1].text;
      for (size_t k = 2; k < t.size (); k++)
        m.name += " " + t[k].text;
      if (m.name.size () > 256)
        return at (t[1]) + "the name is longer than 256 bytes";
    } else if (key == "features") {
      if (t[1].text == "hog-dt") {
        if (!fhog_key.empty ())
          return at (t[1]) + "'features hog-dt' must come before '" + fhog_key + "'";
        m.features = HogFeatures::DalalTriggs;
      } else if (t[1].text != "fhog31") {
        return at (t[1]) + "features " + quoted (t[1].text) + " are not supported (only 'fhog31' and 'hog-dt')";
      }
    } else if (key == "cell") {
      if (!to_int (t[1].text, 1, 64, &m.cell))
        return at (t[1]) + "the cell size must be an integer";
      if (m.cell != 8)
        return at (t[1]) + "cells of " + t[1].text + " pixels are not supported (only 8)";
    } else if (key == "pyramid-down") {
      if (!to_int (t[1].text, 4, 20, &m.pyramid_down))
        return at (t[1]) + "pyramid-down must be an integer from 4 to 20 (dlib's pyramid_down<N>)";
    } else if (key == "min-level") {
      if (Error e = two_ints (8, kHogMaxMinLevel, &m.min_level_width, &m.min_level_height, "min-level sizes", "pixels"))
        return e;
    } else if (key == "max-levels") {
      if (!to_int (t[1].text, 1, kHogMaxLevels, dt ? &m.dt.max_levels : &m.max_levels))
        return at (t[1]) + "max-levels must be an integer from 1 to " + std::to_string (kHogMaxLevels);
    } else if (key == "block") {
      if (!to_int (t[1].text, 1, 256, &m.dt.block) || !to_int (t[2].text, 1, 256, &m.dt.block_stride))
        return line_at () + "'block SIDE STRIDE' takes two integers (pixels)";
      if (m.dt.block != 16 || m.dt.block_stride != 8)
        return at (t[1]) + "blocks of " + t[1].text + " pixels every " + t[2].text +
               " are not supported (only 16 every 8)";
    } else if (key == "bins") {
      if (!to_int (t[1].text, 1, 64, &m.dt.bins) || m.dt.bins != 9)
        return at (t[1]) + quoted (t[1].text) + " orientation bins are not supported (only 9)";
    } else if (key == "win-sigma" || key == "l2-hys" || key == "scale") {
      double v = 0;
      const bool sigma = key == "win-sigma", hys = key == "l2-hys";
      // scale: from 1.01, as gpudetect's scale-factor, so that the levels (up
      // to max-levels of them) shrink and their planes together stay within
      // about 50 frames (OpenCV's default: 1.05)
      if (!to_double (t[1].text, &v) || (sigma && !(v > 0 && v <= 1000)) || (hys && !(v > 0 && v <= 1)) ||
          (!sigma && !hys && !(v >= kDtMinScale && v <= 4)))
        return at (t[1]) + "'" + key + "' must be a number " +
               (sigma ? "above 0, at most 1000" : hys ? "above 0, at most 1" : "from 1.01 to 4");
      (sigma ? m.dt.win_sigma : hys ? m.dt.l2hys : m.dt.scale) = v;
    } else if (key == "gamma") {
      int g = 0;
      if (!to_int (t[1].text, 0, 1, &g))
        return at (t[1]) + "gamma must be 1 (square roots of the grey levels) or 0";
      m.dt.gamma = g == 1;
    } else if (key == "group") {
      if (!to_int (t[1].text, 0, 1000, &m.dt.group))
        return at (t[1]) + "the group threshold must be an integer from 0 to 1000";
      if (!to_double (t[2].text, &m.dt.group_eps) || m.dt.group_eps < 0 || m.dt.group_eps > 1)
        return at (t[2]) + "the group eps must be a number from 0 to 1";
    } else if (key == "filter-size") {
      if (Error e = two_ints (1, kHogMaxFilterSide, &m.rows, &m.cols, "filter sizes", "cells"))
        return e;
      have_size = true;
    } else if (key == "overlap") {
      for (int k = 0; k < 2; k++) {
        double v = 0;
        if (!to_double (t[1 + k].text, &v) || v < 0 || v > 1)
          return at (t[1 + k]) + "overlap thresholds must be numbers from 0 to 1";
        (k ? m.covered : m.iou) = v;
      }
    } else if (key == "threshold") {
      if (!to_double (t[1].text, &m.threshold) || std::fabs (m.threshold) > kHogMaxCoef)
        return at (t[1]) + "the threshold must be a number of at most 1e6 in magnitude";
    } else if (key == "filters") {
      if (!to_int (t[1].text, 1, kHogMaxFilters, &nfilters))
        return at (t[1]) + "filters must be an integer from 1 to " + std::to_string (kHogMaxFilters);
    }
  }
  if (!have_size)
    return line_at () + "'filter-size ROWS COLS' must come before the first filter";
  if (nfilters < 0)
    return line_at () + "'filters N' must come before the first filter";
  if (m.features == HogFeatures::DalalTriggs && nfilters != 1)
    return line_at () + "hog-dt models hold one filter (OpenCV's SVM), not " + std::to_string (nfilters);
  const size_t lines = static_cast<size_t> (m.dims ()) * m.rows;
  for (int f = 0; f < nfilters; f++) {
    if (f > 0 && !in.next (&t, 3))
      return "the file ends after " + std::to_string (f) + " of its " + std::to_string (nfilters) + " filters";
    if (t[0].text != "filter")
      return at (t[0]) + "expected 'filter BIAS' (filter " + std::to_string (f) + "), found " + quoted (t[0].text);
    HogFilterModel::Filter fl;
    if (t.size () != 2 || !to_double (t[1].text, &fl.bias) || std::fabs (fl.bias) > kHogMaxCoef)
      return (t.size () > 1 ? at (t[1]) : line_at ()) + "a filter's bias must be a number of at most 1e6 in magnitude";
    fl.coef.reserve (lines * m.cols);
    for (size_t r = 0; r < lines; r++) {
      if (!in.next (&t, static_cast<size_t> (m.cols) + 1))
        return "the file ends in filter " + std::to_string (f) + " (line " + std::to_string (in.number ()) + ")";
      if (t.size () != static_cast<size_t> (m.cols))
        return line_at () + "filter " + std::to_string (f) + ", dimension " + std::to_string (r / m.rows) + ", row " +
               std::to_string (r % m.rows) + ": " + std::to_string (m.cols) + " coefficients expected, found " +
               (t.size () > static_cast<size_t> (m.cols) ? "more" : std::to_string (t.size ()));
      for (const Token &k : t) {
        double v = 0;
        if (!to_double (k.text, &v) || std::fabs (v) > kHogMaxCoef)
          return at (k) + quoted (k.text) + " is not a coefficient (a number of at most 1e6 in magnitude)";
        fl.coef.push_back (static_cast<float> (v));
      }
    }
    m.filters.push_back (std::move (fl));
  }
  if (in.next (&t, 2))
    return at (t[0]) + "unexpected " + quoted (t[0].text) + " after the last filter";
  *out = std::move (m);
  return {};
}

std::string write_hogfilter (const HogFilterModel &m) {
  std::string s = std::string (kMagic) + " " + std::to_string (kVersion) + "\n";
  if (!m.name.empty ())
    s += "name " + m.name + "\n";
  if (m.features == HogFeatures::DalalTriggs) {
    const DtHogParams &p = m.dt;
    s += "features hog-dt\n";
    s += "cell " + std::to_string (m.cell) + "\n";
    s += "block " + std::to_string (p.block) + " " + std::to_string (p.block_stride) + "\n";
    s += "bins " + std::to_string (p.bins) + "\n";
    s += "win-sigma " + number_text (p.win_sigma) + "\n";
    s += "l2-hys " + number_text (p.l2hys) + "\n";
    s += "gamma " + std::to_string (p.gamma ? 1 : 0) + "\n";
    s += "scale " + number_text (p.scale) + "\n";
    s += "max-levels " + std::to_string (p.max_levels) + "\n";
    s += "group " + std::to_string (p.group) + " " + number_text (p.group_eps) + "\n";
    s += "filter-size " + std::to_string (m.rows) + " " + std::to_string (m.cols) + "\n";
  } else {
    s += "features fhog31\n";
    s += "cell " + std::to_string (m.cell) + "\n";
    s += "pyramid-down " + std::to_string (m.pyramid_down) + "\n";
    s += "min-level " + std::to_string (m.min_level_width) + " " + std::to_string (m.min_level_height) + "\n";
    s += "max-levels " + std::to_string (m.max_levels) + "\n";
    s += "filter-size " + std::to_string (m.rows) + " " + std::to_string (m.cols) + "\n";
    s += "overlap " + number_text (m.iou) + " " + number_text (m.covered) + "\n";
  }
  s += "threshold " + number_text (m.threshold) + "\n";
  s += "filters " + std::to_string (m.filters.size ()) + "\n";
  for (const HogFilterModel::Filter &f : m.filters) {
    s += "filter " + number_text (f.bias) + "\n";
    for (size_t i = 0; i < f.coef.size (); i++)
      s += float_text (f.coef[i]) + ((i + 1) % m.cols == 0 ? "\n" : " ");
  }
  return s;
}

} // namespace gpudetect
