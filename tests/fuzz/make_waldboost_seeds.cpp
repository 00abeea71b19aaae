// Writes the WaldBoost seed corpus (tests/fuzz/corpus/waldboost-xml/) with the
// project's own writer, write_waldboost_xml:
//   fuzz-make-waldboost-seeds DIR
// Small models (1 to 4 stages): with and without a <schedule>, thresholds
// that never decide (written as +-1e+50), a name that needs escaping, a
// flat-window limit, responses of every magnitude.
#include "families/waldboost/model.h"

#include <cmath>
#include <cstdio>
#include <fstream>
#include <random>

using namespace gpudetect;

static WaldBoostModel make (int stages, int window, unsigned seed) {
  std::mt19937 rng (seed);
  WaldBoostModel m;
  m.name = "seed";
  m.window_width = m.window_height = window;
  for (int i = 0; i < stages; i++) {
    WaldBoostModel::Stage s;
    s.w = 1 + static_cast<int> (rng () % (window / 3));
    s.h = 1 + static_cast<int> (rng () % (window / 3));
    s.x = static_cast<int> (rng () % (window - 3 * s.w + 1));
    s.y = static_cast<int> (rng () % (window - 3 * s.h + 1));
    for (float &r : s.response)
      r = static_cast<float> (static_cast<int> (rng () % 2001) - 1000) / 512.f;
    s.neg_t = i + 1 < stages ? -1.5 * (i + 1) : -INFINITY;
    s.pos_t = i == 0 ? INFINITY : 3.25 * (i + 1);
    m.stages.push_back (s);
  }
  return m;
}

int main (int argc, char **argv) {
  if (argc != 2) {
    std::fprintf (stderr, "usage: %s DIR\n", argv[0]);
    return 2;
  }
  const std::string dir = argv[1];
  auto put = [&] (const char *name, const WaldBoostModel &m) {
    std::ofstream (dir + "/" + name, std::ios::binary) << write_waldboost_xml (m);
  };
  put ("one-stage.xml", make (1, 6, 1));
  WaldBoostModel m = make (3, 24, 2);
  m.divisors = {8, 4, 4, 4};
  m.sync_first = 4;
  m.sync_step = 2;
  m.threshold = 0.5;
  put ("schedule.xml", m);
  m = make (4, 12, 3);
  m.name = "a <name> & \"quotes\"";
  m.min_std_dev = 12.5;
  m.threshold = -2.75;
  m.stages[1].neg_t = -INFINITY;
  m.stages[2].pos_t = 1e-3;
  m.stages[0].response[0] = 1e6f;
  m.stages[0].response[255] = -1.17549435e-38f;
  put ("escapes-and-limits.xml", m);
  m = make (2, 1024, 4);
  m.divisors = {2};
  put ("large-window.xml", m);
  return 0;
}
