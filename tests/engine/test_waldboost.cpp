// WaldBoost model: the project's XML reads back what the writer wrote,
// malformed and hostile files are refused with a message naming the fault,
// LBP codes follow the documented bit order, a model whose table is indexed
// in the other order (lbpBitOrder="topLeftLow") scores every window as that
// order says, on the host and on the device, and the reference evaluation
// rejects, accepts early and runs the tail as the format defines.
#include "check.h"
#include "detector.h"
#include "families/waldboost/model.h"

#include <unistd.h>

#include <cmath>
#include <cstring>
#include <random>
#include <set>
#include <string>
#include <vector>

using namespace gpudetect;

static std::string replace (std::string s, const std::string &from, const std::string &to) {
  size_t p = s.find (from);
  if (p != std::string::npos)
    s.replace (p, from.size (), to);
  return s;
}

static WaldBoostModel sample_model (int stages, uint32_t seed) {
  std::mt19937 rng (seed);
  std::uniform_real_distribution<float> r (-2.f, 2.f);
  WaldBoostModel m;
  m.name = "test <&> \"model\"";
  m.window_width = 24;
  m.window_height = 20;
  m.threshold = 0.25;
  m.divisors = {8, 4, 4, 4};
  m.sync_first = 3;
  m.sync_step = 2;
  for (int i = 0; i < stages; i++) {
    WaldBoostModel::Stage s;
    s.w = 1 + i % 3;
    s.h = 1 + (i / 3) % 2;
    s.x = i % (24 - 3 * s.w + 1);
    s.y = (i * 7) % (20 - 3 * s.h + 1);
    for (float &v : s.response)
      v = r (rng);
    if (i < stages - 2)
      s.neg_t = -1.5 - 0.1 * i;
    if (i == 1)
      s.pos_t = 1e50; // beyond 1e30: never
    m.stages.push_back (s);
  }
  return m;
}

// Integral image (W+1) x (H+1) of a grey image, as OpenCV's cv::integral.
static std::vector<uint32_t> integral (const std::vector<uint8_t> &img, int w, int h, bool squares = false) {
  std::vector<uint32_t> s ((w + 1) * (h + 1), 0);
  for (int y = 0; y < h; y++) {
    uint32_t row = 0;
    for (int x = 0; x < w; x++) {
      const uint32_t p = img[y * w + x];
      row += squares ? p * p : p;
      s[(y + 1) * (w + 1) + x + 1] = s[y * (w + 1) + x + 1] + row;
    }
  }
  return s;
}

int main () {
  // Round trip: every value as written.
  {
    WaldBoostModel m = sample_model (40, 1), back;
    const std::string text = write_waldboost_xml (m);
    std::string err = parse_waldboost (text, &back).message;
    CHECK_MSG (err.empty (), "%s", err.c_str ());
    CHECK (back.name == m.name && back.window_width == 24 && back.window_height == 20);
    CHECK (back.threshold == 0.25 && back.divisors == m.divisors && back.sync_first == 3 && back.sync_step == 2);
    CHECK (back.stages.size () == m.stages.size ());
    bool same = back.stages.size () == m.stages.size ();
    for (size_t i = 0; same && i < m.stages.size (); i++) {
      const WaldBoostModel::Stage &a = m.stages[i], &b = back.stages[i];
      same = a.x == b.x && a.y == b.y && a.w == b.w && a.h == b.h && a.neg_t == b.neg_t &&
             std::memcmp (a.response.data (), b.response.data (), sizeof a.response) == 0;
      same = same && (i == 1 ? std::isinf (b.pos_t) : a.pos_t == b.pos_t);
    }
    CHECK_MSG (same, "stages differ after a round trip");
    CHECK (back.tail_start () == 38);
  }

  // Malformed and hostile files: refused, with the fault named.
  WaldBoostModel small = sample_model (3, 2);
  small.stages[0].response[0] = 1.5f;
  const std::string good = write_waldboost_xml (small);
  struct Bad {
    std::string text, expect;
  };
  const std::vector<Bad> bad = {
      {"", "empty"},
      {"<WaldBoostClassifier", "not well-formed"},
      {replace (good, "type=\"LBP\"", "type=\"HAAR\""), "type must be"},
      {replace (good, "imageSizeX=\"24\"", "imageSizeX=\"0\""), "imageSizeX"},
      {replace (good, "imageSizeX=\"24\"", "imageSizeX=\"99999999999\""), "imageSizeX"},
      {replace (good, "negT=\"-1.5\"", "negT=\"abc\""), "stage 0: missing or malformed negT"},
      {replace (good, "negT=\"-1.5\"", "negT=\"nan\""), "stage 0"},
      {replace (good, "positionX=\"0\"", "positionX=\"22\""), "stage 0: the LBP grid"},
      {replace (good, "blockWidth=\"1\"", "blockWidth=\"0\""), "stage 0: <LBPFeature>"},
      {replace (good, "binMappingType=\"NONE\"", "binMappingType=\"UNIFORM\""), "binMappingType"},
      {replace (good, "predictionValues=\"", "predictionValues=\"1 "), "257 values"},
      {replace (good, "predictionValues=\"1.5 ", "predictionValues=\"1e300 "), "prediction value 0"},
      {replace (good, "<stage ", "<bogus/><stage "), "unexpected element <bogus>"},
      {replace (good, "divisors=\"8 4 4 4\"", "divisors=\"8 0\""), "divisor"},
      {"<?xml version=\"1.0\"?><!DOCTYPE x [<!ENTITY a \"aaaa\">]><WaldBoostClassifier/>", "document type"},
      {"<WaldBoostClassifier type=\"LBP\" imageSizeX=\"24\" imageSizeY=\"24\"/>", "no <stage>"},
  };
  for (const Bad &b : bad) {
    WaldBoostModel m;
    std::string err = parse_waldboost (b.text, &m).message;
    CHECK_MSG (err.find (b.expect) != std::string::npos, "expected '%s', got '%s'", b.expect.c_str (), err.c_str ());
  }
  // A file whose responses could overflow the sum.
  {
    WaldBoostModel m = sample_model (2, 3), back;
    for (float &v : m.stages[0].response)
      v = 9e5f;
    std::string text = write_waldboost_xml (m);
    for (int i = 0; i < 1300; i++)
      text = replace (text, "</WaldBoostClassifier>",
                      text.substr (text.find ("  <stage "), text.find ("</stage>") + 9 - text.find ("  <stage ")) +
                          "</WaldBoostClassifier>");
    std::string err = parse_waldboost (text, &back).message;
    CHECK_MSG (err.find ("could sum beyond") != std::string::npos, "%s", err.c_str ());
  }

  // LBP codes: the documented bit order, from block sums computed pixel by pixel.
  {
    std::mt19937 rng (7);
    const int W = 40, H = 30;
    std::vector<uint8_t> img (W * H);
    for (uint8_t &p : img)
      p = static_cast<uint8_t> (rng () % 4 * 60); // few levels: many equal blocks, so >= is exercised
    const std::vector<uint32_t> ii = integral (img, W, H);
    int checked = 0, wrong = 0;
    for (int bw = 1; bw <= 3; bw++)
      for (int bh = 1; bh <= 3; bh++)
        for (int y = 0; y + 3 * bh <= H; y += 2)
          for (int x = 0; x + 3 * bw <= W; x += 3) {
            auto bsum = [&] (int i, int j) {
              int s = 0;
              for (int yy = 0; yy < bh; yy++)
                for (int xx = 0; xx < bw; xx++)
                  s += img[(y + j * bh + yy) * W + x + i * bw + xx];
              return s;
            };
            const int c = bsum (1, 1);
            const int order[8][2] = {{0, 0}, {1, 0}, {2, 0}, {2, 1}, {2, 2}, {1, 2}, {0, 2}, {0, 1}};
            int code = 0;
            for (int k = 0; k < 8; k++)
              code |= (bsum (order[k][0], order[k][1]) >= c ? 1 : 0) << (7 - k);
            checked++;
            wrong += code != waldboost_lbp_code (ii.data (), W + 1, x, y, bw, bh);
          }
    CHECK_MSG (wrong == 0, "%d of %d codes differ", wrong, checked);
  }

  // The table's bit order: the same predictionValues read as topLeftLow give
  // each code the value of its bits reversed, and windows that differ from
  // the default order's, as the reference evaluation and the device find.
  {
    std::string values;
    for (int c = 0; c < 256; c++)
      values += (c ? " " : "") + std::string (__builtin_popcount (c & 15) > __builtin_popcount (c >> 4) ? "1" : "-1");
    auto model_text = [&] (const char *order) {
      return std::string ("<WaldBoostClassifier imageSizeX=\"3\" imageSizeY=\"3\" type=\"LBP\" threshold=\"0\"") +
             (order ? std::string (" lbpBitOrder=\"") + order + "\"" : "") +
             "><stage posT=\"inf\" negT=\"-inf\"><HistogramWeakHypothesis predictionValues=\"" + values +
             "\"><LBPFeature positionX=\"0\" positionY=\"0\" blockWidth=\"1\" blockHeight=\"1\"/>"
             "</HistogramWeakHypothesis></stage></WaldBoostClassifier>";
    };
    WaldBoostModel high, low, named;
    CHECK (!parse_waldboost (model_text (nullptr), &high));
    CHECK (!parse_waldboost (model_text ("topLeftHigh"), &named));
    CHECK (!parse_waldboost (model_text ("topLeftLow"), &low));
    const Error bad = parse_waldboost (model_text ("clockwise"), &named);
    CHECK_MSG (bad.message.find ("lbpBitOrder") != std::string::npos, "%s", bad.message.c_str ());
    int reversed_differ = 0;
    for (int c = 0; c < 256; c++) {
      int r = 0;
      for (int b = 0; b < 8; b++)
        r |= ((c >> b) & 1) << (7 - b);
      CHECK (named.stages[0].response[c] == high.stages[0].response[c]);
      CHECK (low.stages[0].response[c] == high.stages[0].response[r]);
      reversed_differ += low.stages[0].response[c] != high.stages[0].response[c];
    }
    CHECK (reversed_differ == 186); // the codes whose two halves differ in their count of set bits

    // every 3x3 window of a random image (step 2, as the pyramid's first
    // level), by the reference and on the device
    std::mt19937 rng (11);
    const int W = 41, H = 31;
    std::vector<uint8_t> img (W * H);
    for (uint8_t &p : img)
      p = static_cast<uint8_t> (rng () % 256);
    const std::vector<uint32_t> ii = integral (img, W, H), sq = integral (img, W, H, true);
    const std::string dir = "/tmp/gpudetect-bitorder-" + std::to_string (getpid ());
    auto device_hits = [&] (const char *order) {
      std::set<std::pair<int, int>> hits;
      const std::string path = dir + (order ? std::string ("-") + order : std::string ("-default")) + ".xml";
      FILE *f = std::fopen (path.c_str (), "w");
      CHECK (f != nullptr);
      if (!f)
        return hits;
      const std::string text = model_text (order);
      std::fwrite (text.data (), 1, text.size (), f);
      std::fclose (f);
      DetectorConfig cfg;
      cfg.model = path;
      cfg.min_neighbors = 0; // raw windows
      cfg.max_size = {3, 3};
      cfg.hit_capacity = 4096;
      std::unique_ptr<Detector> d;
      if (Error e = Detector::create (cfg, &d)) {
        CHECK_MSG (false, "%s", e.message.c_str ());
        return hits;
      }
      Frame fr;
      fr.data = img.data ();
      fr.width = fr.stride = W;
      fr.height = H;
      FrameResult r;
      CHECK (!d->detect (fr, &r));
      for (const RawHit &h : r.hits)
        if (h.level == 0) // scale 1.1 still rounds the window to 3 pixels: a second level
          hits.insert ({h.rect.x, h.rect.y});
      std::printf ("%s: %zu raw windows on the device, %zu objects\n", order ? order : "default", r.hits.size (),
                   r.objects.size ());
      std::remove (path.c_str ());
      return hits;
    };
    std::set<std::pair<int, int>> ref_high, ref_low;
    for (int y = 0; y + 3 <= H; y += 2)
      for (int x = 0; x + 3 <= W; x += 2) {
        const uint32_t *o = ii.data () + y * (W + 1) + x, *q = sq.data () + y * (W + 1) + x;
        if (waldboost_evaluate (high, o, q, W + 1, waldboost_final_threshold_arg (high)).hit)
          ref_high.insert ({x, y});
        if (waldboost_evaluate (low, o, q, W + 1, waldboost_final_threshold_arg (low)).hit)
          ref_low.insert ({x, y});
      }
    std::printf ("reference: %zu windows (default order), %zu (topLeftLow)\n", ref_high.size (), ref_low.size ());
    CHECK (!ref_high.empty () && !ref_low.empty () && ref_high != ref_low);
    CHECK_MSG (device_hits (nullptr) == ref_high, "default order: the device's windows differ from the reference's");
    CHECK_MSG (device_hits ("topLeftLow") == ref_low, "topLeftLow: the device's windows differ from the reference's");
  }

  // Evaluation: rejection below negT, early acceptance above posT, the tail,
  // the final threshold, and flat windows.
  {
    WaldBoostModel m;
    m.window_width = m.window_height = 3;
    for (int i = 0; i < 4; i++) {
      WaldBoostModel::Stage s; // 1x1 blocks at (0, 0): the code of a flat window is 255
      s.response.fill (0.f);
      m.stages.push_back (s);
    }
    std::vector<uint8_t> flat (9, 100);
    const std::vector<uint32_t> ii = integral (flat, 3, 3), sq = integral (flat, 3, 3, true);
    auto run = [&] (double gamma) { return waldboost_evaluate (m, ii.data (), sq.data (), 4, waldboost_final_threshold (gamma, false)); };
    m.stages[0].response[255] = 1.0f;
    m.stages[1].response[255] = -0.75f;
    m.stages[2].response[255] = 0.5f;
    m.stages[3].response[255] = 0.125f;
    WaldBoostVerdict v = run (0.875);
    CHECK (v.hit && v.stages == 4 && v.sum_q == waldboost_fixed (0.875));
    CHECK (!run (0.876).hit);
    m.stages[1].neg_t = 0.3; // 1 - 0.75 < 0.3: rejected at stage 1
    v = run (0);
    CHECK (!v.hit && v.stages == 2);
    m.stages[1].neg_t = 0.25; // not below: goes on
    CHECK (run (0).stages == 4);
    m.stages[2].pos_t = 0.7; // 0.75 > 0.7: accepted early, whatever gamma
    v = run (100);
    CHECK (v.hit && v.stages == 3);
    CHECK (m.tail_start () == 3);
    m.min_std_dev = 0.5; // a flat window is refused before any stage
    v = run (0);
    CHECK (!v.hit && v.stages == 0);
    CHECK (waldboost_final_threshold (-6, true) == waldboost_fixed (-6) + 1);
  }
  return finish ();
}
