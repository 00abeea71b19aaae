// OpenCV cascade XML (families/cascade/xml.cpp) over any bytes.  Beyond "no
// crash": a cascade that loads satisfies every invariant the engine indexes
// by (trees inside their stage, nodes and leaves inside their tree, children
// that only point forward, features that exist and lie inside the window),
// and the code generators that come next accept it.
#include "fuzz.h"

#include "families/cascade/codegen.h"
#include "families/cascade/model.h"

using namespace gpudetect;

static void check_model (const CascadeModel &m) {
  const int W = m.window_width, H = m.window_height;
  FUZZ_CHECK (W >= 1 && W <= 1024 && H >= 1 && H <= 1024, "window %dx%d", W, H);
  FUZZ_CHECK (!m.stages.empty (), "no stages");
  size_t next_tree = 0;
  for (const CascadeModel::Stage &s : m.stages) {
    FUZZ_CHECK (s.first_tree >= 0 && static_cast<size_t> (s.first_tree) == next_tree && s.ntrees > 0,
                "stage trees %d+%d", s.first_tree, s.ntrees);
    next_tree += s.ntrees;
  }
  FUZZ_CHECK (next_tree == m.trees.size (), "stages cover %zu of %zu trees", next_tree, m.trees.size ());
  for (const CascadeModel::Tree &t : m.trees) {
    FUZZ_CHECK (t.node_count >= 1 && t.node_count <= m.max_nodes_per_tree, "tree of %d nodes", t.node_count);
    FUZZ_CHECK (t.first_node >= 0 && static_cast<size_t> (t.first_node) + t.node_count <= m.nodes.size (),
                "nodes out of range");
    FUZZ_CHECK (t.first_leaf >= 0 && static_cast<size_t> (t.first_leaf) + t.node_count + 1 <= m.leaves.size (),
                "leaves out of range");
    for (int i = 0; i < t.node_count; i++) {
      const CascadeModel::Node &n = m.nodes[t.first_node + i];
      for (int c : {n.left, n.right})
        FUZZ_CHECK (c > 0 ? c > i && c < t.node_count : -c <= t.node_count, "child %d of node %d", c, i);
      FUZZ_CHECK (n.feature >= 0 && static_cast<size_t> (n.feature) < m.feature_count (), "feature %d",
                  n.feature);
    }
  }
  if (m.feature_type == CascadeModel::FeatureType::Lbp) {
    FUZZ_CHECK (m.ncategories == 256 && m.haar_features.empty (), "LBP model with Haar features");
    for (const CascadeModel::LbpFeature &f : m.lbp_features)
      FUZZ_CHECK (f.x >= 0 && f.y >= 0 && f.w > 0 && f.h > 0 && f.x + 3 * f.w <= W && f.y + 3 * f.h <= H,
                  "LBP block outside the window");
  } else {
    FUZZ_CHECK (m.ncategories == 0 && m.lbp_features.empty (), "Haar model with LBP features");
    for (const CascadeModel::HaarFeature &f : m.haar_features)
      for (const CascadeModel::HaarRect &r : f.rect) {
        if (r.w == 0 && r.h == 0 && r.weight == 0)
          continue; // unused
        if (f.tilted)
          FUZZ_CHECK (r.x - r.h >= 0 && r.x + r.w <= W && r.y >= 0 && r.y + r.w + r.h <= H, "tilted rect outside");
        else
          FUZZ_CHECK (r.x >= 0 && r.y >= 0 && r.x + r.w <= W && r.y + r.h <= H, "rect outside");
      }
  }
}

extern "C" int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size) {
  CascadeModel m;
  const std::string err = parse_cascade_xml (fuzz_text (data, size), &m).message;
  if (!err.empty ()) {
    FUZZ_CHECK (m.stages.empty () && m.nodes.empty (), "a refused model was partly filled in: %s", err.c_str ());
    return 0;
  }
  check_model (m);
  // What the engine does next with a model on the host: the generated stages
  // (bounded by their tree budget, as the engine calls them).
  GeneratedStages g = generate_stages (m, 200, 2, false);
  FUZZ_CHECK (g.stages >= 1 && static_cast<size_t> (g.stages) <= m.stages.size (), "generated %d stages", g.stages);
  if (!m.has_tilted && m.feature_type == CascadeModel::FeatureType::Haar)
    generate_stages (m, 200, 2, true);
  generate_vector_stages (m, 3);
  return 0;
}
