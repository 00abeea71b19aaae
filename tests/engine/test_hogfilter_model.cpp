// The linear HOG filter model's file: a written model reads back identical
// (FHOG filters, and one over Dalal and Triggs' blocks); malformed files are
// refused with a message naming the line and column; every size is checked
// against its cap.
#include "check.h"

#include "families/hogfilter/model.h"

#include <cstring>

using namespace gpudetect;

namespace {

HogFilterModel small_model () {
  HogFilterModel m;
  m.name = "two filters";
  m.rows = 2;
  m.cols = 3;
  m.iou = 0.330082;
  m.covered = 0.788571;
  m.threshold = -0.25;
  for (int f = 0; f < 2; f++) {
    HogFilterModel::Filter fl;
    fl.bias = 3.2745 + f;
    for (int i = 0; i < kFhogDims * m.rows * m.cols; i++)
      fl.coef.push_back (static_cast<float> ((i * 37 + f * 11) % 101) / 97.0f - 0.5f);
    m.filters.push_back (fl);
  }
  return m;
}

// A hog-dt model of 3 x 2 block positions.
HogFilterModel dt_model () {
  HogFilterModel m;
  m.name = "people";
  m.features = HogFeatures::DalalTriggs;
  m.rows = 3;
  m.cols = 2;
  m.dt.win_sigma = 3.5;
  m.dt.l2hys = 0.25;
  m.dt.gamma = false;
  m.dt.scale = 1.1;
  m.dt.max_levels = 20;
  m.dt.group = 3;
  m.dt.group_eps = 0.3;
  m.threshold = 0.125;
  HogFilterModel::Filter fl;
  fl.bias = 6.6657915115356445;
  for (int i = 0; i < kDtDims * m.rows * m.cols; i++)
    fl.coef.push_back (static_cast<float> ((i * 41) % 103) / 97.0f - 0.5f);
  m.filters.push_back (fl);
  return m;
}

// The model's text with `from` replaced by `to` (first occurrence).
std::string edited (const std::string &from, const std::string &to, bool dt = false) {
  std::string s = write_hogfilter (dt ? dt_model () : small_model ());
  const size_t at = s.find (from);
  if (at == std::string::npos)
    return "(not found: " + from + ")";
  return s.replace (at, from.size (), to);
}

void expect_error (const std::string &text, const std::string &what) {
  HogFilterModel m;
  m.name = "untouched";
  const std::string e = parse_hogfilter (text, &m).message;
  CHECK_MSG (!e.empty () && e.find (what) != std::string::npos, "expected an error with '%s', got '%s'", what.c_str (),
             e.c_str ());
  CHECK (m.name == "untouched" && m.filters.empty ());
}

} // namespace

int main () {
  // round trip
  const HogFilterModel m = small_model ();
  const std::string text = write_hogfilter (m);
  CHECK (is_hogfilter_text (text));
  CHECK (!is_hogfilter_text ("gpudetect-forest 1\n"));
  CHECK (!is_hogfilter_text ("gpudetect-hogfilterx 1\n"));
  HogFilterModel back;
  const std::string err = parse_hogfilter (text, &back).message;
  CHECK_MSG (err.empty (), "%s", err.c_str ());
  CHECK (back.name == m.name && back.rows == 2 && back.cols == 3 && back.iou == m.iou && back.covered == m.covered &&
         back.threshold == m.threshold && back.cell == 8 && back.pyramid_down == 6 && back.min_level_width == 64 &&
         back.max_levels == 1000);
  CHECK (back.filters.size () == 2);
  for (size_t f = 0; f < back.filters.size (); f++) {
    CHECK (back.filters[f].bias == m.filters[f].bias);
    CHECK (back.filters[f].coef == m.filters[f].coef);
  }
  CHECK (write_hogfilter (back) == text);
  // CRLF line ends, comments and blank lines read the same
  std::string crlf;
  for (char c : text)
    crlf += c == '\n' ? std::string ("\r\n\n# a comment\r\n") : std::string (1, c);
  HogFilterModel b2;
  const std::string e2 = parse_hogfilter (crlf, &b2).message;
  CHECK_MSG (e2.empty (), "%s", e2.c_str ());
  CHECK (write_hogfilter (b2) == text);

  // errors name the line and column
  expect_error ("gpudetect-hogfilter 2\n", "line 1, column 21: version '2' is not supported");
  expect_error ("something else\n", "line 1: the first line must be 'gpudetect-hogfilter 1'");
  expect_error (edited ("cell 8", "cell 6"), "line 4, column 6: cells of 6 pixels are not supported (only 8)");
  expect_error (edited ("features fhog31", "features hog36"), "line 3, column 10: features 'hog36'");
  expect_error (edited ("filter-size 2 3", "filter-size 2 65"), "line 8, column 15: filter sizes must be integers");
  expect_error (edited ("filters 2", "filters 65"), "filters must be an integer from 1 to 64");
  expect_error (edited ("overlap 0.3", "overlap 1.3"), "line 9, column 9: overlap thresholds");
  expect_error (edited ("max-levels 1000", "max-levels 1001"), "max-levels must be an integer from 1 to 1000");
  expect_error (edited ("pyramid-down 6", "pyramid-down 2"), "pyramid-down must be an integer from 4 to 20");
  expect_error (edited ("name two filters\n", "colour blue\n"), "line 2, column 1: unknown key 'colour'");
  expect_error (edited ("filter 3.2745", "filter x"), "line 12, column 8: a filter's bias");
  expect_error (edited ("filters 2", "filters 3"), "the file ends after 2 of its 3 filters");
  {
    // a coefficient that is not a number: line 14 (the second coefficient line), column of its token
    std::string s = text;
    size_t line = 0, at = 0;
    while (line < 13)
      at = s.find ('\n', at) + 1, line++;
    const size_t sp = s.find (' ', at);
    s.replace (sp + 1, s.find (' ', sp + 1) - sp - 1, "nan");
    expect_error (s, "line 14, column " + std::to_string (sp - at + 2) + ": 'nan' is not a coefficient");
  }
  {
    // a row of the wrong length
    std::string s = text;
    size_t at = 0;
    for (int k = 0; k < 13; k++)
      at = s.find ('\n', at) + 1;
    s.insert (s.find ('\n', at), " 1");
    expect_error (s, "line 14: filter 0, dimension 0, row 1: 3 coefficients expected, found more");
  }
  expect_error (text + "filter 1\n", "unexpected 'filter' after the last filter");
  expect_error (edited ("filter-size 2 3\n", ""), "'filter-size ROWS COLS' must come before the first filter");
  expect_error (edited ("threshold -0.25", "threshold 1e7"), "the threshold must be a number");
  // Dalal and Triggs' features
  {
    const HogFilterModel d = dt_model ();
    const std::string dtext = write_hogfilter (d);
    HogFilterModel db;
    const std::string de = parse_hogfilter (dtext, &db).message;
    CHECK_MSG (de.empty (), "%s", de.c_str ());
    CHECK (db.features == HogFeatures::DalalTriggs && db.dims () == 36 && db.rows == 3 && db.cols == 2 &&
           db.dt.win_sigma == 3.5 && db.dt.l2hys == 0.25 && !db.dt.gamma && db.dt.scale == 1.1 &&
           db.dt.max_levels == 20 && db.dt.group == 3 && db.dt.group_eps == 0.3 && db.threshold == 0.125 &&
           db.dt.bins == 9 && db.dt.block == 16 && db.dt.block_stride == 8);
    CHECK (db.filters.size () == 1 && db.filters[0].bias == d.filters[0].bias &&
           db.filters[0].coef == d.filters[0].coef && db.filters[0].coef.size () == 36u * 3 * 2);
    CHECK (write_hogfilter (db) == dtext);
    CHECK (dtext.find ("pyramid-down") == std::string::npos && dtext.find ("overlap") == std::string::npos);
    expect_error (edited ("bins 9", "bins 18", true), "line 6, column 6: '18' orientation bins are not supported");
    expect_error (edited ("block 16 8", "block 8 8", true), "blocks of 8 pixels every 8 are not supported");
    expect_error (edited ("win-sigma 3.5", "win-sigma 0", true), "line 7, column 11: 'win-sigma' must be a number");
    expect_error (edited ("l2-hys 0.25", "l2-hys 2", true), "'l2-hys' must be a number above 0, at most 1");
    expect_error (edited ("scale 1.1\n", "scale 1\n", true), "'scale' must be a number from 1.01 to 4");
    expect_error (edited ("scale 1.1\n", "scale 1.001\n", true), "'scale' must be a number from 1.01 to 4");
    expect_error (edited ("gamma 0", "gamma 2", true), "gamma must be 1");
    expect_error (edited ("group 3 0.3\n", "group 3 1.5\n", true), "the group eps must be a number from 0 to 1");
    expect_error (edited ("filters 1", "filters 2", true), "hog-dt models hold one filter");
    expect_error (edited ("filter-size 3 2\n", "filter-size 3 2\noverlap 0.5 1\n", true),
                  "'overlap' applies to fhog31 features only");
    expect_error (edited ("overlap 0.33", "scale 1.2\noverlap 0.33"), "'scale' applies to hog-dt features only");
    expect_error (edited ("features fhog31\n", "pyramid-down 6\nfeatures hog-dt\n"),
                  "'features hog-dt' must come before 'pyramid-down'");
    expect_error (edited ("features fhog31\n", "max-levels 9\nfeatures hog-dt\n"),
                  "'features hog-dt' must come before 'max-levels'");
    // 36 dimensions of rows: a filter with FHOG's 31 ends early
    std::string cut = dtext;
    for (int k = 0; k < 5 * 3; k++)
      cut.erase (cut.find_last_of ('\n', cut.size () - 2) + 1);
    expect_error (cut, "the file ends in filter 0");
  }
  // a file cut anywhere is refused, never read past its end
  for (size_t n = 0; n + 1 < text.size (); n += 97) {
    HogFilterModel t;
    CHECK (!parse_hogfilter (text.substr (0, n), &t).message.empty ());
  }
  return finish ();
}
