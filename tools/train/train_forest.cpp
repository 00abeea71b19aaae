// gpudetect-train-forest: trains a cascade of pixel-difference trees (the
// engine's random-forest family, models/README.md) from the training data of
// tools/train/fetch-data.sh.
//
//   gpudetect-train-forest --data DIR --out MODEL.forest [--shrink 2] [--levels-per-octave 4] [--seed 1] ...
//
// The learner:
// - a sample is a window's values as the detector computes them: the grey
//   frame blurred, a level resampled from it, summed over shrink x shrink
//   blocks, blurred again (fixed point, forest_blur_frame and
//   forest_level_plane).  Negatives are exactly the detector's windows of
//   face-free images (and of one-face images away from the face); positives
//   are every training face sampled the same way from the blurred frame
//   (bilinear, in double precision), with mirrored, shifted, scaled, turned and
//   re-lit copies;
// - every stage holds one tree of --depth levels of inner nodes.  Samples
//   carry weights exp(-y F) (F: the running sum), each class summing to 1/2.
//   Each inner node draws --candidates random pixel pairs of the window; for
//   each, the split threshold with the least weighted Gini impurity of the
//   two children (W+ W- / W summed over them; thresholds on a 128-bin grid of
//   the pair's differences at the node); the best pair and threshold win.  A
//   leaf's score is Real AdaBoost's 0.5 ln((W+ + e) / (W- + e)), within +-4;
// - the stage's threshold rejects the most negatives while the training
//   positives rejected by all stages so far stay within (1 - tpr) of them,
//   that budget opened evenly over the first --ramp stages (later stages
//   reject no positive that reaches them);
// - rejected samples leave; negatives are mined again whenever fewer than
//   half of --negatives are left (distinct windows the cascade so far does
//   not reject, evaluated exactly as the detector does; a refill visits
//   every level of every image at most once); training stops after --stages
//   or once a refill cannot bring the negatives back to half: every window
//   of the images was seen;
// - deterministic for a seed whatever the thread count: candidates are drawn
//   on one thread, ties go to the first, and mining runs fixed tasks in
//   batches and keeps their results in task order.
#include "dataset.h"
#include "families/forest/model.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <numeric>
#include <tuple>
#include <string>
#include <vector>

using namespace gpudetect;
using namespace gpudetect::train;

namespace {

struct Options {
  std::string data, out, name = "frontalface";
  int window = 20, shrink = 2, levels_per_octave = 4, depth = 2;
  int stages = 2048;
  int candidates = 256;
  double tpr = 0.97;
  double final_tpr = 0.9;
  int ramp = 64;
  int positives_per_face = 12;
  int negatives = 8000;
  int threads = 2;
  uint64_t seed = 1;
  bool mine_face_images = true;
  bool mine_mirror = true;
  int mine_levels_per_octave = 16;
  double cache_gb = 6;
};

void usage () {
  std::fprintf (stderr,
                "usage: gpudetect-train-forest --data DIR --out MODEL.forest [options]\n"
                "  --window N             window side in level pixels, a multiple of --shrink (20)\n"
                "  --shrink M             values are sums over M x M level pixels (2)\n"
                "  --levels-per-octave N  pyramid levels an octave, for mining and stored in the model (4)\n"
                "  --depth D              levels of inner nodes a tree (2: 3 inner nodes, 7 nodes)\n"
                "  --stages N             stages, one tree each, at most (2048)\n"
                "  --candidates N         random pixel pairs tried at every inner node (256)\n"
                "  --tpr R                training positives kept by the whole cascade (0.97)\n"
                "  --final-tpr R          the final threshold keeps this share of the training positives that\n"
                "                         pass every stage (0.9; 1: every window that passes is a hit)\n"
                "  --ramp N               stages over which the positives' budget (1 - tpr) opens (64)\n"
                "  --positives-per-face N samples per labelled face, the first unchanged (12)\n"
                "  --negatives N          negative samples kept in training (8000)\n"
                "  --mine-levels-per-octave N  pyramid levels an octave when mining negatives (16)\n"
                "  --no-mirror-negatives  mine only the images as they are, not also their mirror images\n"
                "  --plane-cache-gb G     the mined levels' planes kept in memory up to G GiB (6)\n"
                "  --no-face-image-negatives  mine only face-free images, not also labelled images away\n"
                "                         from their faces\n"
                "  --threads N            worker threads (2)\n"
                "  --seed N               random seed (1)\n"
                "  --name NAME            the model's name (frontalface)\n");
}

// The training samples: every window's values (cells_x x cells_y, row-major),
// its label and running sum.  Positives first.
struct Samples {
  int cells = 0; // values a sample
  size_t n = 0, npos = 0;
  std::vector<int32_t> values;
  std::vector<int64_t> sum;
  std::vector<uint64_t> id; // a negative's window (Miner::window_id); positives 0
  const int32_t *at (size_t i) const { return &values[i * cells]; }
  void append (const std::vector<int32_t> &v, const std::vector<int64_t> &s, const std::vector<uint64_t> &ids) {
    values.insert (values.end (), v.begin (), v.end ());
    sum.insert (sum.end (), s.begin (), s.end ());
    id.insert (id.end (), ids.begin (), ids.end ());
    n += s.size ();
  }
  void compact (const std::vector<char> &keep) {
    size_t j = 0, pos = 0;
    for (size_t i = 0; i < n; i++) {
      if (!keep[i])
        continue;
      if (i != j)
        std::memcpy (&values[j * cells], &values[i * cells], cells * sizeof (int32_t));
      sum[j] = sum[i];
      id[j] = id[i];
      pos += i < npos;
      j++;
    }
    n = j;
    npos = pos;
    values.resize (n * cells);
    sum.resize (n);
    id.resize (n);
  }
};

// A face view's values as the detector would compute them at a level where
// the view's square is exactly the window: the blurred frame `b` (units of
// 1 / (255 * 256), forest_blur_frame) sampled bilinearly at the level's pixel
// centres over the window and a margin of one cell, summed over M x M blocks,
// blurred, the inner cells kept; in the planes' fixed point.
void view_values (const ForestModel &m, const std::vector<uint16_t> &b, int w, int h, const View &v, int32_t *out) {
  const int M = m.shrink, cx = m.cells_x () + 2, cy = m.cells_y () + 2;
  const int lw = cx * M, lh = cy * M;
  const double step = v.side / m.window_width, c = std::cos (v.angle) * step, s = std::sin (v.angle) * step;
  std::vector<double> px (static_cast<size_t> (lw) * lh);
  auto at = [&] (int x, int y) {
    return b[static_cast<size_t> (std::clamp (y, 0, h - 1)) * w + std::clamp (x, 0, w - 1)] / 256.0;
  };
  double mean = 0;
  for (int y = 0; y < lh; y++)
    for (int x = 0; x < lw; x++) {
      double du = x + 0.5 - lw * 0.5, dv = y + 0.5 - lh * 0.5;
      if (v.mirror)
        du = -du;
      const double fx = v.cx + c * du - s * dv - 0.5, fy = v.cy + s * du + c * dv - 0.5;
      const int ix = static_cast<int> (std::floor (fx)), iy = static_cast<int> (std::floor (fy));
      const double ax = fx - ix, ay = fy - iy;
      const double p = (at (ix, iy) * (1 - ax) + at (ix + 1, iy) * ax) * (1 - ay) +
                       (at (ix, iy + 1) * (1 - ax) + at (ix + 1, iy + 1) * ax) * ay;
      px[static_cast<size_t> (y) * lw + x] = p;
      mean += p;
    }
  mean /= static_cast<double> (px.size ());
  std::vector<double> raw (static_cast<size_t> (cx) * cy, 0.0);
  for (int y = 0; y < lh; y++)
    for (int x = 0; x < lw; x++) {
      const double p = std::clamp ((px[static_cast<size_t> (y) * lw + x] - mean) * v.gain + mean + v.bias, 0.0, 255.0);
      raw[static_cast<size_t> (y / M) * cx + x / M] += p;
    }
  const double k[3] = {m.blur[0] / 16.0, m.blur[1] / 16.0, m.blur[2] / 16.0};
  for (int y = 1; y + 1 < cy; y++)
    for (int x = 1; x + 1 < cx; x++) {
      double acc = 0;
      for (int j = -1; j <= 1; j++)
        for (int i = -1; i <= 1; i++)
          acc += k[j + 1] * k[i + 1] * raw[static_cast<size_t> (y + j) * cx + x + i];
      out[(y - 1) * (cx - 2) + x - 1] = static_cast<int32_t> (std::lround (acc * 65536.0));
    }
}

// The cascade in the arithmetic of the engine, for the miner: splits and
// leaves in fixed point (forest_split, forest_leaf), one tree a stage.
struct QuantCascade {
  struct Node {
    int32_t split;
    int left;
    int x1, y1, x2, y2;
    int64_t leaf;
  };
  int K = 0;
  std::vector<Node> nodes;
  std::vector<int64_t> reject_below;

  void add_stage (const ForestModel &m, size_t s) {
    K = m.nodes_per_tree;
    const ForestModel::Stage &st = m.stages[s];
    for (int i = 0; i < K; i++) {
      const ForestModel::Node &n = m.nodes[static_cast<size_t> (st.first) * K + i];
      nodes.push_back ({forest_split (n.threshold), n.left, n.x1, n.y1, n.x2, n.y2, forest_leaf (n.score, 1)});
    }
    reject_below.push_back (forest_reject_below (st.threshold));
  }
  // Whether the window passes every stage, and its sum.
  bool pass (const int32_t *win, int stride, int64_t *sum) const {
    int64_t s = 0;
    for (size_t t = 0; t < reject_below.size (); t++) {
      const Node *tree = &nodes[t * K];
      int i = 0;
      while (tree[i].left >= 0) {
        const Node &n = tree[i];
        const int32_t d = win[n.y1 * stride + n.x1] - win[n.y2 * stride + n.x2];
        i = d < n.split ? n.left : n.left + 1;
      }
      s += tree[i].leaf;
      if (s < reject_below[t])
        return false;
    }
    *sum = s;
    return true;
  }
};

// Negative windows mined from images: windows the cascade so far does not
// reject, with their values and sums, exactly as the detector computes them
// (every level's plane made once, by forest_level_plane).  The levels of all
// images are visited in a random order, at most once a refill, and a window
// already in the training set is not taken again: every negative is a
// distinct window, and a refill that finds too few has seen every window.
class Miner {
public:
  struct Source {
    const Image *image;
    std::vector<Box> exclude; // boxes no mined window may overlap
  };
  // Mines the sources, and their mirror images when `mirror`, through
  // pyramids of `levels_per_octave` levels an octave (more than the model's
  // own: windows at scales between the detector's are windows it meets on
  // other frames); the planes of the first sources are kept while they fit
  // in `cache_bytes`, the others made again at each visit.
  Miner (const ForestModel &m, std::vector<Source> sources, bool mirror, int levels_per_octave, double cache_bytes,
         uint64_t seed, int threads)
      : sources_ (std::move (sources)), rng_ (seed) {
    if (mirror) {
      const size_t n = sources_.size ();
      for (size_t i = 0; i < n; i++) {
        const Image &img = *sources_[i].image;
        Image f = img;
        for (int y = 0; y < img.height; y++)
          std::reverse (f.px.begin () + static_cast<size_t> (y) * img.width,
                        f.px.begin () + static_cast<size_t> (y + 1) * img.width);
        mirrored_.push_back (std::move (f));
        std::vector<Box> ex = sources_[i].exclude;
        for (Box &b : ex)
          b.x = img.width - b.x - b.w;
        sources_.push_back ({&mirrored_.back (), ex});
      }
    }
    struct Job {
      size_t source, level;
    };
    std::vector<Job> jobs;
    for (size_t i = 0; i < sources_.size (); i++) {
      const Image &img = *sources_[i].image;
      plans_.push_back (plan_pyramid_octaves (img.width, img.height, m.window_width, m.window_height,
                                              levels_per_octave, m.shrink, {0, 0}, {0, 0}));
      for (size_t l = 0; l < plans_.back ().levels.size (); l++)
        jobs.push_back ({i, l});
    }
    planes_.resize (sources_.size ());
    blurred_.resize (sources_.size ());
    std::vector<char> cached (sources_.size (), 0);
    double bytes = 0;
    for (size_t i = 0; i < sources_.size (); i++) {
      planes_[i].resize (plans_[i].levels.size ());
      double b = 0;
      for (const PyramidLevel &l : plans_[i].levels)
        b += 4.0 * (l.width / l.step) * (l.height / l.step);
      cached[i] = bytes + b <= cache_bytes;
      bytes += cached[i] ? b : 0;
    }
    parallel_for (threads, sources_.size (), [&] (int, size_t a, size_t b) {
      for (size_t i = a; i < b; i++) {
        const Image &img = *sources_[i].image;
        blurred_[i] = forest_blur_frame (m, img.px.data (), img.width, img.height, img.width);
        for (size_t l = 0; cached[i] && l < plans_[i].levels.size (); l++)
          planes_[i][l] = forest_level_plane (m, blurred_[i], img.width, img.height, plans_[i], l);
      }
    });
    cached_bytes_ = bytes;
    for (const Job &j : jobs)
      windows_ += static_cast<double> (plans_[j.source].levels[j.level].nx) * plans_[j.source].levels[j.level].ny;
    std::shuffle (jobs.begin (), jobs.end (), rng_);
    for (const Job &j : jobs)
      order_.push_back ({j.source, j.level});
  }
  // A window's identity: its image, level and position.
  static uint64_t window_id (size_t source, size_t level, uint64_t pos) {
    return (static_cast<uint64_t> (source) + 1) << 40 | static_cast<uint64_t> (level) << 28 | pos;
  }
  double windows () const { return windows_; }
  double cached_bytes () const { return cached_bytes_; }
  size_t sources () const { return sources_.size (); }
  size_t levels () const { return order_.size (); }

  // Runs tasks (an image's level each, in the miner's order, going on from
  // where the last refill stopped), a batch at a time, until `want` windows
  // are found or every level was visited once.  `taken`: the windows in the
  // training set.
  size_t mine (const ForestModel &m, const QuantCascade &q, size_t want, const std::vector<uint64_t> &taken,
               int threads, std::vector<int32_t> *values, std::vector<int64_t> *sums, std::vector<uint64_t> *ids,
               uint64_t *tried) {
    size_t found = 0, visited = 0;
    *tried = 0;
    const int cells = m.cells_x () * m.cells_y ();
    std::vector<uint64_t> have (taken);
    std::sort (have.begin (), have.end ());
    while (found < want && visited < order_.size ()) {
      std::vector<Task> tasks;
      for (int k = 0; k < 16 && visited < order_.size (); k++, visited++) { // 16 whatever the thread count
        Task t;
        std::tie (t.image, t.level) = order_[cursor_];
        cursor_ = (cursor_ + 1) % order_.size ();
        t.seed = rng_ ();
        tasks.push_back (t);
      }
      parallel_for (threads, tasks.size (), [&] (int, size_t a, size_t b) {
        for (size_t i = a; i < b; i++)
          run (m, q, have, &tasks[i]);
      });
      for (Task &t : tasks) {
        *tried += t.tried;
        for (size_t k = 0; k < t.sums.size () && found < want; k++, found++) {
          values->insert (values->end (), t.values.begin () + k * cells, t.values.begin () + (k + 1) * cells);
          sums->push_back (t.sums[k]);
          ids->push_back (t.ids[k]);
        }
      }
    }
    return found;
  }

private:
  struct Task {
    size_t image = 0, level = 0;
    uint64_t seed = 0;
    std::vector<int32_t> values;
    std::vector<int64_t> sums;
    std::vector<uint64_t> ids;
    uint64_t tried = 0;
  };
  static constexpr size_t kPerTask = 24; // windows kept from one task at most, so that no image dominates
  static constexpr double kExcludeIoU = 0.2;

  void run (const ForestModel &m, const QuantCascade &q, const std::vector<uint64_t> &have, Task *t) const {
    const PyramidGeometry &g = plans_[t->image];
    if (g.levels.empty ())
      return;
    const std::vector<Box> &exclude = sources_[t->image].exclude;
    const PyramidLevel &l = g.levels[t->level];
    std::vector<int32_t> made;
    const std::vector<int32_t> *cached = &planes_[t->image][t->level];
    if (cached->empty ()) {
      const Image &img = *sources_[t->image].image;
      made = forest_level_plane (m, blurred_[t->image], img.width, img.height, g, t->level);
      cached = &made;
    }
    const std::vector<int32_t> &plane = *cached;
    const int cw = l.width / l.step, ncx = m.cells_x (), ncy = m.cells_y ();
    // Every window once, in the order start + k * stride (mod n), stride
    // prime to n: a random order without a list.
    const uint64_t n = static_cast<uint64_t> (l.nx) * l.ny;
    if (n == 0)
      return;
    std::mt19937_64 rng (t->seed);
    const uint64_t start = rng () % n;
    uint64_t stride = 1 + rng () % n;
    while (std::gcd (stride, n) != 1)
      stride++;
    for (uint64_t k = 0, p = start; k < n; k++, p = (p + stride) % n) {
      const int x = static_cast<int> (p % l.nx), y = static_cast<int> (p / l.nx);
      const double s = l.scale;
      if (!exclude.empty () && overlaps (x * l.step * s, y * l.step * s, m.window_width * s, exclude, kExcludeIoU))
        continue;
      t->tried++;
      const int32_t *win = plane.data () + static_cast<size_t> (y) * cw + x;
      int64_t sum = 0;
      if (!q.pass (win, cw, &sum))
        continue;
      const uint64_t id = window_id (t->image, t->level, p);
      if (std::binary_search (have.begin (), have.end (), id))
        continue;
      t->ids.push_back (id);
      for (int r = 0; r < ncy; r++)
        t->values.insert (t->values.end (), win + static_cast<size_t> (r) * cw, win + static_cast<size_t> (r) * cw + ncx);
      t->sums.push_back (sum);
      if (t->sums.size () >= kPerTask)
        break;
    }
  }

  std::vector<Source> sources_;
  std::deque<Image> mirrored_;
  std::vector<std::vector<uint16_t>> blurred_;
  std::vector<PyramidGeometry> plans_;
  std::vector<std::vector<std::vector<int32_t>>> planes_; // [source][level]
  double windows_ = 0, cached_bytes_ = 0;
  std::vector<std::pair<size_t, size_t>> order_; // (source, level), shuffled
  size_t cursor_ = 0;
  std::mt19937_64 rng_;
};

struct Split {
  double cost = INFINITY;
  int pair = -1;
  int32_t threshold = 0; // left when the difference is below it
};

constexpr int kBins = 128;

// The best split of the samples `idx` over the candidate pairs (p1, p2:
// value indices): least weighted Gini impurity.
Split best_split (const Samples &S, const std::vector<double> &w, const std::vector<size_t> &idx,
                  const std::vector<std::pair<int, int>> &pairs, int threads) {
  std::vector<Split> best (threads);
  parallel_for (threads, pairs.size (), [&] (int th, size_t a, size_t b) {
    std::vector<int32_t> d (idx.size ());
    double wp[kBins], wn[kBins];
    Split bs;
    for (size_t c = a; c < b; c++) {
      const auto [p1, p2] = pairs[c];
      int64_t lo = INT64_MAX, hi = INT64_MIN;
      for (size_t k = 0; k < idx.size (); k++) {
        const int32_t *v = S.at (idx[k]);
        d[k] = v[p1] - v[p2];
        lo = std::min<int64_t> (lo, d[k]);
        hi = std::max<int64_t> (hi, d[k]);
      }
      if (idx.empty () || lo == hi)
        continue;
      const int64_t range = hi - lo + 1;
      std::fill (wp, wp + kBins, 0.0);
      std::fill (wn, wn + kBins, 0.0);
      double tp = 0, tn = 0;
      for (size_t k = 0; k < idx.size (); k++) {
        const int bin = static_cast<int> ((d[k] - lo) * kBins / range);
        if (idx[k] < S.npos) {
          wp[bin] += w[idx[k]];
          tp += w[idx[k]];
        } else {
          wn[bin] += w[idx[k]];
          tn += w[idx[k]];
        }
      }
      double lp = 0, ln = 0;
      for (int k = 1; k < kBins; k++) {
        lp += wp[k - 1];
        ln += wn[k - 1];
        const double rp = tp - lp, rn = tn - ln;
        if (lp + ln <= 0 || rp + rn <= 0)
          continue;
        const double cost = lp * ln / (lp + ln) + rp * rn / (rp + rn);
        if (cost < bs.cost) {
          bs.cost = cost;
          bs.pair = static_cast<int> (c);
          // d < lo + ceil(k range / bins)  <=>  bin(d) < k
          bs.threshold = static_cast<int32_t> (lo + (k * range + kBins - 1) / kBins);
        }
      }
    }
    best[th] = bs;
  });
  Split s;
  for (const Split &b : best) // threads hold ascending ranges: the first of equals wins
    if (b.cost < s.cost)
      s = b;
  return s;
}

// A threshold t whose forest_split is exactly q.
double split_threshold (int32_t q) {
  double t = (q - 0.5) / kForestValueUnits;
  if (forest_split (t) != q) {
    std::fprintf (stderr, "internal error: split threshold %d does not round back\n", q);
    std::exit (1);
  }
  return t;
}

} // namespace

int main (int argc, char **argv) {
  std::setvbuf (stdout, nullptr, _IOLBF, 0); // progress lines as they come, also into a file
  Options o;
  for (int i = 1; i < argc; i++) {
    const std::string a = argv[i];
    auto next = [&] () -> const char * {
      if (i + 1 >= argc) {
        usage ();
        std::exit (2);
      }
      return argv[++i];
    };
    if (a == "--data")
      o.data = next ();
    else if (a == "--out")
      o.out = next ();
    else if (a == "--name")
      o.name = next ();
    else if (a == "--window")
      o.window = std::atoi (next ());
    else if (a == "--shrink")
      o.shrink = std::atoi (next ());
    else if (a == "--levels-per-octave")
      o.levels_per_octave = std::atoi (next ());
    else if (a == "--depth")
      o.depth = std::atoi (next ());
    else if (a == "--stages")
      o.stages = std::atoi (next ());
    else if (a == "--candidates")
      o.candidates = std::atoi (next ());
    else if (a == "--tpr")
      o.tpr = std::atof (next ());
    else if (a == "--final-tpr")
      o.final_tpr = std::atof (next ());
    else if (a == "--ramp")
      o.ramp = std::atoi (next ());
    else if (a == "--positives-per-face")
      o.positives_per_face = std::atoi (next ());
    else if (a == "--negatives")
      o.negatives = std::atoi (next ());
    else if (a == "--mine-levels-per-octave")
      o.mine_levels_per_octave = std::atoi (next ());
    else if (a == "--no-mirror-negatives")
      o.mine_mirror = false;
    else if (a == "--plane-cache-gb")
      o.cache_gb = std::atof (next ());
    else if (a == "--no-face-image-negatives")
      o.mine_face_images = false;
    else if (a == "--threads")
      o.threads = std::max (1, std::atoi (next ()));
    else if (a == "--seed")
      o.seed = std::strtoull (next (), nullptr, 10);
    else {
      usage ();
      return 2;
    }
  }
  if (o.data.empty () || o.out.empty () || o.shrink < 1 || o.shrink > kForestMaxShrink || o.window % o.shrink ||
      o.window / o.shrink < 2 || o.window > kForestMaxWindow || o.levels_per_octave < 1 ||
      o.levels_per_octave > kForestMaxLevelsPerOctave || o.mine_levels_per_octave < 1 ||
      o.mine_levels_per_octave > 64 || o.depth < 1 || o.depth > 7 || o.stages < 1 ||
      o.candidates < 1 || !(o.tpr > 0 && o.tpr <= 1) || !(o.final_tpr > 0 && o.final_tpr <= 1) || o.ramp < 1 || o.positives_per_face < 1 || o.negatives < 10) {
    usage ();
    return 2;
  }
  const double t_start = now_seconds ();

  ForestModel model;
  model.name = o.name;
  model.window_width = model.window_height = o.window;
  model.shrink = o.shrink;
  model.levels_per_octave = o.levels_per_octave;
  model.nodes_per_tree = (1 << (o.depth + 1)) - 1;
  const int K = model.nodes_per_tree, inner = (1 << o.depth) - 1;
  const int ncx = model.cells_x (), ncy = model.cells_y ();

  TrainingSet data;
  if (gpudetect::Error e = load_training_set (o.data, &data)) {
    std::fprintf (stderr, "%s\n", e.message.c_str ());
    return 1;
  }
  Samples S;
  S.cells = ncx * ncy;
  std::mt19937_64 rng (o.seed);
  {
    std::vector<int32_t> values;
    for (size_t i = 0; i < data.faces.size (); i++) {
      const Image &img = data.face_images[i];
      const std::vector<uint16_t> b = forest_blur_frame (model, img.px.data (), img.width, img.height, img.width);
      for (const Box &box : data.faces[i].faces)
        for (const View &v : face_views (box, o.positives_per_face, Augment (), rng)) {
          values.resize (values.size () + S.cells);
          view_values (model, b, img.width, img.height, v, &values[values.size () - S.cells]);
        }
    }
    const size_t P0 = values.size () / S.cells;
    S.append (values, std::vector<int64_t> (P0, 0), std::vector<uint64_t> (P0, 0));
    S.npos = P0;
  }
  const size_t P0 = S.npos;
  std::printf ("data: %zu faces in %zu images -> %zu positive samples; %zu negative images (%.1f Mpixels)\n"
               "model: window %dx%d, shrink %d (%dx%d values), %d levels an octave, trees of %d nodes\n",
               data.face_count, data.faces.size (), P0, data.negatives.size (), data.negative_pixels / 1e6,
               o.window, o.window, o.shrink, ncx, ncy, o.levels_per_octave, K);

  std::vector<Miner::Source> sources;
  for (const Image &img : data.negatives)
    sources.push_back ({&img, {}});
  if (o.mine_face_images)
    for (size_t i = 0; i < data.faces.size (); i++) {
      if (data.faces[i].faces.size () != 1 || !data.faces[i].ignore.empty ())
        continue;
      sources.push_back ({&data.face_images[i], data.faces[i].faces});
    }
  const double t_planes = now_seconds ();
  Miner miner (model, std::move (sources), o.mine_mirror, o.mine_levels_per_octave, o.cache_gb * 1073741824.0, rng (),
               o.threads);
  std::printf ("mining: %zu levels of %zu images (%d an octave%s), %.3g windows; %.1f GiB of planes made in %.1f s\n",
               miner.levels (), miner.sources (), o.mine_levels_per_octave, o.mine_mirror ? ", mirrored too" : "",
               miner.windows (), miner.cached_bytes () / 1073741824.0, now_seconds () - t_planes);
  QuantCascade quant;

  double acceptance = 1;
  auto refill = [&] (const char *why) -> bool {
    const size_t want = static_cast<size_t> (o.negatives) - (S.n - S.npos);
    std::vector<int32_t> values;
    std::vector<int64_t> sums;
    std::vector<uint64_t> ids;
    uint64_t tried = 0;
    const double t0 = now_seconds ();
    const std::vector<uint64_t> taken (S.id.begin () + S.npos, S.id.end ());
    const size_t got = miner.mine (model, quant, want, taken, o.threads, &values, &sums, &ids, &tried);
    S.append (values, sums, ids);
    acceptance = tried ? static_cast<double> (got) / tried : 0.0;
    std::printf ("  mined %zu/%zu negatives (%s) from %llu windows (acceptance %.3g) in %.1f s\n", got, want, why,
                 static_cast<unsigned long long> (tried), acceptance, now_seconds () - t0);
    std::fflush (stdout);
    return got == want;
  };
  refill ("initial");
  size_t refill_below = static_cast<size_t> (o.negatives) / 2;

  double s_neg = 1.0; // share of the negative population that reaches the current stage
  size_t pos_rejected = 0;
  std::vector<double> w;
  std::uniform_int_distribution<int> cell_x (0, ncx - 1), cell_y (0, ncy - 1);
  for (int t = 0; t < o.stages; t++) {
    const double t0 = now_seconds ();
    class_weights (S.sum, S.npos, &w);

    // Grow the tree breadth first: node i's children are 2i+1 and 2i+2.
    std::vector<ForestModel::Node> tree (K);
    std::vector<std::vector<size_t>> at (K);
    at[0].resize (S.n);
    for (size_t i = 0; i < S.n; i++)
      at[0][i] = i;
    for (int i = 0; i < K; i++) {
      ForestModel::Node &nd = tree[i];
      double wpos = 0, wneg = 0;
      for (size_t k : at[i])
        (k < S.npos ? wpos : wneg) += w[k];
      if (i < inner && wpos > 0 && wneg > 0) {
        std::vector<std::pair<int, int>> pairs (o.candidates);
        for (auto &[p1, p2] : pairs) {
          p1 = cell_y (rng) * ncx + cell_x (rng);
          p2 = cell_y (rng) * ncx + cell_x (rng);
        }
        const Split s = best_split (S, w, at[i], pairs, o.threads);
        if (s.pair >= 0) {
          const auto [p1, p2] = pairs[s.pair];
          nd.left = 2 * i + 1;
          nd.threshold = split_threshold (s.threshold);
          nd.x1 = p1 % ncx;
          nd.y1 = p1 / ncx;
          nd.x2 = p2 % ncx;
          nd.y2 = p2 / ncx;
          for (size_t k : at[i]) {
            const int32_t *v = S.at (k);
            at[v[p1] - v[p2] < s.threshold ? nd.left : nd.left + 1].push_back (k);
          }
          continue;
        }
      }
      // A leaf (also every node under it, unreachable).
      const double eps = 0.5 / static_cast<double> (S.n);
      nd.score = std::clamp (0.5 * std::log ((wpos + eps) / (wneg + eps)), -4.0, 4.0);
      for (size_t k : at[i])
        S.sum[k] += forest_leaf (nd.score, 1);
    }
    model.nodes.insert (model.nodes.end (), tree.begin (), tree.end ());

    // The stage's threshold: the positives' budget so far.
    std::vector<int64_t> ps (S.sum.begin (), S.sum.begin () + S.npos);
    std::sort (ps.begin (), ps.end ());
    const double open = std::min (1.0, (t + 1.0) / o.ramp);
    const size_t allowed = static_cast<size_t> ((1 - o.tpr) * open * static_cast<double> (P0));
    const size_t k = allowed > pos_rejected ? std::min (allowed - pos_rejected, ps.size () - 1) : 0;
    // On a grid of 2^-20 so that the double holds it exactly; at or below
    // the positive it keeps.
    const int64_t grid = int64_t (1) << 12;
    const int64_t thr = ps[k] >= 0 ? ps[k] / grid * grid : -((-ps[k] + grid - 1) / grid) * grid;
    ForestModel::Stage st;
    st.first = st.last = t;
    st.threshold = static_cast<double> (thr) * 0x1p-32;
    if (forest_reject_below (st.threshold) != thr) {
      std::fprintf (stderr, "internal error: stage threshold does not round back\n");
      return 1;
    }
    model.stages.push_back (st);
    quant.add_stage (model, model.stages.size () - 1);

    std::vector<char> keep (S.n);
    size_t rej_pos = 0, rej_neg = 0;
    for (size_t i = 0; i < S.n; i++) {
      keep[i] = S.sum[i] >= thr;
      if (!keep[i])
        (i < S.npos ? rej_pos : rej_neg)++;
    }
    const size_t nneg_before = S.n - S.npos;
    S.compact (keep);
    pos_rejected += rej_pos;
    s_neg *= 1.0 - static_cast<double> (rej_neg) / std::max<size_t> (1, nneg_before);
    const ForestModel::Node &r = tree[0];
    std::printf ("stage %d/%d: root (%d,%d)-(%d,%d) < %.4f  threshold %.4f  rejected %zu neg, %zu pos  alive %zu "
                 "pos (%.4f), %zu neg  S-=%.3g  %.2f s\n",
                 t + 1, o.stages, r.x1, r.y1, r.x2, r.y2, r.threshold, st.threshold, rej_neg, rej_pos, S.npos,
                 static_cast<double> (S.npos) / P0, S.n - S.npos, s_neg, now_seconds () - t0);
    std::fflush (stdout);
    // Refill below half the pool; stop once a refill cannot bring the pool
    // back to half of --negatives (the thresholds of later stages would rest
    // on too few negatives).
    if (S.n - S.npos < refill_below) {
      const bool full = refill ("refill");
      refill_below = full ? static_cast<size_t> (o.negatives) / 2 : (S.n - S.npos) / 2;
      if (S.n - S.npos < static_cast<size_t> (o.negatives) / 2) {
        std::printf ("negatives exhausted: %zu left after mining; the stages so far pass about %.2g of the windows "
                     "of the images mined\n", S.n - S.npos, acceptance);
        break;
      }
    }
  }
  // The final threshold: the least sum of the best --final-tpr of the
  // training positives (at least the last stage's threshold), on the 2^-20
  // grid; the element's threshold property replaces it.
  {
    std::vector<int64_t> ps (S.sum.begin (), S.sum.begin () + S.npos);
    std::sort (ps.begin (), ps.end ());
    const size_t k = std::min (ps.size () - 1, static_cast<size_t> ((1 - o.final_tpr) * static_cast<double> (ps.size ())));
    const int64_t grid = int64_t (1) << 12;
    const int64_t q = std::max (forest_reject_below (model.stages.back ().threshold),
                                ps[k] >= 0 ? ps[k] / grid * grid : -((-ps[k] + grid - 1) / grid) * grid);
    model.threshold = static_cast<double> (q) * 0x1p-32;
  }

  size_t neg_hits = 0;
  for (size_t i = S.npos; i < S.n; i++)
    neg_hits += S.sum[i] >= forest_final (model.threshold);
  std::printf ("done: %zu stages; training positives kept %.4f, final threshold %.4f; negatives reaching the end "
               "%.3g of the population, of them at the final threshold %zu of %zu; %.0f s\n",
               model.stages.size (), static_cast<double> (S.npos) / P0, model.threshold, s_neg, neg_hits, S.n - S.npos,
               now_seconds () - t_start);
  const std::string text = write_forest (model);
  FILE *f = std::fopen (o.out.c_str (), "w");
  if (!f || std::fwrite (text.data (), 1, text.size (), f) != text.size () || std::fclose (f) != 0) {
    std::fprintf (stderr, "cannot write %s\n", o.out.c_str ());
    return 1;
  }
  ForestModel check;
  if (gpudetect::Error e = load_forest_file (o.out, &check)) {
    std::fprintf (stderr, "the model written does not read back: %s\n", e.message.c_str ());
    return 1;
  }
  std::printf ("wrote %s\n", o.out.c_str ());
  return 0;
}
