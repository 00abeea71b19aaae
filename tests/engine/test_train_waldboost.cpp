// gpudetect-train-waldboost on synthetic data: it learns a pattern (a bright
// oval with two dark eyes and a dark mouth) from labelled images and
// face-free images of textured backgrounds; the model it writes reads back,
// the engine finds the pattern in images the training never saw and nothing
// in pattern-free ones; the same seed gives the same file with 1 and 2
// threads.
//
//   test-train-waldboost TRAINER
#include "check.h"
#include "dataset.h"
#include "synthetic_faces.h"
#include "detector.h"
#include "families/waldboost/model.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <unistd.h>

using namespace gpudetect;
using namespace gpudetect::train;
using namespace gpudetect::train::synthetic;


int main (int argc, char **argv) {
  if (argc != 2) {
    std::fprintf (stderr, "usage: test-train-waldboost TRAINER\n");
    return 2;
  }
  char tmpl[] = "/tmp/gpudetect-train-XXXXXX";
  const char *dir = mkdtemp (tmpl);
  CHECK (dir != nullptr);
  if (!dir)
    return finish ();
  const std::string d = dir;
  const std::string e = write_data (d, 7);
  CHECK_MSG (e.empty (), "%s", e.c_str ());

  std::string common = std::string (argv[1]) + " --data " + d +
                       " --stages 48 --negatives 1500 --positives-per-face 6 --max-block 4 --mine-windows 2e7 --seed 3";
  CHECK (std::system ((common + " --threads 1 --out " + d + "/m1.xml > " + d + "/log1.txt").c_str ()) == 0);
  CHECK (std::system ((common + " --threads 2 --out " + d + "/m2.xml > " + d + "/log2.txt").c_str ()) == 0);
  const std::string m1 = slurp (d + "/m1.xml"), m2 = slurp (d + "/m2.xml");
  CHECK (!m1.empty ());
  CHECK_MSG (m1 == m2, "the same seed gave different models with 1 and 2 threads");

  WaldBoostModel m;
  const std::string le = parse_waldboost (m1, &m).message;
  CHECK_MSG (le.empty (), "%s", le.c_str ());
  CHECK (m.stages.size () >= 2 && m.stages.size () <= 48); // it stops once no negative is left to mine
  CHECK (m.window_width == 24 && m.window_height == 24);
  CHECK (m.tail_start () > 0); // the sequential test rejects from the first stages

  // Held-out scenes: found at IoU >= 0.5; nothing on pattern-free textures.
  const HeldOut h = held_out (d + "/m1.xml", 99);
  CHECK_MSG (h.error.empty (), "%s", h.error.c_str ());
  std::printf ("held-out: %d/%d patterns found, %d false positives in 24 images\n", h.found, h.faces, h.false_pos);
  CHECK_MSG (h.found >= h.faces * 9 / 10, "found %d of %d", h.found, h.faces);
  CHECK_MSG (h.false_pos <= 2, "%d false positives", h.false_pos);
  if (g_failed == 0)
    std::system (("rm -rf '" + d + "'").c_str ());
  return finish ();
}
