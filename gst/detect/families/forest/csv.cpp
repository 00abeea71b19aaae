// The random-forest cascade's file (models/README.md): a header of
// "key value" lines, then a [trees] section of CSV rows (one tree a row, its
// nodes side by side, 9 columns a node) and a [stages] section (first tree,
// last tree, threshold).  Every count is checked against a cap before it is
// used and no row is split past one more field than it may hold, so that any
// input costs time and memory in proportion to its size.
#include "model.h"

#include "core/models.h"
#include "core/numbers.h"

#include <cmath>
#include <cstring>

namespace gpudetect {

namespace {

constexpr char kMagic[] = "gpudetect-forest";
constexpr int kVersion = 1;
constexpr double kMaxScore = 1e6;     // |leaf score|
constexpr double kMaxSplit = 1e6;     // |inner node threshold| (values lie in [0, 64])
constexpr double kNever = 1e30;       // stage thresholds at or below -kNever never reject
const char *const kNodeColumns[9] = {"score", "threshold", "left", "x1", "y1", "x2", "y2", "z1", "z2"};

// Spaces, tabs and carriage returns at both ends removed (a line's own CR is
// removed with its line break; more before it would not survive a round trip).
std::string trim (const std::string &s) {
  const size_t a = s.find_first_not_of (" \t\r"), b = s.find_last_not_of (" \t\r");
  return a == std::string::npos ? std::string () : s.substr (a, b - a + 1);
}

// Splits `s` at `sep` into at most `max` fields (the last one holds the rest).
std::vector<std::string> split (const std::string &s, char sep, size_t max) {
  std::vector<std::string> f;
  size_t a = 0;
  while (f.size () + 1 < max) {
    const size_t b = s.find (sep, a);
    if (b == std::string::npos)
      break;
    f.push_back (trim (s.substr (a, b - a)));
    a = b + 1;
  }
  f.push_back (trim (s.substr (a)));
  return f;
}

// The words of `s` (runs of spaces and tabs between them), at most `max` (the
// last one holds the rest).
std::vector<std::string> words (const std::string &s, size_t max) {
  std::vector<std::string> w;
  size_t a = s.find_first_not_of (" \t");
  while (a != std::string::npos) {
    const size_t b = w.size () + 1 < max ? s.find_first_of (" \t", a) : std::string::npos;
    w.push_back (trim (s.substr (a, b == std::string::npos ? std::string::npos : b - a)));
    a = b == std::string::npos ? b : s.find_first_not_of (" \t", b);
  }
  return w;
}

// The next line that is neither blank nor a comment, without the blanks at
// its ends, and its number.
bool next_line (ModelLines *lines, std::string *line, size_t *number) {
  if (!lines->next (line))
    return false;
  *line = trim (*line);
  *number = lines->number ();
  return true;
}

std::string at_line (size_t n) { return "line " + std::to_string (n) + ": "; }

struct Header {
  bool window = false, shrink = false, levels = false, nodes = false, blur = false, threshold = false, name = false;
};

Error read_header_line (const std::string &line, size_t ln, Header *seen, ForestModel *m) {
  const size_t sp = line.find_first_of (" \t");
  const std::string key = line.substr (0, sp), rest = sp == std::string::npos ? std::string () : trim (line.substr (sp));
  const std::vector<std::string> v = words (rest, 5);
  const std::pair<const char *, bool *> keys[] = {
      {"name", &seen->name},   {"window", &seen->window},       {"shrink", &seen->shrink},
      {"levels-per-octave", &seen->levels}, {"blur", &seen->blur}, {"threshold", &seen->threshold},
      {"nodes", &seen->nodes},
  };
  bool *once = nullptr;
  std::string known;
  for (const auto &[name, flag] : keys) {
    known += name + std::string (", ");
    if (key == name)
      once = flag;
  }
  if (!once)
    return at_line (ln) + "unknown header key " + quoted (key) + " (expected " + known + "then [trees])";
  const std::string where = at_line (ln) + key + ": ";
  if (*once)
    return where + "given twice";
  *once = true;
  // a key of one integer from 1 to `max`
  auto count = [&] (int max, int *value, const char *expected) -> Error {
    if (v.size () != 1 || !to_int (v[0], 1, max, value))
      return where + "expected " + expected + " 1 to " + std::to_string (max);
    return {};
  };
  if (key == "name") {
    m->name = rest;
  } else if (key == "window") {
    if (v.size () != 2 || !to_int (v[0], 1, kForestMaxWindow, &m->window_width) ||
        !to_int (v[1], 1, kForestMaxWindow, &m->window_height))
      return where + "expected the window's width and height in pixels, 1 to " + std::to_string (kForestMaxWindow);
  } else if (key == "shrink") {
    return count (kForestMaxShrink, &m->shrink, "an integer from");
  } else if (key == "levels-per-octave") {
    return count (kForestMaxLevelsPerOctave, &m->levels_per_octave, "an integer from");
  } else if (key == "nodes") {
    return count (kForestMaxNodesPerTree, &m->nodes_per_tree, "the nodes of a tree,");
  } else if (key == "blur") {
    double w[3];
    bool ok = v.size () == 3;
    for (int i = 0; ok && i < 3; i++) {
      ok = to_double (v[i], &w[i]) && w[i] >= 0 && w[i] <= 1 && w[i] * 16 == std::floor (w[i] * 16);
      if (ok)
        m->blur[i] = static_cast<int> (w[i] * 16);
    }
    if (!ok || m->blur[0] != m->blur[2] || m->blur[0] + m->blur[1] + m->blur[2] != 16)
      return where + "expected three weights a b a in sixteenths (0, 0.0625, ... 1) summing to 1, such as "
                     "0.25 0.5 0.25";
  } else if (key == "threshold") {
    if (v.size () != 1 || !to_double (v[0], &m->threshold) || std::fabs (m->threshold) > kForestMaxSum)
      return where + "expected a number within +-2^30";
  }
  return {};
}

Error read_tree (const std::string &line, size_t ln, size_t t, ForestModel *m, double *max_leaf) {
  const int K = m->nodes_per_tree;
  const size_t cols = static_cast<size_t> (K) * 9;
  const std::vector<std::string> f = split (line, ',', cols + 1);
  const std::string where = at_line (ln) + "tree " + std::to_string (t);
  if (f.size () != cols)
    return where + ": " + (f.size () > cols ? "more than " + std::to_string (cols) : std::to_string (f.size ())) +
           " values, expected " + std::to_string (cols) + " (9 for each of " + std::to_string (K) + " nodes)";
  *max_leaf = 0;
  const int cx = m->cells_x (), cy = m->cells_y ();
  for (int i = 0; i < K; i++) {
    ForestModel::Node n;
    auto col = [&] (int c) {
      return where + ", column " + std::to_string (i * 9 + c + 1) + " (node " + std::to_string (i) + " " +
             kNodeColumns[c] + ") = " + quoted (f[i * 9 + c]);
    };
    const std::string *v = &f[static_cast<size_t> (i) * 9];
    if (!to_double (v[0], &n.score) || std::fabs (n.score) > kMaxScore)
      return col (0) + ": expected a number within +-1e6";
    if (!to_double (v[1], &n.threshold) || std::fabs (n.threshold) > kMaxSplit)
      return col (1) + ": expected a number within +-1e6";
    if (!to_int (v[2], -1, K - 1, &n.left))
      return col (2) + ": expected -1 (a leaf) or a node of the tree";
    if (n.left >= 0 && (n.left <= i || n.left + 1 >= K))
      return col (2) + ": a left child must come after its parent, its right child (left + 1) inside the tree";
    if (!to_int (v[3], 0, cx - 1, &n.x1) || !to_int (v[5], 0, cx - 1, &n.x2))
      return col (!to_int (v[3], 0, cx - 1, &n.x1) ? 3 : 5) + ": expected a column of the window's " +
             std::to_string (cx) + " shrunk columns (0 to " + std::to_string (cx - 1) + ")";
    if (!to_int (v[4], 0, cy - 1, &n.y1) || !to_int (v[6], 0, cy - 1, &n.y2))
      return col (!to_int (v[4], 0, cy - 1, &n.y1) ? 4 : 6) + ": expected a row of the window's " +
             std::to_string (cy) + " shrunk rows (0 to " + std::to_string (cy - 1) + ")";
    if (!to_int (v[7], 0, 0, &n.z1) || !to_int (v[8], 0, 0, &n.z2))
      return col (!to_int (v[7], 0, 0, &n.z1) ? 7 : 8) + ": expected layer 0 (the only layer: the blurred shrunk "
                                                        "grey image)";
    if (n.left < 0)
      *max_leaf = std::max (*max_leaf, std::fabs (n.score));
    m->nodes.push_back (n);
  }
  return {};
}

// What the stages read so far add up to.
struct StageSums {
  double bound = 0;        // the largest |sum| of leaf scores
  size_t device_nodes = 0; // nodes on the device
};

Error read_stage (const std::string &line, size_t ln, const std::vector<double> &max_leaf, StageSums *sums,
                  ForestModel *m) {
  const int ntrees = static_cast<int> (max_leaf.size ());
  const std::string where = at_line (ln) + "stage " + std::to_string (m->stages.size ());
  if (m->stages.size () >= kForestMaxStages)
    return at_line (ln) + "more than " + std::to_string (kForestMaxStages) + " stages";
  const std::vector<std::string> f = split (line, ',', 4);
  if (f.size () != 3)
    return where + ": " + (f.size () > 3 ? std::string ("more than 3") : std::to_string (f.size ())) +
           " values, expected 3 (first tree, last tree, threshold)";
  ForestModel::Stage st;
  if (!to_int (f[0], 0, ntrees - 1, &st.first))
    return where + ", column 1 (first tree) = " + quoted (f[0]) + ": expected a tree, 0 to " +
           std::to_string (ntrees - 1);
  if (!to_int (f[1], st.first, ntrees - 1, &st.last))
    return where + ", column 2 (last tree) = " + quoted (f[1]) + ": expected a tree from the first (" +
           std::to_string (st.first) + ") to " + std::to_string (ntrees - 1);
  const int n = st.last - st.first + 1;
  if (static_cast<long long> (n) * m->nodes_per_tree > kForestMaxStageNodes)
    return where + ": " + std::to_string (n) + " trees of " + std::to_string (m->nodes_per_tree) +
           " nodes, more than " + std::to_string (kForestMaxStageNodes) + " nodes in one stage";
  if (f[2] == "-inf")
    st.threshold = -INFINITY;
  else if (!to_double (f[2], &st.threshold) || st.threshold > kForestMaxSum ||
           (st.threshold < -kForestMaxSum && st.threshold > -kNever))
    return where + ", column 3 (threshold) = " + quoted (f[2]) + ": expected a number within +-2^30, or -inf";
  if (st.threshold <= -kNever)
    st.threshold = -INFINITY;
  double ml = 0;
  for (int t = st.first; t <= st.last; t++)
    ml = std::max (ml, max_leaf[t]);
  sums->bound += ml;
  if (sums->bound > kForestMaxSum)
    return where + ": the leaf scores could sum beyond +-2^30";
  sums->device_nodes += static_cast<size_t> (n) * m->nodes_per_tree;
  if (sums->device_nodes > kForestMaxDeviceNodes)
    return where + ": the stages hold more than " + std::to_string (kForestMaxDeviceNodes) + " nodes in all";
  m->stages.push_back (st);
  return {};
}

} // namespace

bool is_forest_text (const std::string &text) {
  const size_t n = sizeof kMagic - 1;
  return text.size () > n && text.compare (0, n, kMagic) == 0 &&
         (text[n] == ' ' || text[n] == '\t' || text[n] == '\n' || text[n] == '\r');
}

Error parse_forest (const std::string &text, ForestModel *out) {
  if (!is_forest_text (text))
    return "not a random-forest cascade (the first line is not 'gpudetect-forest 1')";
  ModelLines lines (text);
  std::string line;
  size_t ln = 0;
  next_line (&lines, &line, &ln);
  int version = 0;
  const std::vector<std::string> first = words (line.substr (sizeof kMagic - 1), 3);
  if (first.size () != 1 || !to_int (first[0], 0, 1 << 30, &version) || version != kVersion)
    return at_line (ln) + "version " + quoted (trim (line.substr (sizeof kMagic - 1))) + " is not supported (only " +
           std::to_string (kVersion) + ")";
  // The lines of a section up to the heading `next` (*found then; none for
  // the last section), each read by `read`; any other heading is out of its
  // place, which `place` says.
  auto section = [&] (const char *next, bool *found, const char *place, auto read) -> Error {
    while (next_line (&lines, &line, &ln)) {
      if (next && line == next) {
        *found = true;
        return {};
      }
      if (line[0] == '[')
        return at_line (ln) + "section " + quoted (line) + " " + place;
      if (Error e = read ())
        return e;
    }
    return {};
  };
  ForestModel m;
  Header seen;
  bool in_trees = false;
  auto header = [&] { return read_header_line (line, ln, &seen, &m); };
  if (Error e = section ("[trees]", &in_trees, "before [trees]", header))
    return e;
  if (!in_trees)
    return "no [trees] section";
  if (!seen.window || !seen.shrink || !seen.levels || !seen.nodes)
    return at_line (ln) + "the header needs window, shrink, levels-per-octave and nodes before [trees]";
  if (m.window_width % m.shrink || m.window_height % m.shrink)
    return "the window " + std::to_string (m.window_width) + "x" + std::to_string (m.window_height) +
           " is not a multiple of shrink " + std::to_string (m.shrink);
  std::vector<double> max_leaf; // of each tree, its largest |leaf score|
  bool in_stages = false;
  auto tree = [&] () -> Error {
    if (max_leaf.size () >= kForestMaxTrees)
      return at_line (ln) + "more than " + std::to_string (kForestMaxTrees) + " trees";
    double ml = 0;
    if (Error e = read_tree (line, ln, max_leaf.size (), &m, &ml))
      return e;
    max_leaf.push_back (ml);
    return {};
  };
  if (Error e = section ("[stages]", &in_stages, "where [stages] or a tree was expected", tree))
    return e;
  if (max_leaf.empty ())
    return "the [trees] section holds no tree";
  if (!in_stages)
    return "no [stages] section";
  StageSums sums;
  auto stage = [&] { return read_stage (line, ln, max_leaf, &sums, &m); };
  if (Error e = section (nullptr, nullptr, "after [stages]", stage))
    return e;
  if (m.stages.empty ())
    return "the [stages] section holds no stage";
  *out = std::move (m);
  return {};
}

std::string write_forest (const ForestModel &m) {
  std::string o = std::string (kMagic) + " " + std::to_string (kVersion) + "\n";
  if (!m.name.empty ())
    o += "name " + m.name + "\n";
  o += "window " + std::to_string (m.window_width) + " " + std::to_string (m.window_height) + "\n";
  o += "shrink " + std::to_string (m.shrink) + "\n";
  o += "levels-per-octave " + std::to_string (m.levels_per_octave) + "\n";
  o += "blur " + number_text (m.blur[0] / 16.0) + " " + number_text (m.blur[1] / 16.0) + " " +
       number_text (m.blur[2] / 16.0) + "\n";
  o += "threshold " + number_text (m.threshold) + "\n";
  o += "nodes " + std::to_string (m.nodes_per_tree) + "\n";
  o += "[trees]\n# per node: score,threshold,left,x1,y1,x2,y2,z1,z2\n";
  const size_t K = static_cast<size_t> (m.nodes_per_tree);
  for (size_t t = 0; t < m.trees (); t++) {
    for (size_t i = 0; i < K; i++) {
      const ForestModel::Node &n = m.nodes[t * K + i];
      o += (i ? "," : "") + number_text (n.score) + "," + number_text (n.threshold) + "," +
           std::to_string (n.left) + "," + std::to_string (n.x1) + "," + std::to_string (n.y1) + "," +
           std::to_string (n.x2) + "," + std::to_string (n.y2) + "," + std::to_string (n.z1) + "," +
           std::to_string (n.z2);
    }
    o += "\n";
  }
  o += "[stages]\n# first tree,last tree,threshold\n";
  for (const ForestModel::Stage &s : m.stages)
    o += std::to_string (s.first) + "," + std::to_string (s.last) + "," + number_text (s.threshold) + "\n";
  return o;
}

Error load_forest_file (const std::string &path, ForestModel *out) {
  return load_model_file (path, parse_forest, out);
}

} // namespace gpudetect
