// Random-forest cascades on the device against the reference: for every
// image, the raw windows (and their scores) of the GPU schedule, with several
// regroup settings, and of the CPU schedule equal those of a plain loop over
// every window of every level of the same pyramid, preprocessed on the host
// (forest_blur_frame, forest_level_plane) and evaluated with forest_evaluate.
// Models are made here: random trees (full, chains, stumps), stages of one
// or several trees (some shared, some that never reject), with the stage
// thresholds set on a sample of windows so that a share of them survives into
// the late stages.  With --model, a model file instead (whole, and its first
// 20 and 100 stages), on both schedules.
//
//   test-forest-schedules IMAGE.pgm...
//   test-forest-schedules --model FILE.forest IMAGE.pgm...
//   test-forest-schedules --write-models DIR IMAGE.pgm...   (the made models, for gpudetect-bench and
//                                                            the element test)
#include "check.h"
#include "pgm.h"
#include "detector.h"
#include "families/forest/model.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <unistd.h>
#include <vector>

using namespace gpudetect;

namespace {

using Key = std::tuple<int, int, int>; // level, x, y

// The planes of every level of a plan for an image.
std::vector<std::vector<int32_t>> planes (const ForestModel &m, const Grey &img, const PyramidGeometry &g) {
  const std::vector<uint16_t> b = forest_blur_frame (m, img.px.data (), img.cols, img.rows, img.cols);
  std::vector<std::vector<int32_t>> out;
  for (size_t li = 0; li < g.levels.size (); li++)
    out.push_back (forest_level_plane (m, b, img.cols, img.rows, g, li));
  return out;
}

// The reference's hits (and scores) over the plan's window grid.
std::vector<std::pair<Key, float>> reference (const ForestModel &m, const Grey &img, const PyramidGeometry &g,
                                              int *deepest) {
  std::vector<std::pair<Key, float>> out;
  const std::vector<std::vector<int32_t>> p = planes (m, img, g);
  const int64_t gamma = forest_final (m.threshold);
  for (size_t li = 0; li < g.levels.size (); li++) {
    const PyramidLevel &l = g.levels[li];
    const int cw = l.width / l.step;
    for (int iy = 0; iy < l.ny; iy++)
      for (int ix = 0; ix < l.nx; ix++) {
        const ForestVerdict v = forest_evaluate (m, p[li].data () + iy * cw + ix, cw, gamma);
        *deepest = std::max (*deepest, v.stages);
        if (v.hit)
          out.push_back ({{static_cast<int> (li), ix * l.step, iy * l.step}, v.score ()});
      }
  }
  return out;
}

// A tree's leaf for the window at w (a plane `stride` values wide), walked
// independently of forest_evaluate (for the calibration only).
const ForestModel::Node &leaf (const ForestModel &m, size_t t, const int32_t *w, int stride) {
  const ForestModel::Node *tree = m.nodes.data () + t * m.nodes_per_tree;
  int i = 0;
  while (tree[i].left >= 0) {
    const ForestModel::Node &n = tree[i];
    i = w[n.y1 * stride + n.x1] - w[n.y2 * stride + n.x2] < forest_split (n.threshold) ? n.left : n.left + 1;
  }
  return tree[i];
}

enum class Shape { Full, Chain, Stump };

// A made model: `stages` stages over random trees of the shape, the stage
// thresholds set on a sample of windows of `calib` so that keep[s] of the
// windows alive before stage s pass it (1: the stage never rejects), the
// final threshold at the median of the survivors' sums.
ForestModel made_model (uint32_t seed, int window, int shrink, int lpo, Shape shape, int stages, int max_trees,
                        const std::vector<double> &keep, const std::vector<Grey> &calib) {
  std::mt19937 rng (seed);
  std::uniform_real_distribution<double> u (-1.0, 1.0);
  ForestModel m;
  m.name = "made-forest-" + std::to_string (seed);
  m.window_width = m.window_height = window;
  m.shrink = shrink;
  m.levels_per_octave = lpo;
  m.nodes_per_tree = shape == Shape::Full ? 7 : shape == Shape::Chain ? 9 : 3;
  const int K = m.nodes_per_tree, cells = window / shrink;
  auto inner = [&] (int left) {
    ForestModel::Node n;
    n.left = left;
    n.x1 = static_cast<int> (rng () % cells);
    n.y1 = static_cast<int> (rng () % cells);
    n.x2 = static_cast<int> (rng () % cells);
    n.y2 = static_cast<int> (rng () % cells);
    // differences of blurred sums over shrink^2 pixels in [0, 1]; a quarter
    // at 0, where flat areas give differences exactly at the threshold
    n.threshold = rng () % 4 == 0 ? 0.0 : 0.05 * shrink * shrink * u (rng);
    return n;
  };
  auto leafn = [&] () {
    ForestModel::Node n;
    n.score = u (rng);
    n.threshold = 0.25; // ignored in a leaf, kept by the file
    return n;
  };
  // enough trees that stages share some
  const int ntrees = stages * (max_trees + 1) / 2 + 3;
  for (int t = 0; t < ntrees; t++) {
    std::vector<ForestModel::Node> tree (K);
    switch (shape) {
    case Shape::Full: // 0 -> 1, 2; 1 -> 3, 4; 2 -> 5, 6
      tree = {inner (1), inner (3), inner (5), leafn (), leafn (), leafn (), leafn ()};
      break;
    case Shape::Chain: // 0 -> 1, 2; 2 -> 3, 4; 4 -> 5, 6; 6 -> 7, 8 (rights go deeper)
      for (int i = 0; i < K; i++)
        tree[i] = i % 2 == 0 && i + 2 < K ? inner (i + 1) : leafn ();
      break;
    case Shape::Stump:
      tree = {inner (1), leafn (), leafn ()};
      break;
    }
    m.nodes.insert (m.nodes.end (), tree.begin (), tree.end ());
  }
  int next = 0;
  for (int s = 0; s < stages; s++) {
    ForestModel::Stage st;
    const int n = 1 + static_cast<int> (rng () % max_trees);
    if (s % 5 == 3 && s > 0) { // a stage over the trees of the one before, and more
      st.first = m.stages.back ().first;
    } else {
      st.first = next % (ntrees - max_trees);
    }
    st.last = std::min (st.first + n - 1, ntrees - 1);
    next = st.last + 1;
    m.stages.push_back (st);
  }
  // calibration: windows of every 3rd row and column of the calibration images
  struct W {
    const int32_t *p;
    int stride;
    int64_t sum;
  };
  std::vector<std::vector<int32_t>> keepalive;
  std::vector<W> alive;
  for (const Grey &img : calib) {
    const PyramidGeometry g = plan_pyramid_octaves (img.cols, img.rows, window, window, lpo, shrink, {0, 0}, {0, 0});
    for (std::vector<int32_t> &p : planes (m, img, g))
      keepalive.push_back (std::move (p));
    for (size_t li = 0; li < g.levels.size (); li++) {
      const PyramidLevel &l = g.levels[li];
      const std::vector<int32_t> &p = keepalive[keepalive.size () - g.levels.size () + li];
      for (int iy = 0; iy < l.ny; iy += 3)
        for (int ix = 0; ix < l.nx; ix += 3)
          alive.push_back ({p.data () + iy * (l.width / shrink) + ix, l.width / shrink, 0});
    }
  }
  for (int s = 0; s < stages && !alive.empty (); s++) {
    ForestModel::Stage &st = m.stages[s];
    const int n = st.last - st.first + 1;
    std::vector<int64_t> sums;
    for (W &w : alive) {
      for (int t = st.first; t <= st.last; t++)
        w.sum += forest_leaf (leaf (m, t, w.p, w.stride).score, n);
      sums.push_back (w.sum);
    }
    const double k = keep[std::min<size_t> (s, keep.size () - 1)];
    if (k >= 1)
      continue; // never rejects
    std::sort (sums.begin (), sums.end ());
    const int64_t cut = sums[static_cast<size_t> ((1 - k) * (sums.size () - 1))];
    st.threshold = static_cast<double> (cut) / 4294967296.0;
    std::vector<W> next_alive;
    for (const W &w : alive)
      if (w.sum >= forest_reject_below (st.threshold))
        next_alive.push_back (w);
    alive.swap (next_alive);
  }
  std::vector<int64_t> sums;
  for (const W &w : alive)
    sums.push_back (w.sum);
  std::sort (sums.begin (), sums.end ());
  m.threshold = sums.empty () ? 0 : static_cast<double> (sums[sums.size () / 2]) / 4294967296.0;
  return m;
}

std::string write_temp (const std::string &text) {
  char path[] = "/tmp/gpudetect-forest-XXXXXX.forest";
  const int fd = mkstemps (path, 7);
  if (fd < 0)
    return {};
  if (write (fd, text.data (), text.size ()) != static_cast<ssize_t> (text.size ()))
    std::perror ("write");
  close (fd);
  return path;
}

bool same_model (const ForestModel &a, const ForestModel &b) {
  if (a.name != b.name || a.window_width != b.window_width || a.window_height != b.window_height ||
      a.shrink != b.shrink || a.levels_per_octave != b.levels_per_octave || a.blur != b.blur ||
      a.threshold != b.threshold || a.nodes_per_tree != b.nodes_per_tree || a.nodes.size () != b.nodes.size () ||
      a.stages.size () != b.stages.size ())
    return false;
  for (size_t i = 0; i < a.nodes.size (); i++) {
    const ForestModel::Node &x = a.nodes[i], &y = b.nodes[i];
    if (x.score != y.score || x.threshold != y.threshold || x.left != y.left || x.x1 != y.x1 || x.y1 != y.y1 ||
        x.x2 != y.x2 || x.y2 != y.y2 || x.z1 != y.z1 || x.z2 != y.z2)
      return false;
  }
  for (size_t i = 0; i < a.stages.size (); i++)
    if (a.stages[i].first != b.stages[i].first || a.stages[i].last != b.stages[i].last ||
        a.stages[i].threshold != b.stages[i].threshold)
      return false;
  return true;
}

struct Totals {
  long ref = 0;
};

using Hits = std::set<std::pair<Key, float>>;

// The reference's hits of every image (computed once per model: the plan does
// not depend on the schedule).
struct Reference {
  std::vector<Hits> hits;
  int deepest = 0;
};

void compare (const std::string &what, const std::string &model_path, const ForestModel &m,
              const std::vector<Grey> &images, const std::vector<std::string> &names, const std::string &tuning,
              Reference *refs, Totals *t, int shrink = 0, int levels_per_octave = 0) {
  DetectorConfig cfg;
  cfg.model = model_path;
  cfg.shrink = shrink;
  cfg.levels_per_octave = levels_per_octave;
  cfg.min_neighbors = 0;
  cfg.slots = 1;
  cfg.hit_capacity = 1 << 20;
  cfg.tuning = tuning;
  std::string err;
  std::unique_ptr<Detector> det;
  if (gpudetect::Error e_ = Detector::create (cfg, &det))
    err = e_.message;
  CHECK_MSG (det, "%s [%s]: %s", what.c_str (), tuning.c_str (), err.c_str ());
  if (!det)
    return;
  CHECK_MSG (det->model ().family == "forest", "%s: family %s", what.c_str (), det->model ().family.c_str ());
  long ref_total = 0, differ = 0;
  uint32_t lost = 0;
  for (size_t i = 0; i < images.size (); i++) {
    const Grey &img = images[i];
    FrameResult res;
    const Frame f{img.px.data (), img.cols, img.rows, img.cols, PixelFormat::Gray8};
    err = det->detect (f, &res).message;
    CHECK_MSG (err.empty (), "%s", err.c_str ());
    CHECK (!res.truncated);
    lost += res.lost;
    Hits ours;
    for (const RawHit &h : res.hits)
      ours.insert ({{h.level, h.x, h.y}, h.score});
    if (refs->hits.size () <= i) {
      Hits r;
      for (const auto &k : reference (m, img, *det->geometry (), &refs->deepest))
        r.insert (k);
      refs->hits.push_back (std::move (r));
    }
    const Hits &ref = refs->hits[i];
    ref_total += static_cast<long> (ref.size ());
    long d = 0;
    for (const auto &k : ours)
      d += !ref.count (k);
    for (const auto &k : ref)
      d += !ours.count (k);
    if (d)
      std::printf ("  %s [%s] %s: %zu ours, %zu reference, %ld differ\n", what.c_str (), tuning.c_str (),
                   names[i].c_str (), ours.size (), ref.size (), d);
    differ += d;
  }
  std::printf ("%-34s %-44s %s: %ld reference hits, %ld differ, %u lost, deepest window %d of %zu stages\n",
               what.c_str (), tuning.c_str (), det->gpu_schedule () ? "gpu" : "cpu", ref_total, differ, lost,
               refs->deepest, m.stages.size ());
  CHECK_MSG (differ == 0, "%s [%s]: %ld raw windows differ from the reference", what.c_str (), tuning.c_str (), differ);
  CHECK_MSG (lost == 0, "%s [%s]: %u candidates lost", what.c_str (), tuning.c_str (), lost);
  t->ref += ref_total;
}

} // namespace

int main (int argc, char **argv) {
  std::string write_dir, model_file;
  std::vector<std::string> paths;
  for (int i = 1; i < argc; i++) {
    if (std::strcmp (argv[i], "--write-models") == 0 && i + 1 < argc)
      write_dir = argv[++i];
    else if (std::strcmp (argv[i], "--model") == 0 && i + 1 < argc)
      model_file = argv[++i];
    else
      paths.push_back (argv[i]);
  }
  std::vector<Grey> images;
  std::vector<std::string> names;
  for (const std::string &p : paths) {
    Grey g;
    const bool ok = read_pgm (p, &g);
    CHECK_MSG (ok, "cannot read %s (binary PGM expected)", p.c_str ());
    if (ok) {
      images.push_back (g);
      names.push_back (p.substr (p.find_last_of ('/') + 1));
    }
  }
  CHECK_MSG (!images.empty (), "no images");
  if (images.empty ())
    return finish ();
  const std::vector<Grey> calib (images.begin (), images.begin () + std::min<size_t> (images.size (), 3));

  struct Case {
    std::string name, path;
    ForestModel model;
    std::vector<std::string> tunings;
    int shrink = 0, levels_per_octave = 0; // the detector's overrides
  };
  std::vector<Case> cases;
  // keep: early stages reject more, late ones little, some never
  std::vector<double> keep_short = {0.5, 0.7, 0.7, 0.8, 0.8, 1, 0.85, 0.85, 0.9, 0.9, 1, 0.9};
  std::vector<double> keep_long = {0.5, 0.7, 0.7, 0.7, 0.7, 0.8, 0.8, 0.8, 0.8, 0.8, 0.8};
  for (int s = 11; s < 700; s++)
    keep_long.push_back (s % 50 == 7 ? 1 : 0.996);
  const std::vector<std::string> short_tunings = {
      "schedule=cpu", "schedule=gpu", "schedule=gpu;forest-regroup=none", "schedule=gpu;forest-regroup=1,2,3,4",
      "schedule=gpu;forest-regroup=3,9,17", "schedule=gpu;forest-regroup=3,9"};
  if (!model_file.empty ()) {
    // A model file (a trained one): whole, and its first 20 and 100 stages
    // (windows that a selective model rejects reach the end of a prefix),
    // on both schedules.
    ForestModel m;
    const std::string e = load_forest_file (model_file, &m).message;
    CHECK_MSG (e.empty (), "%s: %s", model_file.c_str (), e.c_str ());
    if (!e.empty ())
      return finish ();
    for (size_t n : {size_t (20), size_t (100), m.stages.size ()}) {
      if (n > m.stages.size () || (n < m.stages.size () && n == 0))
        continue;
      Case c;
      c.model = m;
      c.model.stages.resize (n);
      c.model.threshold = n < m.stages.size () ? m.stages[n - 1].threshold : m.threshold;
      c.name = model_file.substr (model_file.find_last_of ('/') + 1) + " first " + std::to_string (n) + " stages";
      c.tunings = {"schedule=cpu", "schedule=gpu", "schedule=gpu;forest-regroup=none"};
      cases.push_back (c);
    }
  } else {
  {
    Case c;
    c.model = made_model (1, 20, 2, 4, Shape::Full, 40, 3, keep_short, calib);
    c.name = "full trees 40 stages, M 2";
    c.tunings = short_tunings;
    cases.push_back (c);
  }
  {
    Case c;
    c.model = made_model (2, 24, 4, 8, Shape::Chain, 30, 2, keep_short, calib);
    c.model.blur = {0, 16, 0};
    c.name = "chains 30 stages, M 4, no blur";
    c.tunings = {"schedule=cpu", "schedule=gpu", "schedule=gpu;forest-regroup=2,5"};
    cases.push_back (c);
  }
  {
    Case c;
    c.model = made_model (3, 16, 1, 3, Shape::Stump, 20, 4, keep_short, calib);
    c.model.blur = {2, 12, 2};
    c.name = "stumps 20 stages, M 1";
    c.tunings = {"schedule=cpu", "schedule=gpu", "schedule=gpu;forest-regroup=1"};
    cases.push_back (c);
  }
  {
    // the seed's shape: one 7-node tree a stage, many stages, the default
    // regroup stages 11, 154, 600; with stages of up to 140 trees, chunks of
    // local memory hold a few stages each
    Case c;
    c.model = made_model (4, 20, 2, 4, Shape::Full, 700, 1, keep_long, calib);
    c.name = "full trees 700 stages, M 2";
    c.tunings = {"schedule=cpu", "schedule=gpu", "schedule=gpu;forest-regroup=40,300"};
    cases.push_back (c);
  }
  {
    Case c;
    c.model = made_model (5, 20, 2, 4, Shape::Full, 30, 146, keep_short, calib);
    c.name = "up to 146 trees a stage";
    c.tunings = {"schedule=cpu", "schedule=gpu", "schedule=gpu;forest-regroup=2,3"};
    cases.push_back (c);
  }
  // The model's shrink and levels per octave overridden (the element's shrink
  // and levels-per-octave properties): the window keeps its cells.
  for (const auto &[from, shrink, lpo] : {std::tuple (size_t (0), 3, 6), std::tuple (size_t (1), 1, 2)}) {
    Case c = cases[from];
    c.name += ", M " + std::to_string (shrink) + " N " + std::to_string (lpo);
    c.shrink = shrink;
    c.levels_per_octave = lpo;
    c.tunings = {"schedule=cpu", "schedule=gpu"};
    cases.push_back (c);
  }
  }
  for (Case &c : cases) {
    const std::string text = write_forest (c.model);
    ForestModel back;
    const std::string e = parse_forest (text, &back).message;
    CHECK_MSG (e.empty (), "%s: the written model does not load: %s", c.name.c_str (), e.c_str ());
    CHECK_MSG (same_model (c.model, back), "%s: the written model reads back otherwise", c.name.c_str ());
    CHECK_MSG (write_forest (back) == text, "%s: written twice, another text", c.name.c_str ());
    c.path = write_temp (text);
  }
  if (!write_dir.empty ()) {
    for (const Case &c : cases) {
      if (c.shrink || c.levels_per_octave) { // the same model
        unlink (c.path.c_str ());
        continue;
      }
      const std::string out = write_dir + "/" + c.model.name + ".forest";
      std::FILE *f = std::fopen (out.c_str (), "w");
      const std::string text = write_forest (c.model);
      CHECK_MSG (f && std::fwrite (text.data (), 1, text.size (), f) == text.size (), "cannot write %s", out.c_str ());
      if (f)
        std::fclose (f);
      unlink (c.path.c_str ());
    }
    return finish ();
  }
  Totals t;
  for (const Case &c : cases) {
    Reference refs;
    // the model the reference evaluates: the pyramid as overridden
    ForestModel m = c.model;
    if (c.shrink) {
      m.window_width = c.model.cells_x () * c.shrink;
      m.window_height = c.model.cells_y () * c.shrink;
      m.shrink = c.shrink;
    }
    if (c.levels_per_octave)
      m.levels_per_octave = c.levels_per_octave;
    for (const std::string &tuning : c.tunings)
      compare (c.name, c.path, m, images, names, tuning, &refs, &t, c.shrink, c.levels_per_octave);
  }
  for (const Case &c : cases)
    unlink (c.path.c_str ());
  CHECK_MSG (t.ref > 1000, "only %ld reference hits in all: the models decide too little", t.ref);
  return finish ();
}
