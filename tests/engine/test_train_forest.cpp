// gpudetect-train-forest on synthetic data (synthetic_faces.h): it learns the
// pattern from labelled images and face-free textures; the model it writes
// reads back, the engine finds the pattern in images the training never saw
// and nothing in pattern-free ones; the same seed gives the same file with 1
// and 2 threads.
//
//   test-train-forest TRAINER
#include "check.h"
#include "dataset.h"
#include "detector.h"
#include "families/forest/model.h"
#include "synthetic_faces.h"

#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <unistd.h>

using namespace gpudetect;
using namespace gpudetect::train;
using namespace gpudetect::train::synthetic;

int main (int argc, char **argv) {
  if (argc != 2) {
    std::fprintf (stderr, "usage: test-train-forest TRAINER\n");
    return 2;
  }
  char tmpl[] = "/tmp/gpudetect-train-forest-XXXXXX";
  const char *dir = mkdtemp (tmpl);
  CHECK (dir != nullptr);
  if (!dir)
    return finish ();
  const std::string d = dir;
  const std::string e = write_data (d, 7, 120); // pixel tests need more negatives than LBP codes
  CHECK_MSG (e.empty (), "%s", e.c_str ());

  const std::string common = std::string (argv[1]) + " --data " + d +
                             " --stages 120 --negatives 1500 --positives-per-face 6 --candidates 128"
                             " --mine-levels-per-octave 8 --seed 3";
  CHECK (std::system ((common + " --threads 1 --out " + d + "/m1.forest > " + d + "/log1.txt").c_str ()) == 0);
  CHECK (std::system ((common + " --threads 2 --out " + d + "/m2.forest > " + d + "/log2.txt").c_str ()) == 0);
  const std::string m1 = slurp (d + "/m1.forest"), m2 = slurp (d + "/m2.forest");
  CHECK (!m1.empty ());
  CHECK_MSG (m1 == m2, "the same seed gave different models with 1 and 2 threads");

  ForestModel m;
  const std::string le = parse_forest (m1, &m).message;
  CHECK_MSG (le.empty (), "%s", le.c_str ());
  CHECK (m.stages.size () >= 2 && m.stages.size () <= 120); // it stops once no negative is left to mine
  CHECK (m.window_width == 20 && m.shrink == 2 && m.nodes_per_tree == 7);
  CHECK (m.threshold >= m.stages.back ().threshold);

  // Held-out scenes: found at IoU >= 0.5; nothing on pattern-free textures.
  const HeldOut h = held_out (d + "/m1.forest", 99);
  CHECK_MSG (h.error.empty (), "%s", h.error.c_str ());
  std::printf ("%zu stages; held-out: %d/%d patterns found, %d false positives in 24 images\n", m.stages.size (),
               h.found, h.faces, h.false_pos);
  CHECK_MSG (h.found >= h.faces * 8 / 10, "found %d of %d", h.found, h.faces);
  CHECK_MSG (h.false_pos <= 2, "%d false positives", h.false_pos);
  if (g_failed == 0)
    std::system (("rm -rf '" + d + "'").c_str ());
  return finish ();
}
