#include "codegen.h"
#include "core/numbers.h"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <sstream>
#include <vector>

namespace gpudetect {

namespace {

std::string hex (uint32_t v) {
  char b[16];
  std::snprintf (b, sizeof b, "%x", v);
  return b;
}

// "x + y * s" with the constants folded where they are zero.
std::string ofs (int x, int y) {
  std::string r;
  if (y != 0)
    r = "(" + std::to_string (y) + ") * s";
  if (x != 0 || r.empty ())
    r += (r.empty () ? "" : " + ") + std::string ("(") + std::to_string (x) + ")";
  return r;
}

class Writer {
public:
  Writer (const CascadeModel &m, bool narrow_sum) : m_ (m), narrow_ (narrow_sum) {}

  // An expression that is true when node `ni` sends the window left.
  std::string node_left (int ni) {
    const CascadeModel::Node &n = m_.nodes[ni];
    std::ostringstream o;
    if (m_.feature_type == CascadeModel::FeatureType::Lbp) {
      const CascadeModel::LbpFeature &f = m_.lbp_features[n.feature];
      // the 4x4 grid of integral points, g(i, j) at (x + i w, y + j h); lbp_bit
      // takes the differences along each row, g(i, j) - g(i + 1, j), from which
      // it makes the 9 blocks (each block shares its two with a neighbour)
      auto g = [&] (int i, int j) { return "(int) sum[" + ofs (f.x + i * f.w, f.y + j * f.h) + "]"; };
      o << "lbp_bit (";
      for (int j = 0; j < 4; j++)
        for (int i = 0; i < 3; i++)
          o << (i || j ? ", " : "") << g (i, j) << " - " << g (i + 1, j);
      for (int k = 0; k < 8; k++)
        o << ", 0x" << hex (n.subset[k]) << "u";
      o << ")";
      return o.str ();
    }
    const CascadeModel::HaarFeature &f = m_.haar_features[n.feature];
    const char *plane = f.tilted ? "tilted" : "sum";
    auto rect = [&] (const CascadeModel::HaarRect &r) {
      int c[4][2];
      if (f.tilted) {
        const int t[4][2] = {{r.x, r.y}, {r.x - r.h, r.y + r.h}, {r.x + r.w, r.y + r.w},
                             {r.x + r.w - r.h, r.y + r.w + r.h}};
        std::copy (&t[0][0], &t[0][0] + 8, &c[0][0]);
      } else {
        const int t[4][2] = {{r.x, r.y}, {r.x + r.w, r.y}, {r.x, r.y + r.h}, {r.x + r.w, r.y + r.h}};
        std::copy (&t[0][0], &t[0][0] + 8, &c[0][0]);
      }
      std::string p = plane;
      auto corners = [&] (const int (&k)[4][2]) {
        return p + "[" + ofs (k[0][0], k[0][1]) + "] - " + p + "[" + ofs (k[1][0], k[1][1]) + "] - " + p + "[" +
               ofs (k[2][0], k[2][1]) + "] + " + p + "[" + ofs (k[3][0], k[3][1]) + "]";
      };
      if (!narrow_ || f.tilted)
        return "(float) (int) (" + corners (c) + ")";
      const int hb = narrow_band_height (r.w, r.h);
      if (hb == 0)
        return "(float) SUM_WRAP (" + corners (c) + ")";
      std::string bands;
      for (int y0 = r.y; y0 < r.y + r.h; y0 += hb) {
        const int y1 = std::min (y0 + hb, r.y + r.h);
        const int k[4][2] = {{r.x, y0}, {r.x + r.w, y0}, {r.x, y1}, {r.x + r.w, y1}};
        bands += (bands.empty () ? "" : " + ") + std::string ("SUM_WRAP (") + corners (k) + ")";
      }
      return "(float) (" + bands + ")";
    };
    o << "(" << float_literal (f.rect[0].weight) << " * " << rect (f.rect[0]) << " + " << float_literal (f.rect[1].weight) << " * "
      << rect (f.rect[1]) << ")";
    std::string v = o.str ();
    if (f.rect[2].weight != 0.0f)
      v = "(" + v + " + " + float_literal (f.rect[2].weight) + " * " + rect (f.rect[2]) + ")";
    return "(" + v + " * vnf < " + float_literal (n.threshold) + ")";
  }

  // The leaf value of the subtree rooted at child reference `idx` (> 0 node,
  // <= 0 leaf) of `tree`.
  std::string subtree (const CascadeModel::Tree &tree, int idx) {
    if (idx <= 0)
      return "(acc_t) " + float_literal (m_.leaves[tree.first_leaf - idx]);
    const CascadeModel::Node &n = m_.nodes[tree.first_node + idx];
    return "(" + node_left (tree.first_node + idx) + " ? " + subtree (tree, n.left) + " : " +
           subtree (tree, n.right) + ")";
  }

  std::string tree (const CascadeModel::Tree &t) {
    const CascadeModel::Node &root = m_.nodes[t.first_node];
    return "(" + node_left (t.first_node) + " ? " + subtree (t, root.left) + " : " + subtree (t, root.right) + ")";
  }

private:
  const CascadeModel &m_;
  bool narrow_;
};

// The 4x4 grid of integral points of LBP feature `fi` as loads of 16
// windows, and the stump's leaf added to `acc` per window (the CPU
// schedule's vector stages; kernels/cascade.cl, cascade_rows).
std::string lbp_vec_stump (const CascadeModel &m, const CascadeModel::Tree &t) {
  const CascadeModel::Node &n = m.nodes[t.first_node];
  const CascadeModel::LbpFeature &f = m.lbp_features[n.feature];
  std::ostringstream o;
  o << "  {\n";
  for (int j = 0; j < 4; j++)
    for (int i = 0; i < 4; i++)
      o << "    const uint16 g" << i << j << " = LD (" << ofs (f.x + i * f.w, f.y + j * f.h) << ");\n";
  auto block = [] (int i, int j) {
    const std::string a = std::to_string (i) + std::to_string (j), b = std::to_string (i + 1) + std::to_string (j),
                      c = std::to_string (i) + std::to_string (j + 1),
                      d = std::to_string (i + 1) + std::to_string (j + 1);
    return "as_int16 (g" + a + " - g" + b + " - g" + c + " + g" + d + ")";
  };
  o << "    const int16 c = " << block (1, 1) << ";\n";
  const int order[8][2] = {{0, 0}, {1, 0}, {2, 0}, {2, 1}, {2, 2}, {1, 2}, {0, 2}, {0, 1}};
  o << "    const int16 code = ";
  for (int k = 0; k < 8; k++)
    o << (k ? " |\n                       " : "") << "((" << block (order[k][0], order[k][1]) << " >= c) & "
      << (128 >> k) << ")";
  o << ";\n";
  // the code's word of the 256-bit category set, chosen by its top 3 bits
  o << "    const int16 k = code >> 5;\n";
  auto word = [&] (int a, int b) {
    return "select ((uint16) 0x" + hex (n.subset[a]) + "u, (uint16) 0x" + hex (n.subset[b]) + "u, (k & 1) != 0)";
  };
  o << "    const uint16 w0 = select (" << word (0, 1) << ", " << word (2, 3) << ", (k & 2) != 0);\n";
  o << "    const uint16 w1 = select (" << word (4, 5) << ", " << word (6, 7) << ", (k & 2) != 0);\n";
  o << "    const uint16 w = select (w0, w1, (k & 4) != 0);\n";
  o << "    acc += convert_accv (select ((float16) " << float_literal (m.leaves[t.first_leaf - n.right]) << ", (float16) "
    << float_literal (m.leaves[t.first_leaf - n.left]) << ", ((w >> as_uint16 (code & 31)) & 1u) != 0u));\n";
  o << "  }\n";
  return o.str ();
}

// A Haar tree over 16 windows: every node's feature value (the scalar
// Writer's arithmetic, lane by lane) and its direction, then the leaf chosen
// by selects, added to `acc` per window.
std::string haar_vec_tree (const CascadeModel &m, const CascadeModel::Tree &t) {
  std::ostringstream o;
  o << "  {\n";
  auto rect = [] (const CascadeModel::HaarRect &r) {
    return "convert_float16 (as_int16 (LD (" + ofs (r.x, r.y) + ") - LD (" + ofs (r.x + r.w, r.y) + ") - LD (" +
           ofs (r.x, r.y + r.h) + ") + LD (" + ofs (r.x + r.w, r.y + r.h) + ")))";
  };
  for (int k = 0; k < t.node_count; k++) {
    const CascadeModel::Node &n = m.nodes[t.first_node + k];
    const CascadeModel::HaarFeature &f = m.haar_features[n.feature];
    std::string v = "(" + float_literal (f.rect[0].weight) + " * " + rect (f.rect[0]) + " + " + float_literal (f.rect[1].weight) +
                    " * " + rect (f.rect[1]) + ")";
    if (f.rect[2].weight != 0.0f)
      v = "(" + v + " + " + float_literal (f.rect[2].weight) + " * " + rect (f.rect[2]) + ")";
    o << "    const int16 l" << k << " = " << v << " * vnf < " << float_literal (n.threshold) << ";\n";
  }
  // child reference idx: > 0 a node of the tree, <= 0 a leaf
  std::function<std::string (int)> sub = [&] (int idx) -> std::string {
    if (idx <= 0)
      return "(float16) " + float_literal (m.leaves[t.first_leaf - idx]);
    const CascadeModel::Node &n = m.nodes[t.first_node + idx];
    return "select (" + sub (n.right) + ", " + sub (n.left) + ", l" + std::to_string (idx) + ")";
  };
  const CascadeModel::Node &root = m.nodes[t.first_node];
  o << "    acc += convert_accv (select (" << sub (root.right) << ", " << sub (root.left) << ", l0));\n";
  o << "  }\n";
  return o.str ();
}

// `t` inside a block comment: "*/" broken up.
std::string comment_text (std::string t) {
  for (size_t at = t.find ("*/"); at != std::string::npos; at = t.find ("*/", at))
    t.insert (at + 1, " ");
  return t;
}

// Generated code nests a tree's nodes, and the compiler's time grows with the
// code: stages are generated only while every tree stays this shallow, all
// of them this small and the stages this few (OpenCV's cascades: depth <= 3,
// at most 768 nodes and 16 stages in the first 256 trees); the rest run from
// memory, whatever their depth.
constexpr int kMaxGeneratedDepth = 16;
constexpr int kMaxGeneratedNodes = 1024;
constexpr int kMaxGeneratedStages = 32;

int tree_depth (const CascadeModel &m, const CascadeModel::Tree &t) {
  // children follow their parent (xml.cpp), so one pass from the last node
  std::vector<int> d (t.node_count, 1);
  for (int i = t.node_count - 1; i >= 0; i--) {
    const CascadeModel::Node &n = m.nodes[t.first_node + i];
    for (int c : {n.left, n.right})
      if (c > 0)
        d[i] = std::max (d[i], d[c] + 1);
  }
  return t.node_count > 0 ? d[0] : 0;
}

// How many of the first `stages` stages fit the generated code's bounds
// (`asked`: a count the user set, bounded by the depth alone).
int stages_within_bounds (const CascadeModel &m, int stages, bool asked) {
  int nodes = 0;
  if (!asked)
    stages = std::min (stages, kMaxGeneratedStages);
  for (int si = 0; si < stages; si++) {
    const CascadeModel::Stage &st = m.stages[si];
    for (int t = 0; t < st.ntrees; t++) {
      const CascadeModel::Tree &tree = m.trees[st.first_tree + t];
      nodes += tree.node_count;
      if ((!asked && nodes > kMaxGeneratedNodes) || tree_depth (m, tree) > kMaxGeneratedDepth)
        return si;
    }
  }
  return stages;
}

} // namespace

GeneratedStages generate_vector_stages (const CascadeModel &m, int max_stages, bool asked) {
  GeneratedStages g;
  const bool haar = m.feature_type == CascadeModel::FeatureType::Haar;
  if (haar ? m.has_tilted : m.max_nodes_per_tree != 1)
    return g;
  g.stages = stages_within_bounds (m, std::max (0, std::min (max_stages, static_cast<int> (m.stages.size ()))), asked);
  if (g.stages == 0)
    return g;
  std::ostringstream o;
  o << "/* generated from " << comment_text (m.path) << ": stages 0.." << g.stages - 1 << " over 16 windows */\n";
  o << "#define VEC_STAGES " << g.stages << "\n";
  for (int step = 1; step <= 2; step++)
    for (int si = 0; si < g.stages; si++) {
      const CascadeModel::Stage &st = m.stages[si];
      o << "#define LD LD" << step << "\n";
      o << "inline int16 vec_stage_" << si << "_step" << step << " (__global const uint *p, int s"
        << (haar ? ", float16 vnf" : "") << ")\n{\n  accv_t acc = 0;\n";
      for (int t = 0; t < st.ntrees; t++)
        o << (haar ? haar_vec_tree (m, m.trees[st.first_tree + t]) : lbp_vec_stump (m, m.trees[st.first_tree + t]));
      o << "  return convert_int16 (acc < (accv_t) " << float_literal (st.threshold) << ") == 0;\n}\n#undef LD\n";
    }
  // Stages 0.. as far as any window passes: each window's number of stages
  // passed (the later ones only count where the earlier passed); Haar: -1
  // for a flat window, which OpenCV refuses before stage 0.
  for (int step = 1; step <= 2; step++) {
    const std::string sfx = "_step" + std::to_string (step), args = haar ? "(p, s, vnf)" : "(p, s)";
    if (haar)
      o << "VEC_WINDOW_NORM (vec_window_norm" << sfx << ", LDB" << step << ")\n";
    o << "inline int16 vec_stages" << sfx << " (__global const uint *p, __global const uint *q, int s)\n{\n";
    if (haar)
      o << "  float16 vnf;\n  const int16 valid = vec_window_norm" << sfx << " (p, q, s, &vnf);\n"
        << "  int16 alive = valid & vec_stage_0" << sfx << " " << args << ", depth = alive & 1;\n";
    else
      o << "  int16 alive = vec_stage_0" << sfx << " " << args << ", depth = alive & 1;\n";
    for (int si = 1; si < g.stages; si++)
      o << "  if (any (alive)) {\n    alive &= vec_stage_" << si << sfx << " " << args
        << ";\n    depth += alive & 1;\n  }\n";
    o << (haar ? "  return select (depth, (int16) -1, valid == 0);\n}\n" : "  return depth;\n}\n");
  }
  g.source = o.str ();
  return g;
}

int stages_within_trees (const CascadeModel &m, int max_trees) {
  int stages = 0, trees = 0;
  while (max_trees > 0 && stages < static_cast<int> (m.stages.size ()) &&
         (stages == 0 || trees + m.stages[stages].ntrees <= max_trees))
    trees += m.stages[stages++].ntrees;
  return stages;
}

int narrow_band_height (int w, int h) {
  return w * h <= 257 ? 0 : 257 / w;
}

GeneratedStages generate_stages (const CascadeModel &m, int max_trees, int first_stages, bool narrow_sum, bool asked) {
  GeneratedStages g;
  g.stages = stages_within_bounds (m, stages_within_trees (m, max_trees), asked);
  const int first = first_stages < 0 ? g.stages : std::min (first_stages, g.stages);
  Writer w (m, narrow_sum);
  std::ostringstream o;
  o << "/* generated from " << comment_text (m.path) << ": " << g.stages << " stages */\n";
  o << "#define GEN_STAGES " << g.stages << "\n#define SPEC_STAGES " << first << "\n";
  if (m.feature_type == CascadeModel::FeatureType::Lbp) {
    // The code's bit in the node's 256-bit category set, from the integral's
    // differences along the grid's rows (dIJ: column I, row J).  The blocks
    // clockwise from the top-left give the code's bits 7..0 (OpenCV's order):
    // the first three choose the set's word, the other five the bit in it,
    // each selected on its comparison rather than through the code's value.
    o << "inline int lbp_bit (int d00, int d10, int d20, int d01, int d11, int d21, int d02, int d12, int d22, "
         "int d03, int d13, int d23, uint s0, uint s1, uint s2, uint s3, uint s4, uint s5, uint s6, uint s7)\n{\n"
         "  const blk_t c = LBP_BLOCK (d11 - d12);\n"
         "  const bool t7 = LBP_BLOCK (d00 - d01) >= c, t6 = LBP_BLOCK (d10 - d11) >= c, t5 = LBP_BLOCK (d20 - d21) >= c;\n"
         "  const uint word = t7 ? (t6 ? (t5 ? s7 : s6) : (t5 ? s5 : s4)) : (t6 ? (t5 ? s3 : s2) : (t5 ? s1 : s0));\n"
         "  const uint bit = (LBP_BLOCK (d21 - d22) >= c ? 16u : 0u) | (LBP_BLOCK (d22 - d23) >= c ? 8u : 0u) |\n"
         "                   (LBP_BLOCK (d12 - d13) >= c ? 4u : 0u) | (LBP_BLOCK (d02 - d03) >= c ? 2u : 0u) |\n"
         "                   (LBP_BLOCK (d01 - d02) >= c ? 1u : 0u);\n"
         "  return (word >> bit) & 1;\n}\n";
  }
  for (int si = 0; si < g.stages; si++) {
    const CascadeModel::Stage &st = m.stages[si];
    o << "inline int spec_stage_" << si
      << " (__global const sum_t *sum, __global const uint *tilted, int s, float vnf)\n{\n  acc_t acc = 0;\n";
    for (int t = 0; t < st.ntrees; t++)
      o << "  acc += " << w.tree (m.trees[st.first_tree + t]) << ";\n";
    o << "  return !(acc < (acc_t) " << float_literal (st.threshold) << ");\n}\n";
  }
  o << "inline int spec_stage_passes (int si, __global const sum_t *sum, __global const uint *tilted, int s, float "
       "vnf)\n{\n  switch (si) {\n";
  for (int si = 0; si < g.stages; si++)
    o << "  case " << si << ": return spec_stage_" << si << " (sum, tilted, s, vnf);\n";
  o << "  }\n  return 0;\n}\n";
  g.source = o.str ();
  return g;
}

} // namespace gpudetect
