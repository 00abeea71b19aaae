// gpudetect-train-waldboost: trains a WaldBoost classifier over multi-block
// LBP features (the engine's WaldBoost family, models/README.md) from the
// training data of tools/train/fetch-data.sh.
//
//   gpudetect-train-waldboost --data DIR --out MODEL.xml [--stages 1024] [--alpha 0.01] [--seed 1] ...
//
// The learner (Sochman & Matas' WaldBoost with Real AdaBoost weak learners):
// - positives: every training face cut into window-size crops as the
//   detector samples its windows (bilinear, from the original image), with
//   mirrored, shifted, scaled, turned and re-lit copies; negatives: windows
//   of face-free images;
// - the feature pool: every 3x3 grid of w x h blocks (w, h up to
//   --max-block) inside the window; a feature's value is the LBP code (the
//   engine's waldboost_lbp_code);
// - each round picks the feature whose 256-bin histograms of the weighted
//   positives and negatives give the least Z = sum_c sqrt(W+_c W-_c) and adds
//   the response 0.5 ln((W+_c + e) / (W-_c + e)) for each code c, rounded
//   exactly as the engine rounds it (64-bit fixed point);
// - then Wald's sequential test: the window is rejected when its sum is below
//   negT, the largest threshold for which the positives it rejects stay within
//   alpha times the negatives it rejects, both counted as fractions of the
//   whole populations (the survivors' fractions times the share of each class
//   that reached this stage): F+(t) S+ <= alpha F-(t) S-.  Once that allows no
//   positive at all, negT sits half-way between the highest negative it
//   rejects and the lowest training positive;
// - rejected samples leave; negatives are mined again (windows the
//   classifier so far does not reject, from face-free images and from
//   single-face images away from the face) whenever fewer than half of
//   --negatives are left: on the host at first, on an OpenCL device through
//   the engine once few windows pass (--device); training stops once a
//   refill cannot bring them back to half of --negatives;
// - deterministic for a seed whatever the thread count: mining runs fixed
//   tasks in batches and keeps their results in task order.
#include "dataset.h"
#include "detector.h"
#include "families/waldboost/model.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

using namespace gpudetect;
using namespace gpudetect::train;

namespace {

struct Options {
  std::string data, out, name = "frontalface";
  int window = 24;
  int stages = 1024;
  double alpha = 0.01;
  int positives_per_face = 12;
  int negatives = 10000;
  int max_block = 8;
  int threads = 2;
  uint64_t seed = 1;
  double mine_windows = 1e9;  // windows tried at most per refill
  bool mine_face_images = true;
  std::string device; // OpenCL device for mining (empty: the host only)
  // The GPU schedule written with the model (<schedule>; measured with
  // bench/run-waldboost-benchmarks.sh), not used in training.
  std::vector<int> divisors;
  int sync_first = 0, sync_step = 0;
};

void usage () {
  std::fprintf (stderr,
                "usage: gpudetect-train-waldboost --data DIR --out MODEL.xml [options]\n"
                "  --stages N           weak hypotheses (1024)\n"
                "  --alpha A            false negative rate of the sequential test (0.01)\n"
                "  --positives-per-face N  crops per labelled face, the first unchanged (12)\n"
                "  --negatives N        negative windows kept in training (10000)\n"
                "  --max-block N        largest LBP block side in pixels (8)\n"
                "  --window N           window side in pixels (24)\n"
                "  --threads N          worker threads (2)\n"
                "  --seed N             random seed (1)\n"
                "  --mine-windows N     windows tried at most for one refill of negatives (1e9)\n"
                "  --device D           mine on this OpenCL device ('auto': the first) once the\n"
                "                       stages pass under 1 window in 1000 (the same windows on any device)\n"
                "  --no-face-image-negatives  mine negatives only from face-free images, not also from\n"
                "                       the labelled images away from their faces\n"
                "  --name NAME          classifierName (frontalface)\n"
                "  --divisors D,D,...   --sync-first N  --sync-step N\n"
                "                       the GPU schedule stored with the model (<schedule>; not used in training)\n");
}

struct Feature {
  int x, y, w, h;
};

std::vector<Feature> feature_pool (int W, int H, int max_block) {
  std::vector<Feature> f;
  for (int h = 1; h <= max_block; h++)
    for (int w = 1; w <= max_block; w++)
      for (int y = 0; y + 3 * h <= H; y++)
        for (int x = 0; x + 3 * w <= W; x++)
          f.push_back ({x, y, w, h});
  return f;
}

// Integral image of a window (W+1) x (H+1), 32-bit as the engine's.
void window_integral (const uint8_t *win, int W, int H, uint32_t *ii) {
  const int s = W + 1;
  std::fill (ii, ii + s, 0u);
  for (int y = 0; y < H; y++) {
    uint32_t row = 0;
    ii[(y + 1) * s] = 0;
    for (int x = 0; x < W; x++) {
      row += win[y * W + x];
      ii[(y + 1) * s + x + 1] = ii[y * s + x + 1] + row;
    }
  }
}

// A stage as the miner evaluates it (the engine's arithmetic).
struct QStage {
  int x, y, w, h;
  int64_t resp[256];
  int64_t reject_below;
};

// The training set: windows, labels, sums so far, and every feature's code
// for every window (feature-major, `cap` columns a row).
struct Samples {
  int W = 24, H = 24;
  size_t cap = 0, n = 0, npos = 0; // positives are columns [0, npos)
  std::vector<Feature> features;
  std::vector<uint8_t> codes;      // features.size () x cap
  std::vector<uint8_t> windows;    // n windows of W*H
  std::vector<int64_t> sum;        // running sum (fixed point) per window

  void reserve (size_t c) {
    cap = c;
    codes.assign (features.size () * cap, 0);
  }
  // Appends windows (W*H bytes each) with their sums, computing their codes.
  void append (const std::vector<uint8_t> &wins, const std::vector<int64_t> &sums, int threads) {
    const size_t k = sums.size (), first = n;
    if (n + k > cap) {
      std::fprintf (stderr, "internal error: sample capacity\n");
      std::exit (1);
    }
    windows.insert (windows.end (), wins.begin (), wins.end ());
    sum.insert (sum.end (), sums.begin (), sums.end ());
    n += k;
    parallel_for (threads, k, [&] (int, size_t a, size_t b) {
      std::vector<uint32_t> ii ((W + 1) * (H + 1));
      for (size_t i = a; i < b; i++) {
        window_integral (&windows[(first + i) * W * H], W, H, ii.data ());
        for (size_t f = 0; f < features.size (); f++) {
          const Feature &ft = features[f];
          codes[f * cap + first + i] =
              static_cast<uint8_t> (waldboost_lbp_code (ii.data (), W + 1, ft.x, ft.y, ft.w, ft.h));
        }
      }
    });
  }
  // Keeps the columns with keep[i] set, in order.
  void compact (const std::vector<char> &keep, int threads) {
    std::vector<size_t> from;
    size_t pos = 0;
    for (size_t i = 0; i < n; i++)
      if (keep[i]) {
        from.push_back (i);
        pos += i < npos;
      }
    parallel_for (threads, features.size (), [&] (int, size_t a, size_t b) {
      for (size_t f = a; f < b; f++) {
        uint8_t *row = &codes[f * cap];
        for (size_t j = 0; j < from.size (); j++)
          row[j] = row[from[j]];
      }
    });
    const size_t WH = static_cast<size_t> (W) * H;
    for (size_t j = 0; j < from.size (); j++) {
      if (from[j] != j)
        std::memcpy (&windows[j * WH], &windows[from[j] * WH], WH);
      sum[j] = sum[from[j]];
    }
    n = from.size ();
    npos = pos;
    windows.resize (n * WH);
    sum.resize (n);
  }
};

// Negative windows mined from face-free images: windows the stages so far do
// not reject, with their sums.
class Miner {
public:
  // A source image, with the boxes no mined window may overlap (faces and
  // ignore boxes of labelled images; none for face-free images).
  struct Source {
    const Image *image;
    std::vector<Box> exclude;
  };
  Miner (std::vector<Source> sources, int W, int H, uint64_t seed)
      : sources_ (std::move (sources)), W_ (W), H_ (H), rng_ (seed) {}

  // Runs tasks, a batch at a time, until `want` windows are found or
  // `budget` windows were tried; returns the windows found (in task order)
  // and how many windows were tried.
  //
  // With `engine` (the detector running the stages so far, every window that
  // passes them a hit), each task scans a whole pyramid of its image on the
  // OpenCL device instead: its scale factor drawn in [1.05, 1.15), the image
  // shifted by 0 or 1 pixel; a task whose hits overflow the engine's buffers
  // runs on the host instead.  The engine's answers are exact on every
  // device, so the windows found do not depend on which one runs it.
  size_t mine (const std::vector<QStage> &stages, size_t want, double budget, int threads, Detector *engine,
               std::vector<uint8_t> *wins, std::vector<int64_t> *sums, uint64_t *tried) {
    size_t found = 0;
    *tried = 0;
    while (found < want && *tried < budget) {
      const int batch = 16; // whatever the thread count, for the same results
      std::vector<Task> tasks (batch);
      for (Task &t : tasks)
        t = draw ();
      std::vector<char> on_host (tasks.size (), 1);
      if (engine)
        for (size_t i = 0; i < tasks.size (); i++)
          on_host[i] = !run_engine (stages, engine, &tasks[i]);
      parallel_for (threads, tasks.size (), [&] (int, size_t a, size_t b) {
        for (size_t i = a; i < b; i++)
          if (on_host[i])
            run (stages, &tasks[i]);
      });
      for (Task &t : tasks) {
        *tried += t.tried;
        for (size_t k = 0; k < t.sums.size () && found < want; k++, found++) {
          wins->insert (wins->end (), t.wins.begin () + k * W_ * H_, t.wins.begin () + (k + 1) * W_ * H_);
          sums->push_back (t.sums[k]);
        }
      }
    }
    return found;
  }

private:
  struct Task {
    size_t image = 0;
    double scale = 1; // image pixels per level pixel
    uint64_t seed = 0;
    std::vector<uint8_t> wins;
    std::vector<int64_t> sums;
    uint64_t tried = 0;
  };

  Task draw () {
    Task t;
    t.image = std::uniform_int_distribution<size_t> (0, sources_.size () - 1) (rng_);
    const Image &img = *sources_[t.image].image;
    const double most = std::min (img.width / static_cast<double> (W_), img.height / static_cast<double> (H_));
    t.scale = most <= 1 ? 1 : std::exp (std::uniform_real_distribution<double> (0, std::log (most)) (rng_));
    t.seed = rng_ ();
    return t;
  }

  // The task's pyramid on the engine; false when its hits overflowed.
  bool run_engine (const std::vector<QStage> &stages, Detector *engine, Task *t) const {
    const Image &img = *sources_[t->image].image;
    const std::vector<Box> &exclude = sources_[t->image].exclude;
    std::mt19937_64 rng (t->seed);
    const double factor = 1.05 + 0.1 * std::uniform_real_distribution<double> (0, 1) (rng);
    const int dx = static_cast<int> (rng () & 1), dy = static_cast<int> (rng () & 1);
    if (img.width - dx < W_ || img.height - dy < H_)
      return true;
    engine->set_search (factor, {W_, H_}, {0, 0});
    const Frame f{img.px.data () + static_cast<size_t> (dy) * img.width + dx, img.width - dx, img.height - dy,
                  img.width, PixelFormat::Gray8};
    FrameResult r;
    if (gpudetect::Error e = engine->detect (f, &r)) {
      std::fprintf (stderr, "mining on the device: %s\n", e.message.c_str ());
      std::exit (1);
    }
    if (r.truncated || r.lost)
      return false;
    const PyramidGeometry &g = *engine->geometry ();
    t->tried = static_cast<uint64_t> (g.total_windows);
    std::vector<RawHit> hits = std::move (r.hits);
    std::shuffle (hits.begin (), hits.end (), rng);
    std::vector<uint8_t> win (static_cast<size_t> (W_) * H_);
    std::vector<uint32_t> ii ((W_ + 1) * (H_ + 1));
    for (const RawHit &h : hits) {
      if (t->sums.size () >= kPerTask)
        break;
      if (!exclude.empty () && overlaps (h.rect.x + dx, h.rect.y + dy, std::sqrt (double (h.rect.width) * h.rect.height),
                                         exclude, kExcludeIoU))
        continue;
      // The window's pixels as the engine resampled its level (OpenCV's
      // INTER_LINEAR_EXACT tables), and its sum again on the host.
      const int li = h.level;
      for (int v = 0; v < H_; v++) {
        const int ye = g.ytab[g.ytab_first[li] + h.y + v], sy = ye >> 9;
        const unsigned cy1 = ye & 511, cy0 = 256 - cy1;
        for (int u = 0; u < W_; u++) {
          const int xe = g.xtab[g.xtab_first[li] + h.x + u], sx = xe >> 9;
          const unsigned cx1 = xe & 511, cx0 = 256 - cx1;
          auto px = [&] (int xx, int yy) { return static_cast<unsigned> (f.data[static_cast<size_t> (yy) * f.stride + xx]); };
          const unsigned h0 = px (sx, sy) * cx0 + (cx1 ? px (sx + 1, sy) * cx1 : 0);
          const unsigned h1 = cy1 ? px (sx, sy + 1) * cx0 + (cx1 ? px (sx + 1, sy + 1) * cx1 : 0) : 0;
          win[static_cast<size_t> (v) * W_ + u] = static_cast<uint8_t> ((h0 * cy0 + h1 * cy1 + 32768u) >> 16);
        }
      }
      window_integral (win.data (), W_, H_, ii.data ());
      int64_t sum = 0;
      bool alive = true;
      for (const QStage &st : stages) {
        sum += st.resp[waldboost_lbp_code (ii.data (), W_ + 1, st.x, st.y, st.w, st.h)];
        if (sum < st.reject_below) {
          alive = false;
          break;
        }
      }
      if (!alive) {
        std::fprintf (stderr, "internal error: a window the device kept fails the stages on the host\n");
        std::exit (1);
      }
      t->wins.insert (t->wins.end (), win.begin (), win.end ());
      t->sums.push_back (sum);
    }
    return true;
  }

  static constexpr size_t kPerTask = 24;   // windows kept from one task at most, so that no image dominates
  static constexpr double kExcludeIoU = 0.2;

  void run (const std::vector<QStage> &stages, Task *t) const {
    const Image &img = *sources_[t->image].image;
    const std::vector<Box> &exclude = sources_[t->image].exclude;
    const int lw = std::max (W_, static_cast<int> (img.width / t->scale)),
              lh = std::max (H_, static_cast<int> (img.height / t->scale));
    // The level: bilinear, as the engine's pyramid samples its levels.
    Image level;
    level.width = lw;
    level.height = lh;
    level.px.resize (static_cast<size_t> (lw) * lh);
    const double sx = static_cast<double> (img.width) / lw, sy = static_cast<double> (img.height) / lh;
    for (int y = 0; y < lh; y++) {
      const double fy = std::clamp ((y + 0.5) * sy - 0.5, 0.0, img.height - 1.0);
      const int y0 = static_cast<int> (fy), y1 = std::min (y0 + 1, img.height - 1);
      const double ay = fy - y0;
      for (int x = 0; x < lw; x++) {
        const double fx = std::clamp ((x + 0.5) * sx - 0.5, 0.0, img.width - 1.0);
        const int x0 = static_cast<int> (fx), x1 = std::min (x0 + 1, img.width - 1);
        const double ax = fx - x0;
        const double p = (img.at (x0, y0) * (1 - ax) + img.at (x1, y0) * ax) * (1 - ay) +
                         (img.at (x0, y1) * (1 - ax) + img.at (x1, y1) * ax) * ay;
        level.px[static_cast<size_t> (y) * lw + x] = static_cast<uint8_t> (std::lround (p));
      }
    }
    const int s = lw + 1;
    std::vector<uint32_t> ii (static_cast<size_t> (s) * (lh + 1), 0);
    for (int y = 0; y < lh; y++) {
      uint32_t row = 0;
      for (int x = 0; x < lw; x++) {
        row += level.px[static_cast<size_t> (y) * lw + x];
        ii[static_cast<size_t> (y + 1) * s + x + 1] = ii[static_cast<size_t> (y) * s + x + 1] + row;
      }
    }
    // Windows on a step-2 grid from a random offset, in a random order; at
    // most kPerTask kept so that no image dominates.
    std::mt19937_64 rng (t->seed);
    const int step = 2, ox = static_cast<int> (rng () % step), oy = static_cast<int> (rng () % step);
    std::vector<std::pair<int, int>> pos;
    for (int y = oy; y + H_ <= lh; y += step)
      for (int x = ox; x + W_ <= lw; x += step)
        pos.push_back ({x, y});
    std::shuffle (pos.begin (), pos.end (), rng);
    for (const auto &[x, y] : pos) {
      if (!exclude.empty () && overlaps (x * sx, y * sy, W_ * std::sqrt (sx * sy), exclude, kExcludeIoU))
        continue;
      t->tried++;
      const uint32_t *o = &ii[static_cast<size_t> (y) * s + x];
      int64_t sum = 0;
      bool alive = true;
      for (const QStage &st : stages) {
        sum += st.resp[waldboost_lbp_code (o, s, st.x, st.y, st.w, st.h)];
        if (sum < st.reject_below) {
          alive = false;
          break;
        }
      }
      if (!alive)
        continue;
      for (int v = 0; v < H_; v++)
        t->wins.insert (t->wins.end (), &level.px[static_cast<size_t> (y + v) * lw + x],
                        &level.px[static_cast<size_t> (y + v) * lw + x] + W_);
      t->sums.push_back (sum);
      if (t->sums.size () >= kPerTask)
        break;
    }
  }

  std::vector<Source> sources_;
  int W_, H_;
  std::mt19937_64 rng_;
};

struct Choice {
  size_t feature = 0;
  double z = INFINITY;
};

// The best feature for the weights: least Z over the pool.
Choice best_feature (const Samples &S, const std::vector<double> &w, int threads) {
  std::vector<Choice> best (threads);
  parallel_for (threads, S.features.size (), [&] (int th, size_t a, size_t b) {
    Choice c;
    double hp[256], hn[256];
    for (size_t f = a; f < b; f++) {
      std::fill (hp, hp + 256, 0.0);
      std::fill (hn, hn + 256, 0.0);
      const uint8_t *row = &S.codes[f * S.cap];
      for (size_t i = 0; i < S.npos; i++)
        hp[row[i]] += w[i];
      for (size_t i = S.npos; i < S.n; i++)
        hn[row[i]] += w[i];
      double z = 0;
      for (int k = 0; k < 256; k++)
        z += std::sqrt (hp[k] * hn[k]);
      if (z < c.z) {
        c.z = z;
        c.feature = f;
      }
    }
    best[th] = c;
  });
  Choice c;
  for (const Choice &b : best)
    if (b.z < c.z || (b.z == c.z && b.feature < c.feature))
      c = b;
  return c;
}

} // namespace

int main (int argc, char **argv) {
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
    else if (a == "--stages")
      o.stages = std::atoi (next ());
    else if (a == "--alpha")
      o.alpha = std::atof (next ());
    else if (a == "--positives-per-face")
      o.positives_per_face = std::atoi (next ());
    else if (a == "--negatives")
      o.negatives = std::atoi (next ());
    else if (a == "--max-block")
      o.max_block = std::atoi (next ());
    else if (a == "--window")
      o.window = std::atoi (next ());
    else if (a == "--threads")
      o.threads = std::max (1, std::atoi (next ()));
    else if (a == "--seed")
      o.seed = std::strtoull (next (), nullptr, 10);
    else if (a == "--device")
      o.device = next ();
    else if (a == "--divisors") {
      std::string v = next ();
      for (size_t p = 0; p <= v.size ();) {
        const size_t c = std::min (v.find (',', p), v.size ());
        o.divisors.push_back (std::atoi (v.substr (p, c - p).c_str ()));
        p = c + 1;
      }
    } else if (a == "--sync-first")
      o.sync_first = std::atoi (next ());
    else if (a == "--sync-step")
      o.sync_step = std::atoi (next ());
    else if (a == "--no-face-image-negatives")
      o.mine_face_images = false;
    else if (a == "--mine-windows")
      o.mine_windows = std::atof (next ());
    else {
      usage ();
      return 2;
    }
  }
  if (o.data.empty () || o.out.empty () || o.stages < 1 || o.window < 3 || o.max_block < 1 || o.negatives < 10 ||
      !(o.alpha > 0 && o.alpha < 1) || o.positives_per_face < 1) {
    usage ();
    return 2;
  }
  const double t_start = now_seconds ();
  const int W = o.window, H = o.window;

  // Positives.
  TrainingSet data;
  if (gpudetect::Error e = load_training_set (o.data, &data)) {
    std::fprintf (stderr, "%s\n", e.message.c_str ());
    return 1;
  }
  const std::vector<LabelledImage> &faces = data.faces;
  const std::vector<Image> &face_images = data.face_images, &negatives = data.negatives;
  std::mt19937_64 rng (o.seed);
  std::vector<uint8_t> pos_windows;
  for (size_t i = 0; i < faces.size (); i++)
    for (const Box &b : faces[i].faces)
      face_windows (face_images[i], b, W, o.positives_per_face, Augment (), rng, &pos_windows);
  const size_t nfaces = data.face_count;
  const double neg_pixels = data.negative_pixels;
  const size_t P0 = pos_windows.size () / (W * H);
  std::printf ("data: %zu faces in %zu images -> %zu positive windows; %zu negative images (%.1f Mpixels)\n",
               nfaces, faces.size (), P0, negatives.size (), neg_pixels / 1e6);

  Samples S;
  S.W = W;
  S.H = H;
  S.features = feature_pool (W, H, o.max_block);
  S.reserve (P0 + static_cast<size_t> (o.negatives));
  std::printf ("feature pool: %zu LBP grids (blocks 1..%d px); %.1f MB of codes\n", S.features.size (), o.max_block,
               S.features.size () * S.cap / 1e6);
  S.append (pos_windows, std::vector<int64_t> (P0, 0), o.threads);
  S.npos = P0;
  pos_windows.clear ();
  pos_windows.shrink_to_fit ();

  // Negatives come from the face-free images and from the labelled images
  // with one face and no ignore box (video frames, portraits), away from the
  // face: in group photos the teachers miss small faces.
  std::vector<Miner::Source> sources;
  for (const Image &img : negatives)
    sources.push_back ({&img, {}});
  if (o.mine_face_images) {
    for (size_t i = 0; i < faces.size (); i++) {
      if (faces[i].faces.size () != 1 || !faces[i].ignore.empty ())
        continue;
      std::vector<Box> ex = faces[i].faces;
      ex.insert (ex.end (), faces[i].ignore.begin (), faces[i].ignore.end ());
      sources.push_back ({&face_images[i], ex});
    }
  }
  Miner miner (std::move (sources), W, H, rng ());
  std::vector<QStage> qstages;
  WaldBoostModel model;
  model.name = o.name;
  model.window_width = W;
  model.window_height = H;
  model.threshold = 0;

  // Once the stages so far pass fewer than 1 window in 1000, mining scans
  // whole pyramids on the OpenCL device (--device), through the engine
  // running the model so far.
  const std::string mining_model = o.out + ".mining.xml";
  double acceptance = 1;
  auto refill = [&] (const char *why) -> bool {
    const size_t want = static_cast<size_t> (o.negatives) - (S.n - S.npos);
    std::vector<uint8_t> wins;
    std::vector<int64_t> sums;
    uint64_t tried = 0;
    const double t0 = now_seconds ();
    std::unique_ptr<Detector> engine;
    if (!o.device.empty () && acceptance < 1e-3) {
      const std::string xml = write_waldboost_xml (model);
      FILE *f = std::fopen (mining_model.c_str (), "w");
      if (!f || std::fwrite (xml.data (), 1, xml.size (), f) != xml.size () || std::fclose (f) != 0) {
        std::fprintf (stderr, "cannot write %s\n", mining_model.c_str ());
        std::exit (1);
      }
      DetectorConfig cfg;
      cfg.model = mining_model;
      cfg.device = o.device;
      cfg.min_neighbors = 0;
      cfg.threshold = -1e9; // every window the stages pass
      cfg.slots = 1;
      cfg.hit_capacity = 1 << 16;
      std::string err;
      if (gpudetect::Error e_ = Detector::create (cfg, &engine))
        err = e_.message;
      if (!engine) {
        std::fprintf (stderr, "mining on the device: %s\n", err.c_str ());
        std::exit (1);
      }
    }
    const size_t got = miner.mine (qstages, want, o.mine_windows, o.threads, engine.get (), &wins, &sums, &tried);
    S.append (wins, sums, o.threads);
    acceptance = tried ? static_cast<double> (got) / tried : 0.0;
    std::printf ("  mined %zu/%zu negatives (%s%s) from %llu windows (acceptance %.3g) in %.1f s\n", got, want, why,
                 engine ? ", on the device" : "", static_cast<unsigned long long> (tried), acceptance, now_seconds () - t0);
    std::fflush (stdout);
    return got == want;
  };
  refill ("initial");
  size_t refill_below = static_cast<size_t> (o.negatives) / 2;

  double s_neg = 1.0; // share of the negative population that reaches the current stage
  std::vector<double> w;
  for (int t = 0; t < o.stages; t++) {
    const double t0 = now_seconds ();
    class_weights (S.sum, S.npos, &w);

    const Choice c = best_feature (S, w, o.threads);
    const Feature &f = S.features[c.feature];
    double hp[256] = {}, hn[256] = {};
    const uint8_t *row = &S.codes[c.feature * S.cap];
    for (size_t i = 0; i < S.n; i++)
      (i < S.npos ? hp : hn)[row[i]] += w[i];
    const double eps = 0.5 / static_cast<double> (S.n);
    WaldBoostModel::Stage st;
    st.x = f.x;
    st.y = f.y;
    st.w = f.w;
    st.h = f.h;
    QStage q{f.x, f.y, f.w, f.h, {}, 0};
    for (int k = 0; k < 256; k++) {
      const double r = std::clamp (0.5 * std::log ((hp[k] + eps) / (hn[k] + eps)), -4.0, 4.0);
      st.response[k] = static_cast<float> (r);
      q.resp[k] = waldboost_fixed (st.response[k]);
    }
    for (size_t i = 0; i < S.n; i++)
      S.sum[i] += q.resp[row[i]];

    // The sequential test's threshold.
    std::vector<int64_t> ps (S.sum.begin (), S.sum.begin () + S.npos), ns (S.sum.begin () + S.npos, S.sum.end ());
    std::sort (ps.begin (), ps.end ());
    std::sort (ns.begin (), ns.end ());
    const double s_pos = static_cast<double> (S.npos) / P0;
    // Reject the k lowest negatives (and the positives below the threshold
    // between negative k-1 and the next sample): the largest k allowed.
    size_t best_k = 0;
    size_t j = 0; // positives below
    for (size_t k = 1; k <= ns.size (); k++) {
      if (k < ns.size () && ns[k] == ns[k - 1])
        continue;
      while (j < ps.size () && ps[j] <= ns[k - 1])
        j++;
      const double fpos = static_cast<double> (j) / ps.size (), fneg = static_cast<double> (k) / ns.size ();
      if (fpos * s_pos <= o.alpha * fneg * s_neg)
        best_k = k;
    }
    double neg_t = -INFINITY;
    size_t rej_pos = 0;
    if (best_k > 0) {
      const int64_t lo = ns[best_k - 1];
      int64_t hi = best_k < ns.size () ? ns[best_k] : INT64_MAX;
      const auto above = std::upper_bound (ps.begin (), ps.end (), lo);
      if (above != ps.end ())
        hi = std::min (hi, *above);
      if (hi == INT64_MAX)
        hi = lo + (int64_t (1) << 32);
      // Half-way, on a grid of 2^-20 so that the double holds it exactly.
      const int64_t mid = lo + (hi - lo) / 2 + 1;
      const int64_t grid = int64_t (1) << 12;
      int64_t thr = (mid / grid) * grid;
      if (thr <= lo)
        thr = lo + 1;
      neg_t = static_cast<double> (thr) / 4294967296.0;
      q.reject_below = waldboost_reject_below (neg_t);
      rej_pos = static_cast<size_t> (std::lower_bound (ps.begin (), ps.end (), q.reject_below) - ps.begin ());
    } else {
      q.reject_below = INT64_MIN;
    }
    st.neg_t = neg_t;
    model.stages.push_back (st);
    qstages.push_back (q);

    std::vector<char> keep (S.n);
    size_t rej_neg = 0;
    for (size_t i = 0; i < S.n; i++) {
      keep[i] = S.sum[i] >= q.reject_below;
      if (!keep[i] && i >= S.npos)
        rej_neg++;
    }
    const size_t nneg_before = S.n - S.npos;
    if (rej_neg || rej_pos)
      S.compact (keep, o.threads);
    s_neg *= 1.0 - static_cast<double> (rej_neg) / std::max<size_t> (1, nneg_before);
    std::printf ("stage %d/%d: grid (%d,%d) %dx%d  Z=%.4f  negT=%s  rejected %zu neg, %zu pos  alive %zu pos "
                 "(%.4f), %zu neg  S-=%.3g  %.2f s\n",
                 t + 1, o.stages, f.x, f.y, f.w, f.h, 2 * c.z,
                 std::isinf (neg_t) ? "-inf" : std::to_string (neg_t).c_str (), rej_neg, rej_pos, S.npos,
                 static_cast<double> (S.npos) / P0, S.n - S.npos, s_neg, now_seconds () - t0);
    std::fflush (stdout);
    // Refill below half the pool.  Training stops once a refill cannot
    // bring the pool back to half of --negatives: the thresholds of later
    // stages would rest on too few negatives, and the first model trained
    // on to exhaustion (down to 121 negatives, 60 stages) lost a sixth of its
    // held-out recall in its last 18 stages without a false positive fewer.
    // After a refill that found too few but enough, the next comes once half
    // of what it left is gone.
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

  // Training figures at the final threshold.
  const int64_t gamma_q = waldboost_final_threshold (model.threshold, false);
  size_t pos_hit = 0, neg_hit = 0;
  for (size_t i = 0; i < S.n; i++)
    (i < S.npos ? pos_hit : neg_hit) += S.sum[i] >= gamma_q;
  std::printf ("done: %zu stages, tail from stage %d; training positives kept %.4f, of them at sum >= %g: %.4f; "
               "negatives reaching the end %.3g of the population, of them at sum >= %g: %.4f; %.0f s\n",
               model.stages.size (), model.tail_start () + 1, static_cast<double> (S.npos) / P0, model.threshold,
               S.npos ? static_cast<double> (pos_hit) / S.npos : 0.0, s_neg, model.threshold,
               S.n > S.npos ? static_cast<double> (neg_hit) / (S.n - S.npos) : 0.0, now_seconds () - t_start);
  model.divisors = o.divisors;
  model.sync_first = o.sync_first;
  model.sync_step = o.sync_step;
  FILE *fo = std::fopen (o.out.c_str (), "w");
  const std::string xml = write_waldboost_xml (model);
  if (!fo || std::fwrite (xml.data (), 1, xml.size (), fo) != xml.size () || std::fclose (fo) != 0) {
    std::fprintf (stderr, "cannot write %s\n", o.out.c_str ());
    return 1;
  }
  WaldBoostModel check;
  if (gpudetect::Error e = load_waldboost_file (o.out, &check)) {
    std::fprintf (stderr, "the model written does not read back: %s\n", e.message.c_str ());
    return 1;
  }
  std::remove (mining_model.c_str ());
  std::printf ("wrote %s\n", o.out.c_str ());
  return 0;
}
