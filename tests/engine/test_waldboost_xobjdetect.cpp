// OpenCV xobjdetect's WBDetector files: the model trained by OpenCV's own
// trainer (tests/data/xobjdetect-lfw-face.xml) loads and maps onto stages as
// models/README.md says (feature pool, stumps, thresholds); malformed,
// truncated and hostile files are refused naming the field; the registry
// tells such a file from a cascade; sums are single precision in stage order.
#include "check.h"
#include "families/registry.h"
#include "families/waldboost/model.h"

#include <cmath>
#include <string>
#include <unistd.h>
#include <vector>

using namespace gpudetect;

namespace {

std::string replace (std::string s, const std::string &from, const std::string &to) {
  size_t p = s.find (from);
  if (p != std::string::npos)
    s.replace (p, from.size (), to);
  return s;
}

// A WBDetector file as OpenCV's FileStorage writes it, two stumps.
const char *kTwo = R"(<?xml version="1.0"?>
<opencv_storage>
<waldboost>
  <waldboost_params>
    <weak_count>2</weak_count></waldboost_params>
  <thresholds>
    7.5000000000000000e+00 1.2850000000000000e+02</thresholds>
  <alphas>
    6.2648206949234009e-01 5.7111513614654541e-01</alphas>
  <polarities>
    -1 1</polarities>
  <cascade_thresholds>
    -6.2648206949234009e-01 -1.1975972652435303e+00</cascade_thresholds>
  <feature_indices>
    1 64</feature_indices></waldboost>
</opencv_storage>
)";

std::string write_temp (const std::string &text) {
  char path[] = "/tmp/gpudetect-xobj-XXXXXX.xml";
  const int fd = mkstemps (path, 4);
  if (fd < 0)
    return {};
  if (write (fd, text.data (), text.size ()) != static_cast<ssize_t> (text.size ()))
    std::perror ("write");
  close (fd);
  return path;
}

std::string parse (const std::string &text, WaldBoostModel *m = nullptr) {
  WaldBoostModel tmp;
  return parse_waldboost (text, m ? m : &tmp).message;
}

// Integral image of a flat w x h image of value v.
std::vector<uint32_t> flat_integral (int w, int h, uint32_t v) {
  std::vector<uint32_t> s ((w + 1) * (h + 1), 0);
  for (int y = 1; y <= h; y++)
    for (int x = 1; x <= w; x++)
      s[y * (w + 1) + x] = v * x * y;
  return s;
}

} // namespace

int main () {
  // The mapping, on a small file.
  {
    WaldBoostModel m;
    std::string e = parse (kTwo, &m);
    CHECK_MSG (e.empty (), "%s", e.c_str ());
    CHECK (m.format == WaldBoostModel::Format::XObjDetect && m.float_sums && m.threshold_exclusive);
    CHECK (m.window_width == 24 && m.window_height == 24 && m.stages.size () == 2 && m.name == "waldboost");
    // feature pool: x, then y, then block width, then block height
    CHECK (m.stages[0].x == 0 && m.stages[0].y == 0 && m.stages[0].w == 1 && m.stages[0].h == 2);
    CHECK (m.stages[1].x == 0 && m.stages[1].y == 1 && m.stages[1].w == 1 && m.stages[1].h == 1);
    // stump 0: polarity -1, threshold 7.5: codes 0..7 give +alpha, 8..255 -alpha
    const float a0 = static_cast<float> (6.2648206949234009e-01);
    CHECK (m.stages[0].response[0] == a0 && m.stages[0].response[7] == a0 && m.stages[0].response[8] == -a0 &&
           m.stages[0].response[255] == -a0);
    // stump 1: polarity +1, threshold 128.5: codes above it +alpha
    const float a1 = static_cast<float> (5.7111513614654541e-01);
    CHECK (m.stages[1].response[128] == -a1 && m.stages[1].response[129] == a1);
    CHECK (m.stages[0].neg_t == static_cast<float> (-6.2648206949234009e-01) && std::isinf (m.stages[0].pos_t));
    CHECK (m.threshold == static_cast<float> (-1.1975972652435303e+00) && m.tail_start () == 2);
    // sequences written as <_> elements read the same
    WaldBoostModel u;
    e = parse (replace (kTwo, "\n    1 64</feature_indices>", "<_>1</_><_>64</_></feature_indices>"), &u);
    CHECK_MSG (e.empty () && u.stages.size () == 2 && u.stages[1].y == 1, "%s", e.c_str ());
  }

  // The pool's last feature (8463: x 21, y 21, 1x1 blocks); one past it is refused.
  {
    WaldBoostModel m;
    std::string e = parse (replace (kTwo, "1 64</feature_indices>", "8463 0</feature_indices>"), &m);
    CHECK_MSG (e.empty () && m.stages[0].x == 21 && m.stages[0].y == 21 && m.stages[0].w == 1 && m.stages[0].h == 1,
               "%s", e.c_str ());
    e = parse (replace (kTwo, "1 64</feature_indices>", "8464 0</feature_indices>"));
    CHECK_MSG (e.find ("feature_indices>[0]") != std::string::npos && e.find ("8463") != std::string::npos, "%s",
               e.c_str ());
  }

  // Malformed and hostile files, each refused with a message naming the field.
  {
    const std::pair<std::string, std::string> bad[] = {
        {replace (kTwo, "<weak_count>2</weak_count>", "<weak_count>0</weak_count>"), "weak_count"},
        {replace (kTwo, "<weak_count>2</weak_count>", "<weak_count>2000000000</weak_count>"), "weak_count"},
        {replace (kTwo, "<weak_count>2</weak_count>", "<weak_count>99999</weak_count>"), "not weak_count"},
        {replace (kTwo, "<weak_count>2</weak_count>", "<weak_count>2.5</weak_count>"), "weak_count"},
        {replace (kTwo, "<weak_count>2</weak_count>", ""), "weak_count"},
        {replace (replace (kTwo, "<waldboost_params>", ""), "</waldboost_params>", ""), "WaldBoost"},
        {replace (kTwo, "    7.5000000000000000e+00 1.2850000000000000e+02", "7.5"), "<thresholds> holds 1"},
        {replace (kTwo, "    7.5000000000000000e+00 1.2850000000000000e+02", "7.5 1 2"), "<thresholds> holds 3"},
        {replace (kTwo, "5.7111513614654541e-01</alphas>", ".Inf</alphas>"), "alphas>[1]"},
        {replace (kTwo, "5.7111513614654541e-01</alphas>", ".Nan</alphas>"), "alphas>[1]"},
        {replace (kTwo, "5.7111513614654541e-01</alphas>", "1e300</alphas>"), "alphas>[1]"},
        {replace (kTwo, "-1.1975972652435303e+00</cascade", "-.Inf</cascade"), "cascade_thresholds>[1]"},
        {replace (kTwo, "-1 1</polarities>", "-1 0.5</polarities>"), "polarities>[1]"},
        {replace (kTwo, "1 64</feature_indices>", "-1 64</feature_indices>"), "feature_indices>[0]"},
        {replace (kTwo, "1 64</feature_indices>", "1 x</feature_indices>"), "feature_indices>[1]"},
        {replace (kTwo, "  <feature_indices>\n    1 64</feature_indices>", ""), "no <feature_indices>"},
        {replace (kTwo, "1 64</feature_indices>", "<_>1</_><_><_>2</_></_></feature_indices>"), "feature_indices"},
    };
    for (const auto &[text, want] : bad) {
      const std::string e = parse (text);
      CHECK_MSG (!e.empty () && e.find (want) != std::string::npos, "want '%s', got '%s'", want.c_str (), e.c_str ());
    }
    // truncated anywhere: refused, never a crash
    const std::string whole = kTwo;
    int refused = 0;
    for (size_t n = 0; n < whole.size () - 20; n += 7)
      refused += !parse (whole.substr (0, n)).empty ();
    CHECK (refused == static_cast<int> ((whole.size () - 20 + 6) / 7));
  }

  // Single-precision sums in stage order: 1 + 2^-24 rounds to 1 in float,
  // so the window with that sum is not above a final threshold of 1 (it
  // would be in exact arithmetic).  A flat window gives every LBP code 255.
  {
    std::string t = replace (kTwo, "6.2648206949234009e-01 5.7111513614654541e-01", "1 5.9604644775390625e-08");
    t = replace (t, "-1 1</polarities>", "1 1</polarities>");
    t = replace (t, "-6.2648206949234009e-01 -1.1975972652435303e+00", "0 1");
    WaldBoostModel m;
    std::string e = parse (t, &m);
    CHECK_MSG (e.empty (), "%s", e.c_str ());
    const std::vector<uint32_t> ii = flat_integral (24, 24, 100);
    const WaldBoostVerdict v =
        waldboost_evaluate (m, ii.data (), nullptr, 25, waldboost_final_threshold_arg (m));
    CHECK (v.stages == 2 && v.sum_f == 1.0f && !v.hit);
    const double user = 1.0; // a user's threshold is inclusive: sum >= 1
    CHECK (waldboost_evaluate (m, ii.data (), nullptr, 25, waldboost_final_threshold_arg (m, &user)).hit);
    CHECK (waldboost_final_threshold_float (1.0, true) == std::nextafter (1.0f, 2.0f));
    CHECK (waldboost_final_threshold_float (1.0, false) == 1.0f);
    CHECK (waldboost_final_threshold_float (0.1, false) >= 0.1 && waldboost_final_threshold_float (0.1, true) > 0.1);
  }

  // The model of tests/data, trained by OpenCV's trainer.
  {
    WaldBoostModel m;
    const std::string path = std::string (GPUDETECT_TEST_DATA) + "/xobjdetect-lfw-face.xml";
    std::string e = load_waldboost_file (path, &m).message;
    CHECK_MSG (e.empty (), "%s", e.c_str ());
    CHECK (m.stages.size () == 1024 && m.float_sums && m.tail_start () == 1024);
    // the registry: a WBDetector file, a cascade, and a storage of neither
    std::unique_ptr<Family> f;
    e = load_family (path, &f).message;
    CHECK_MSG (e.empty () && f && f->info ().family == "waldboost" &&
                   f->info ().description.find ("xobjdetect") != std::string::npos,
               "%s", e.c_str ());
    e = load_family ("/usr/share/opencv4/lbpcascades/lbpcascade_frontalface_improved.xml", &f).message;
    CHECK_MSG (e.empty () && f && f->info ().family == "cascade", "%s", e.c_str ());
    const std::string other = write_temp ("<?xml version=\"1.0\"?><opencv_storage><matrix><rows>1</rows></matrix>"
                                          "</opencv_storage>");
    e = load_family (other, &f).message;
    CHECK_MSG (e.find ("none of the formats") != std::string::npos && e.find ("xobjdetect") != std::string::npos,
               "%s", e.c_str ());
    unlink (other.c_str ());
    const std::string bad = write_temp (replace (kTwo, "<weak_count>2</weak_count>", "<weak_count>-3</weak_count>"));
    e = load_family (bad, &f).message;
    CHECK_MSG (e.find ("weak_count") != std::string::npos && e.find (bad) != std::string::npos, "%s", e.c_str ());
    unlink (bad.c_str ());
  }
  return finish ();
}
