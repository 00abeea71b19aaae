// The random-forest cascade's file format (families/forest/csv.cpp): a small
// model read field by field, written back exactly, found by the registry and
// by name; malformed, truncated and hostile files refused with a message
// naming the line and column; the fixed-point arithmetic's definitions.
#include "check.h"
#include "core/models.h"
#include "families/forest/model.h"
#include "families/registry.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

using namespace gpudetect;

namespace {

// Two trees of 3 nodes (a stump: node 0 splits, leaves 1 and 2), three stages.
const std::string kModel = "gpudetect-forest 1\n"
                           "# a comment\n"
                           "name tiny\n"
                           "window 8 6\n"
                           "shrink 2\n"
                           "levels-per-octave 4\n"
                           "blur 0.25 0.5 0.25\n"
                           "threshold 0.5\n"
                           "nodes 3\n"
                           "[trees]\n"
                           "0,0.125,1,0,0,3,2,0,0, -1,0,-1,0,0,0,0,0,0, 1,0,-1,0,0,0,0,0,0\n"
                           "0,-0.5,1,1,1,2,0,0,0, 0.75,0,-1,0,0,0,0,0,0, -0.25,0,-1,0,0,0,0,0,0\n"
                           "[stages]\n"
                           "0,0,-inf\n"
                           "0,1,-0.5\n"
                           "1,1,0.25\n";

std::string replace (std::string s, const std::string &from, const std::string &to) {
  const size_t p = s.find (from);
  CHECK_MSG (p != std::string::npos, "test model has no '%s'", from.c_str ());
  if (p != std::string::npos)
    s.replace (p, from.size (), to);
  return s;
}

// Refused with a message holding `want`.
void refused (const char *what, const std::string &text, const std::string &want) {
  ForestModel m;
  m.name = "unchanged";
  const std::string e = parse_forest (text, &m).message;
  CHECK_MSG (e.find (want) != std::string::npos, "%s: expected '%s', got '%s'", what, want.c_str (), e.c_str ());
  CHECK_MSG (m.name == "unchanged" && m.stages.empty (), "%s: a refused model was partly filled in", what);
  CHECK_MSG (e.size () < 400, "%s: a message of %zu bytes", what, e.size ());
}

void test_reads () {
  ForestModel m;
  const std::string e = parse_forest (kModel, &m).message;
  CHECK_MSG (e.empty (), "%s", e.c_str ());
  CHECK (m.name == "tiny" && m.window_width == 8 && m.window_height == 6 && m.shrink == 2);
  CHECK (m.levels_per_octave == 4 && m.blur[0] == 4 && m.blur[1] == 8 && m.blur[2] == 4 && m.threshold == 0.5);
  CHECK (m.nodes_per_tree == 3 && m.trees () == 2 && m.nodes.size () == 6 && m.stages.size () == 3);
  CHECK (m.cells_x () == 4 && m.cells_y () == 3);
  const ForestModel::Node &n = m.nodes[0];
  CHECK (n.score == 0 && n.threshold == 0.125 && n.left == 1 && n.x1 == 0 && n.y1 == 0 && n.x2 == 3 && n.y2 == 2);
  CHECK (m.nodes[1].left == -1 && m.nodes[1].score == -1 && m.nodes[4].score == 0.75);
  CHECK (std::isinf (m.stages[0].threshold) && m.stages[0].threshold < 0);
  CHECK (m.stages[1].first == 0 && m.stages[1].last == 1 && m.stages[1].threshold == -0.5);

  // written back exactly, and again the same text
  const std::string w = write_forest (m);
  ForestModel b;
  CHECK (parse_forest (w, &b).message.empty ());
  CHECK (write_forest (b) == w);
  CHECK (b.nodes.size () == m.nodes.size () && b.nodes[3].threshold == -0.5 && b.stages[2].threshold == 0.25);
  // numbers that need all 17 digits
  ForestModel p = m;
  p.nodes[0].threshold = 0.1 + 0.2;
  p.nodes[1].score = 1.0 / 3;
  p.threshold = -std::ldexp (1.0, -40);
  CHECK (parse_forest (write_forest (p), &b).message.empty () && b.nodes[0].threshold == p.nodes[0].threshold &&
         b.nodes[1].score == p.nodes[1].score && b.threshold == p.threshold);

  // line endings, spaces, tabs, comments between rows, '+' signs
  std::string crlf;
  for (char c : kModel)
    crlf += c == '\n' ? std::string ("\r\n") : std::string (1, c);
  CHECK (parse_forest (crlf, &b).message.empty () && b.stages.size () == 3);
  CHECK (parse_forest (replace (replace (kModel, "window 8 6", "window\t 8   6 "), "[stages]\n", "[stages]\n# x\n\n"),
                       &b)
             .message.empty ());
  // carriage returns at a line's end, however many (found by the fuzz target:
  // "tiny\r" was written back as a line whose CR the reader removed)
  CHECK (parse_forest (replace (kModel, "name tiny\n", "name tiny \r\r\n"), &b).message.empty () && b.name == "tiny");
  CHECK (parse_forest (replace (kModel, "1,1,0.25\n", "1,1,0.25\r\r\r\n"), &b).message.empty () &&
         b.stages[2].threshold == 0.25);
  CHECK (parse_forest (replace (kModel, "1,1,0.25", " +1 , 1 ,  +0.25 "), &b).message.empty () &&
         b.stages[2].threshold == 0.25);
  // optional header keys: blur and threshold have defaults, name may be absent
  CHECK (parse_forest (replace (replace (replace (kModel, "blur 0.25 0.5 0.25\n", ""), "threshold 0.5\n", ""),
                                "name tiny\n", ""),
                       &b)
             .message.empty () &&
         b.blur[1] == 8 && b.threshold == 0 && b.name.empty ());
  CHECK (parse_forest (replace (kModel, "blur 0.25 0.5 0.25", "blur 0 1 0"), &b).message.empty () && b.blur[1] == 16);
  // a stage threshold at or below -1e30 never rejects
  CHECK (parse_forest (replace (kModel, "0,1,-0.5", "0,1,-1e300"), &b).message.empty () && std::isinf (b.stages[1].threshold));
}

void test_refuses () {
  refused ("no magic", "forest 1\n", "not a random-forest cascade");
  refused ("version 2", replace (kModel, "gpudetect-forest 1", "gpudetect-forest 2"), "line 1: version '2'");
  refused ("no version", replace (kModel, "gpudetect-forest 1", "gpudetect-forest "), "line 1: version");
  refused ("unknown key", replace (kModel, "shrink 2", "shrinc 2"), "line 5: unknown header key 'shrinc'");
  refused ("twice", replace (kModel, "shrink 2\n", "shrink 2\nshrink 2\n"), "line 6: shrink: given twice");
  refused ("no shrink", replace (kModel, "shrink 2\n", ""), "needs window, shrink, levels-per-octave and nodes");
  refused ("shrink 9", replace (kModel, "shrink 2", "shrink 9"), "shrink: expected an integer from 1 to 8");
  refused ("shrink 2.0", replace (kModel, "shrink 2", "shrink 2.0"), "shrink: expected an integer");
  refused ("window odd", replace (kModel, "window 8 6", "window 8 5"), "not a multiple of shrink 2");
  refused ("window one value", replace (kModel, "window 8 6", "window 8"), "window: expected the window's");
  refused ("window 0", replace (kModel, "window 8 6", "window 0 6"), "window: expected");
  refused ("blur not 16ths", replace (kModel, "blur 0.25 0.5 0.25", "blur 0.3 0.4 0.3"), "blur: expected three");
  refused ("blur not symmetric", replace (kModel, "blur 0.25 0.5 0.25", "blur 0.25 0.625 0.125"),
           "blur: expected three");
  refused ("blur sum", replace (kModel, "blur 0.25 0.5 0.25", "blur 0.25 0.25 0.25"), "blur: expected three");
  refused ("threshold nan", replace (kModel, "threshold 0.5", "threshold nan"), "threshold: expected a number");
  refused ("threshold huge", replace (kModel, "threshold 0.5", "threshold 1e10"), "within +-2^30");
  refused ("nodes 0", replace (kModel, "nodes 3", "nodes 0"), "nodes: expected the nodes of a tree");
  refused ("nodes 256", replace (kModel, "nodes 3", "nodes 256"), "nodes: expected");
  refused ("section early", replace (kModel, "nodes 3\n", "nodes 3\n[stages]\n"), "line 10: section '[stages]' before");
  refused ("no trees", kModel.substr (0, kModel.find ("[trees]")), "no [trees] section");
  refused ("empty trees", replace (kModel, "[trees]\n0,0.125", "[trees]\n[stages]\n0,0.125"), "holds no tree");
  refused ("no stages", kModel.substr (0, kModel.find ("[stages]")), "no [stages] section");
  refused ("empty stages", kModel.substr (0, kModel.find ("0,0,-inf")), "the [stages] section holds no stage");

  // trees: counts, numbers, children, coordinates, layers (line 11: tree 0)
  refused ("short row", replace (kModel, ", 1,0,-1,0,0,0,0,0,0\n0,-0.5", "\n0,-0.5"),
           "line 11: tree 0: 18 values, expected 27 (9 for each of 3 nodes)");
  refused ("long row", replace (kModel, "1,0,-1,0,0,0,0,0,0\n", "1,0,-1,0,0,0,0,0,0,7\n"),
           "line 11: tree 0: more than 27 values");
  refused ("score text", replace (kModel, "0,0.125,1", "x,0.125,1"), "line 11: tree 0, column 1 (node 0 score) = 'x'");
  refused ("score inf", replace (kModel, " 1,0,-1", " inf,0,-1"), "column 19 (node 2 score) = 'inf'");
  refused ("score huge", replace (kModel, " 1,0,-1", " 2e6,0,-1"), "column 19 (node 2 score) = '2e6': expected a number within +-1e6");
  refused ("threshold empty", replace (kModel, "0,0.125,1", "0,,1"), "column 2 (node 0 threshold) = ''");
  refused ("hex", replace (kModel, "0,0.125,1", "0,0x10,1"), "column 2 (node 0 threshold)");
  refused ("left backwards", replace (kModel, "0,-0.5,1,1,1", "0,-0.5,0,1,1"),
           "line 12: tree 1, column 3 (node 0 left) = '0': a left child must come after its parent");
  refused ("left at the end", replace (kModel, "0,-0.5,1,1,1", "0,-0.5,2,1,1"), "must come after its parent");
  refused ("left beyond", replace (kModel, "0,-0.5,1,1,1", "0,-0.5,3,1,1"),
           "column 3 (node 0 left) = '3': expected -1 (a leaf) or a node of the tree");
  refused ("left -2", replace (kModel, "0,-0.5,1,1,1", "0,-0.5,-2,1,1"), "expected -1 (a leaf)");
  refused ("x1 outside", replace (kModel, "0,0.125,1,0,0,3,2", "0,0.125,1,4,0,3,2"),
           "column 4 (node 0 x1) = '4': expected a column of the window's 4 shrunk columns (0 to 3)");
  refused ("y2 outside", replace (kModel, "0,0.125,1,0,0,3,2", "0,0.125,1,0,0,3,3"),
           "column 7 (node 0 y2) = '3': expected a row of the window's 3 shrunk rows (0 to 2)");
  refused ("x2 negative", replace (kModel, "0,0.125,1,0,0,3,2", "0,0.125,1,0,0,-1,2"), "column 6 (node 0 x2)");
  refused ("layer 1", replace (kModel, "0,0.125,1,0,0,3,2,0,0", "0,0.125,1,0,0,3,2,0,1"),
           "column 9 (node 0 z2) = '1': expected layer 0");

  // stages (line 14 on)
  refused ("stage values", replace (kModel, "0,1,-0.5", "0,1"), "line 15: stage 1: 2 values, expected 3");
  refused ("stage more values", replace (kModel, "0,1,-0.5", "0,1,-0.5,3"), "line 15: stage 1: more than 3 values");
  refused ("stage first", replace (kModel, "1,1,0.25", "2,2,0.25"),
           "line 16: stage 2, column 1 (first tree) = '2': expected a tree, 0 to 1");
  refused ("stage last before first", replace (kModel, "1,1,0.25", "1,0,0.25"),
           "column 2 (last tree) = '0': expected a tree from the first (1) to 1");
  refused ("stage threshold", replace (kModel, "1,1,0.25", "1,1,inf"), "column 3 (threshold) = 'inf'");
  refused ("stage threshold huge", replace (kModel, "1,1,0.25", "1,1,2e9"), "within +-2^30, or -inf");
  refused ("section after stages", kModel + "[more]\n", "section '[more]' after [stages]");
  refused ("scores beyond 2^30", replace (replace (kModel, " 1,0,-1", " 1e6,0,-1"), "1,1,0.25", "1,1,0.25\n" +
           [] {
             std::string s;
             for (int i = 0; i < 1100; i++)
               s += "0,0,-inf\n";
             return s;
           }()),
           "the leaf scores could sum beyond +-2^30");
  {
    // a stage of 342 trees of 3 nodes: 1026 nodes, over the 1024 a stage may hold
    std::string trees;
    for (int i = 0; i < 342; i++)
      trees += "0,0,-1,0,0,0,0,0,0,0,0,-1,0,0,0,0,0,0,0,0,-1,0,0,0,0,0,0\n";
    std::string t = kModel.substr (0, kModel.find ("[trees]\n") + 8) + trees + "[stages]\n0,341,0\n";
    refused ("stage of 1026 nodes", t, "line 354: stage 0: 342 trees of 3 nodes, more than 1024 nodes in one stage");
    ForestModel ok;
    CHECK (parse_forest (replace (t, "0,341,0", "0,340,0"), &ok).message.empty () && ok.trees () == 342);
  }
  // truncated anywhere: refused or (cut at a row's end) a smaller model, never a crash
  for (size_t n = 0; n < kModel.size (); n++) {
    ForestModel m;
    const std::string e = parse_forest (kModel.substr (0, n), &m).message;
    CHECK_MSG (!e.empty () || (m.stages.size () >= 1 && m.stages.size () <= 3), "cut at %zu", n);
  }
}

void test_fixed_point () {
  // d < t  <=>  d_q < forest_split (t), d_q the integer value units
  for (double t : {0.0, 0.125, -0.5, 1.0 / 3, 63.9, -64.0, 1e-9}) {
    const int32_t s = forest_split (t);
    const double lo = (s - 1) / kForestValueUnits, at = s / kForestValueUnits;
    CHECK_MSG (lo < t && !(at < t), "split %.17g -> %d", t, s);
  }
  CHECK (forest_split (1e6) == INT32_MAX && forest_split (-1e6) == -INT32_MAX);
  CHECK (forest_leaf (1.0, 1) == (int64_t (1) << 32) && forest_leaf (-0.5, 2) == -(int64_t (1) << 30));
  CHECK (forest_leaf (1.0, 3) == 1431655765); // 2^32 / 3 rounded to nearest
  CHECK (forest_reject_below (-INFINITY) == INT64_MIN && forest_reject_below (0.25) == (int64_t (1) << 30));
  CHECK (forest_final (0.5) == (int64_t (1) << 31) && forest_final (-0.5) == -(int64_t (1) << 31));
}

void test_registry () {
  std::unique_ptr<Family> f;
  std::string e = load_family_text ("models/frontalface.forest", kModel, &f).message;
  CHECK_MSG (e.empty () && f, "%s", e.c_str ());
  if (f) {
    CHECK (f->info ().family == "forest" && f->info ().label == "face" && f->info ().window.width == 8 &&
           f->info ().window.height == 6);
    CHECK (std::string (f->threshold_meaning ()).find ("final sum") != std::string::npos);
  }
  f.reset ();
  e = load_family_text ("x.forest", replace (kModel, "0,1,-0.5", "0,9,-0.5"), &f).message;
  CHECK_MSG (e.rfind ("model file 'x.forest': line 15: stage 1", 0) == 0 && !f, "%s", e.c_str ());
  CHECK (known_model_formats ().find ("gpudetect-forest 1") != std::string::npos);
  // found by file name and by stem in a directory of the search path
  char dir[] = "/tmp/gpudetect-forest-models-XXXXXX";
  CHECK (mkdtemp (dir) != nullptr);
  const std::string path = std::string (dir) + "/made-person.forest";
  std::FILE *fp = std::fopen (path.c_str (), "w");
  CHECK (fp && std::fwrite (kModel.data (), 1, kModel.size (), fp) == kModel.size ());
  if (fp)
    std::fclose (fp);
  setenv ("GPUDETECT_MODEL_PATH", dir, 1);
  CHECK (resolve_model ("made-person") == path);
  CHECK (resolve_model ("made-person.forest") == path);
  bool listed = false;
  for (const std::string &n : list_models ())
    listed = listed || n == "made-person";
  CHECK (listed);
  CHECK (label_for_model (path) == "made-person");
  ForestModel m;
  e = load_forest_file (path, &m).message;
  CHECK_MSG (e.empty () && m.path == path && m.default_label == "made-person", "%s", e.c_str ());
  unlink (path.c_str ());
  rmdir (dir);
}

} // namespace

int main () {
  test_reads ();
  test_refuses ();
  test_fixed_point ();
  test_registry ();
  return finish ();
}
