// cv::dpm's model files: inriaperson.xml (Debian's opencv-doc) and the made
// test model load with the values the files hold, as cv::dpm reads them (bias
// and threshold as floats, anchors truncated); the registry makes the family
// from them and the short name dpm-inriaperson finds the file; malformed
// files are refused with a message naming the element and its line; the
// plan has cv::dpm's levels.
//
//   test-dpm-model dpm-test.xml inriaperson.xml
#include "check.h"

#include "core/models.h"
#include "families/dpm/dpm.h"
#include "families/registry.h"

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>

using namespace gpudetect;

namespace {

std::string read (const std::string &path) {
  std::ifstream f (path, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf ();
  return s.str ();
}

// A one-component model: a 1 x 2 root, a 1 x 1 part.
std::string tiny (const std::string &replace_from = "", const std::string &replace_to = "") {
  std::string zeros32;
  for (int i = 0; i < 32; i++)
    zeros32 += "0.5 ";
  std::string s = "<?xml version=\"1.0\"?>\n<opencv_storage>\n<SBin>8</SBin>\n<Interval>5</Interval>\n"
                  "<MaxSizeX>2</MaxSizeX>\n<MaxSizeY>1</MaxSizeY>\n<NumComponents>1</NumComponents>\n"
                  "<NumFeatures>32</NumFeatures>\n<ScoreThreshold>-0.5</ScoreThreshold>\n<Bias>\n-1.25 \n</Bias>\n"
                  "<RootFilters>\n<_ type_id=\"opencv-matrix\">\n<rows>1</rows>\n<cols>64</cols>\n<dt>d</dt>\n<data>\n" +
                  zeros32 + zeros32 + "</data></_>\n</RootFilters>\n<PartFilters>\n<_ type_id=\"opencv-matrix\">\n"
                  "<rows>1</rows>\n<cols>32</cols>\n<dt>d</dt>\n<data>\n" +
                  zeros32 + "</data></_>\n</PartFilters>\n<Anchor>\n<_>\n1.9 -0.5 \n</_>\n</Anchor>\n"
                  "<Deformation>\n<_>\n0.1 0 0.1 0 \n</_>\n</Deformation>\n<NumParts>\n1.000000 \n</NumParts>\n"
                  "<LocationWeight>\n<_>\n0 -0.2 0.2 \n</_>\n</LocationWeight>\n</opencv_storage>\n";
  if (!replace_from.empty ()) {
    const size_t at = s.find (replace_from);
    if (at == std::string::npos)
      return "(not found: " + replace_from + ")";
    s.replace (at, replace_from.size (), replace_to);
  }
  return s;
}

void expect_error (const std::string &text, const std::string &what) {
  DpmModel m;
  m.sbin = 6;
  const std::string e = parse_dpm_xml (text, &m).message;
  CHECK_MSG (!e.empty () && e.find (what) != std::string::npos, "expected an error with '%s', got '%s'", what.c_str (),
             e.c_str ());
  CHECK (m.sbin == 6 && m.components.empty ());
}

} // namespace

int main (int argc, char **argv) {
  CHECK_MSG (argc == 3, "usage: test-dpm-model dpm-test.xml inriaperson.xml");
  if (argc != 3)
    return finish ();
  // inriaperson.xml
  DpmModel m;
  const std::string e = parse_dpm_xml (read (argv[2]), &m).message;
  CHECK_MSG (e.empty (), "%s: %s", argv[2], e.c_str ());
  CHECK (m.sbin == 8 && m.interval == 5 && m.pad_x == 5 && m.pad_y == 15 && m.threshold == -0.5);
  CHECK (m.components.size () == 2);
  for (const DpmComponent &c : m.components) {
    CHECK (c.root.rows == 15 && c.root.cols == 5 && c.root.coef.size () == 15 * 5 * 32);
    CHECK (c.bias == static_cast<float> (-6.659495));
    CHECK (c.location[0] == 0 && c.location[1] == -0.190969 && c.location[2] == 0.191105);
    CHECK (c.parts.size () == 8);
    for (const DpmPart &p : c.parts)
      CHECK (p.filter.rows == 6 && p.filter.cols == 6);
  }
  if (m.components.size () == 2) {
    CHECK (m.components[0].root.at (0, 0, 0) == 0.068140 && m.components[0].root.at (0, 0, 1) == -0.009553);
    CHECK (m.components[0].root.at (0, 1, 0) == 0.007401); // the 33rd value of the first row: cell 1, feature 0
    const DpmPart &p = m.components[0].parts[0];
    CHECK (p.anchor_x == 2 && p.anchor_y == 0 && p.def[0] == 0.024528 && p.def[1] == -0.003497 &&
           p.def[2] == 0.041338 && p.def[3] == -0.008311);
    CHECK (m.components[1].parts[0].anchor_x == 2 && m.components[1].parts[1].anchor_y == 24);
  }
  // cv::dpm's pyramid for 640 x 480: 1 + floor (log (480 / 40) / log (2^(1/5))) = 18 images, 23 levels
  {
    const DpmPlan p = plan_dpm (640, 480, m);
    CHECK (p.max_scale == 18 && p.images.size () == 18 && p.levels.size () == 23 && p.generations == 4);
    if (p.levels.size () == 23) {
      CHECK (p.levels[0].cell == 4 && p.levels[5].cell == 8 && p.levels[0].image == 0 && p.levels[5].image == 0);
      CHECK (p.levels[0].feat_w == 160 - 2 + 12 && p.levels[0].feat_h == 120 - 2 + 32);
      CHECK (p.images[5].width == 320 && p.images[5].height == 240 && p.images[5].area);
      CHECK (p.images[1].width == 557 && p.images[1].height == 418); // cvRound (640 / 2^0.2), cvRound (480 / 2^0.2)
      CHECK (std::fabs (p.levels[22].scale - std::pow (2.0, -17 / 5.0)) < 1e-12);
    }
    CHECK (plan_dpm (39, 1000, m).levels.empty ()); // cv::dpm: too small to make a pyramid
    const DpmRange r = dpm_root_range (m, p, 5, 0);
    CHECK (r.x0 == 3 && r.y0 == 8 && r.x1 == (80 - 2 + 12) - 5 + 1 - 3 && r.y1 == (60 - 2 + 32) - 15 + 1 - 8);
    CHECK (dpm_root_range (m, p, 4, 0).x1 == 0); // part levels hold no roots
  }
  // the registry
  {
    std::unique_ptr<Family> f;
    const std::string le = load_family (argv[2], &f).message;
    CHECK_MSG (le.empty () && f && f->info ().family == "dpm", "%s", le.c_str ());
    if (f) {
      CHECK (f->info ().label == "person");
      CHECK (f->info ().window.width == 40 && f->info ().window.height == 120);
    }
    // the build tree's copy (models/meson.build) on the tests' search path, else opencv-doc's
    const std::string found = resolve_model ("dpm-inriaperson");
    CHECK_MSG (found.size () > 16 && found.compare (found.size () - 16, 16, "/inriaperson.xml") == 0 &&
                   read (found) == read (argv[2]),
               "dpm-inriaperson -> '%s'", found.c_str ());
    // without the variable: build/models (the models folder beside the test's
    // folder, where the build copied it), before opencv-doc's
    setenv ("GPUDETECT_MODEL_PATH", "", 1);
    const std::string beside = resolve_model ("dpm-inriaperson");
    CHECK_MSG (beside.size () > 23 && beside.compare (beside.size () - 23, 23, "/models/inriaperson.xml") == 0 &&
                   read (beside) == read (argv[2]),
               "dpm-inriaperson -> '%s'", beside.c_str ());
  }
  // the made test model
  {
    DpmModel t;
    const std::string te = parse_dpm_xml (read (argv[1]), &t).message;
    CHECK_MSG (te.empty (), "%s: %s", argv[1], te.c_str ());
    CHECK (t.sbin == 8 && t.interval == 4 && t.pad_x == 6 && t.pad_y == 8 && t.threshold == 0.45f);
    CHECK (t.components.size () == 3);
    if (t.components.size () == 3) {
      CHECK (t.components[0].root.rows == 4 && t.components[0].root.cols == 6 && t.components[0].parts.size () == 3);
      CHECK (t.components[0].parts[1].filter.rows == 2 && t.components[0].parts[1].filter.cols == 4);
      CHECK (t.components[0].parts[2].anchor_x == 9 && t.components[0].parts[2].anchor_y == 3);
      CHECK (t.components[1].root.rows == 8 && t.components[1].root.cols == 4 && t.components[1].parts.size () == 2);
      CHECK (t.components[2].parts.empty () && t.components[2].location[2] == 0.2);
    }
  }
  // a small model, its values as cv::dpm reads them
  {
    DpmModel s;
    const std::string se = parse_dpm_xml (tiny (), &s).message;
    CHECK_MSG (se.empty (), "%s", se.c_str ());
    CHECK (s.components.size () == 1 && s.components[0].parts.size () == 1);
    if (!s.components.empty () && !s.components[0].parts.empty ()) {
      CHECK (s.components[0].parts[0].anchor_x == 1 && s.components[0].parts[0].anchor_y == 0); // (int) 1.9, (int) -0.5
      CHECK (s.components[0].root.rows == 1 && s.components[0].root.cols == 2);
    }
    // sequences written as <_> items
    CHECK (parse_dpm_xml (tiny ("<Bias>\n-1.25 \n</Bias>", "<Bias><_>-1.25</_></Bias>"), &s).message.empty ());
  }
  // malformed files: the element and its line
  expect_error ("<opencv_storage><SBin>8</SBin></opencv_storage>", "not a cv::dpm model");
  expect_error ("<opencv_storage><RootFilters/></opencv_storage>", "no <SBin>");
  expect_error (tiny ("<SBin>8</SBin>", "<SBin>7</SBin>"), "<SBin> (line 3) = 7 is odd");
  expect_error (tiny ("<SBin>8</SBin>", "<SBin>8.5</SBin>"), "<SBin> (line 3) = 8.5");
  expect_error (tiny ("<Interval>5</Interval>", "<Interval>0</Interval>"), "<Interval> (line 4)");
  expect_error (tiny ("<NumFeatures>32</NumFeatures>", "<NumFeatures>31</NumFeatures>"),
                "only cv::dpm's 32 features");
  expect_error (tiny ("<NumComponents>1</NumComponents>", "<NumComponents>65</NumComponents>"),
                "<NumComponents> (line 7)");
  expect_error (tiny ("-1.25 ", "-1.25 2"), "<Bias> (line 10) holds more than 1 values");
  expect_error (tiny ("<ScoreThreshold>-0.5</", "<ScoreThreshold>x</"), "<ScoreThreshold> (line 9)[0] = 'x'");
  expect_error (tiny ("<ScoreThreshold>-0.5</", "<ScoreThreshold>1e7</"), "within +-1e6");
  expect_error (tiny ("<cols>64</cols>", "<cols>63</cols>"), "<RootFilters>[0]<_> (line 14): <cols> = 63");
  expect_error (tiny ("<rows>1</rows>", "<rows>65</rows>"), "<rows> = 65");
  expect_error (tiny ("<dt>d</dt>", "<dt>f</dt>"), "<dt> must be 'd'");
  expect_error (tiny ("<data>\n0.5", "<data>\n"), "holds 63 values, not rows x cols (64)");
  expect_error (tiny ("<data>\n0.5", "<data>\n0.5 0.5"), "holds more than 64 values");
  expect_error (tiny ("type_id=\"opencv-matrix\"", ""), "an opencv-matrix expected");
  expect_error (tiny ("1.000000 \n</NumParts>", "2.000000 \n</NumParts>"), "<PartFilters> (line 21) holds 1 items, not 2");
  expect_error (tiny ("1.000000 \n</NumParts>", "1.5 \n</NumParts>"), "<NumParts> (line 39)[0] = 1.5");
  expect_error (tiny ("0.1 0 0.1 0 ", "0.1 0 0.1"), "<Deformation>[0]<_> (line 35) holds 3 values, not 4");
  expect_error (tiny ("1.9 -0.5 ", "1.9 5000"), "farther than 1024 cells");
  expect_error (tiny ("0 -0.2 0.2 ", "0 -0.2"), "<LocationWeight>[0]<_> (line 43) holds 2 values, not 3");
  expect_error (tiny ("<Anchor>\n<_>\n1.9 -0.5 \n</_>", "<Anchor>\n<x>\n1.9 -0.5 \n</x>"),
                "<Anchor><x> (line 30): only <_> items expected");
  expect_error (tiny ("<LocationWeight>\n<_>\n0 -0.2 0.2 \n</_>\n</LocationWeight>", ""), "no <LocationWeight>");
  // every filter together is capped: 33 filters of 64 x 64 cells (16 roots, 17 parts) are 4325376 coefficients
  {
    std::string big = "<opencv_storage><SBin>8</SBin><Interval>5</Interval><MaxSizeX>2</MaxSizeX><MaxSizeY>1</MaxSizeY>"
                      "<NumComponents>16</NumComponents><NumFeatures>32</NumFeatures><ScoreThreshold>0</ScoreThreshold>"
                      "<Bias>";
    for (int c = 0; c < 16; c++)
      big += "0 ";
    big += "</Bias><NumParts>2 ";
    for (int c = 1; c < 16; c++)
      big += "1 ";
    big += "</NumParts><RootFilters>";
    std::string data;
    for (int i = 0; i < 64 * 64 * 32; i++)
      data += "0 ";
    const std::string filter =
        "<_ type_id=\"opencv-matrix\"><rows>64</rows><cols>2048</cols><dt>d</dt><data>" + data + "</data></_>";
    for (int c = 0; c < 16; c++)
      big += filter;
    big += "</RootFilters><PartFilters>";
    for (int p = 0; p < 17; p++)
      big += filter;
    big += "</PartFilters></opencv_storage>";
    expect_error (big, "the filters hold more than 4194304 coefficients together");
  }
  return finish ();
}
