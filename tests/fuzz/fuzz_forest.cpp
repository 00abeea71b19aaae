// The random-forest cascade's file (families/forest/csv.cpp) over any bytes.
// Beyond "no crash": a refused file leaves the model untouched; a model that
// loads keeps every invariant the kernels index by (children after their
// parents and inside the tree, values inside the shrunk window, layer 0,
// stages over existing trees within the per-stage and total node caps, sums
// within +-2^30), and write_forest gives a text that loads to the identical
// model and writes back to the same text.
#include "fuzz.h"

#include "families/forest/model.h"

#include <cmath>
#include <cstring>

using namespace gpudetect;

static bool same (double a, double b) { return std::memcmp (&a, &b, sizeof a) == 0 || a == b; }

static void check_same (const ForestModel &a, const ForestModel &b) {
  FUZZ_CHECK (a.name == b.name, "name '%s' came back as '%s'", a.name.c_str (), b.name.c_str ());
  FUZZ_CHECK (a.window_width == b.window_width && a.window_height == b.window_height && a.shrink == b.shrink &&
                  a.levels_per_octave == b.levels_per_octave && a.blur == b.blur && same (a.threshold, b.threshold),
              "header");
  FUZZ_CHECK (a.nodes_per_tree == b.nodes_per_tree && a.nodes.size () == b.nodes.size () &&
                  a.stages.size () == b.stages.size (),
              "counts");
  for (size_t i = 0; i < a.nodes.size (); i++) {
    const ForestModel::Node &x = a.nodes[i], &y = b.nodes[i];
    FUZZ_CHECK (same (x.score, y.score) && same (x.threshold, y.threshold) && x.left == y.left && x.x1 == y.x1 &&
                    x.y1 == y.y1 && x.x2 == y.x2 && x.y2 == y.y2 && x.z1 == y.z1 && x.z2 == y.z2,
                "node %zu", i);
  }
  for (size_t i = 0; i < a.stages.size (); i++)
    FUZZ_CHECK (a.stages[i].first == b.stages[i].first && a.stages[i].last == b.stages[i].last &&
                    same (a.stages[i].threshold, b.stages[i].threshold),
                "stage %zu", i);
}

extern "C" int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size) {
  ForestModel m;
  m.name = "untouched";
  const std::string err = parse_forest (fuzz_text (data, size), &m).message;
  if (!err.empty ()) {
    FUZZ_CHECK (m.name == "untouched" && m.nodes.empty () && m.stages.empty (), "a refused model was partly filled "
                                                                                 "in: %s", err.c_str ());
    FUZZ_CHECK (err.size () < 400, "a message of %zu bytes", err.size ());
    return 0;
  }
  const int K = m.nodes_per_tree;
  FUZZ_CHECK (K >= 1 && K <= kForestMaxNodesPerTree && m.nodes.size () % K == 0 && m.trees () >= 1 &&
                  !m.stages.empty (),
              "%d nodes a tree, %zu nodes, %zu stages", K, m.nodes.size (), m.stages.size ());
  FUZZ_CHECK (m.shrink >= 1 && m.window_width % m.shrink == 0 && m.window_height % m.shrink == 0 &&
                  m.blur[0] == m.blur[2] && m.blur[0] + m.blur[1] + m.blur[2] == 16,
              "window, shrink or blur");
  for (size_t i = 0; i < m.nodes.size (); i++) {
    const ForestModel::Node &n = m.nodes[i];
    const int at = static_cast<int> (i % K);
    FUZZ_CHECK (n.left == -1 || (n.left > at && n.left + 1 < K), "node %zu: left %d", i, n.left);
    FUZZ_CHECK (n.x1 >= 0 && n.x2 >= 0 && n.y1 >= 0 && n.y2 >= 0 && n.x1 < m.cells_x () && n.x2 < m.cells_x () &&
                    n.y1 < m.cells_y () && n.y2 < m.cells_y () && n.z1 == 0 && n.z2 == 0,
                "node %zu outside the window", i);
    FUZZ_CHECK (std::isfinite (n.score) && std::isfinite (n.threshold), "node %zu", i);
  }
  double bound = 0;
  size_t device_nodes = 0;
  for (const ForestModel::Stage &s : m.stages) {
    FUZZ_CHECK (s.first >= 0 && s.first <= s.last && static_cast<size_t> (s.last) < m.trees (), "stage trees");
    FUZZ_CHECK ((s.last - s.first + 1) * K <= kForestMaxStageNodes, "stage nodes");
    FUZZ_CHECK (!std::isnan (s.threshold) && s.threshold <= kForestMaxSum, "stage threshold");
    device_nodes += static_cast<size_t> (s.last - s.first + 1) * K;
    double ml = 0;
    for (int t = s.first; t <= s.last; t++)
      for (int i = 0; i < K; i++)
        if (m.nodes[static_cast<size_t> (t) * K + i].left < 0)
          ml = std::max (ml, std::fabs (m.nodes[static_cast<size_t> (t) * K + i].score));
    bound += ml;
  }
  FUZZ_CHECK (bound <= kForestMaxSum && device_nodes <= kForestMaxDeviceNodes, "sum bound %g, %zu nodes", bound,
              device_nodes);
  const std::string written = write_forest (m);
  ForestModel back;
  const std::string err2 = parse_forest (written, &back).message;
  FUZZ_CHECK (err2.empty (), "the written model does not load: %s", err2.c_str ());
  check_same (m, back);
  FUZZ_CHECK (write_forest (back) == written, "writing the model again gives another text");
  return 0;
}
