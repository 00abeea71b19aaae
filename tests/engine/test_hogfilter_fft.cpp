// The hogfilter family's two evaluations against each other: for
// dlib-frontalface and hog-people (--model: FHOG and Dalal-Triggs features)
// and for made models of other sizes and counts
// (square and not, 1 to 7 filters, pyramids down to tiny levels), on real
// images and on noise frames of odd sizes, every (position, filter) of every
// level is reported (threshold -1e30) by the direct correlation (CPU
// schedule) and by the FFT path (hog-eval=fft, on both schedules: candidates
// through atomics and through the work-group compaction).  The same windows
// must come back, each score within 1e-4 of the direct one relative to
// max (|score|, 1e-2 * sum |filter| * the level's mean |feature|) (1 % of
// the score a window of typical features could reach: a float FFT's error
// scales with the whole plane's, so a window of zeros scores 0 directly and
// about 1e-7 through the FFT; the features of the host reference, fhog.h
// and dthog.h), and the same objects after the non-maximum suppression at the
// model's threshold.
//
//   test-hogfilter-fft [--model NAME]... [--max-images N] [--made N] IMAGE.pgm...
// (--made: the first N made models only, 4 by default)
#include "check.h"
#include "pgm.h"

#include "detector.h"
#include "families/hogfilter/family.h"
#include "families/hogfilter/fftconv.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <random>
#include <tuple>
#include <unistd.h>

using namespace gpudetect;

namespace {

Grey noise (int cols, int rows) {
  Grey g;
  g.name = "noise " + std::to_string (cols) + "x" + std::to_string (rows);
  g.cols = cols;
  g.rows = rows;
  uint32_t r = static_cast<uint32_t> (cols * 7919 + rows);
  for (int i = 0; i < cols * rows; i++) {
    r = r * 1664525u + 1013904223u;
    // blocks of grey with noise: gradients of every orientation
    const int x = i % cols, y = i / cols;
    g.px.push_back (static_cast<uint8_t> ((((x / 9) ^ (y / 7)) & 1) * 120 + (r >> 26)));
  }
  return g;
}

HogFilterModel made (const char *name, int rows, int cols, int filters, int min_level) {
  HogFilterModel m;
  m.name = name;
  m.rows = rows;
  m.cols = cols;
  m.min_level_width = m.min_level_height = min_level;
  // away from 0, where flat windows score (exactly 0 directly, about 1e-7
  // through the FFT)
  m.threshold = 0.25;
  std::mt19937 rng (static_cast<unsigned> (rows * 131 + cols * 17 + filters));
  std::uniform_real_distribution<float> u (-0.1f, 0.1f);
  for (int f = 0; f < filters; f++) {
    HogFilterModel::Filter fl;
    fl.bias = 0.01 * f;
    for (int i = 0; i < kFhogDims * rows * cols; i++)
      fl.coef.push_back (u (rng));
    m.filters.push_back (fl);
  }
  return m;
}

// Every raw window of a frame: (level, x, y) -> score.
using Key = std::tuple<int, int, int>;

std::unique_ptr<Detector> make (const std::string &model, const std::string &tuning) {
  DetectorConfig cfg;
  cfg.model = model;
  cfg.slots = 1;
  cfg.hit_capacity = 1 << 22;
  cfg.tuning = tuning;
  std::string err;
  std::unique_ptr<Detector> det;
  if (gpudetect::Error e_ = Detector::create (cfg, &det))
    err = e_.message;
  CHECK_MSG (det != nullptr, "%s (%s): %s", model.c_str (), tuning.c_str (), err.c_str ());
  return det;
}

void run (Detector &det, const Grey &g, std::map<Key, float> *hits, std::vector<Detection> *objects) {
  FrameResult res;
  det.set_threshold (-1e30);
  std::string e = det.detect ({g.px.data (), g.cols, g.rows, g.cols, PixelFormat::Gray8}, &res).message;
  CHECK_MSG (e.empty (), "%s: %s", g.name.c_str (), e.c_str ());
  CHECK (!res.truncated && res.lost == 0);
  for (const RawHit &h : res.hits)
    CHECK_MSG (hits->emplace (Key{h.level, h.x, h.y}, h.score).second, "%s: a window twice", g.name.c_str ());
  // the objects at the model's own threshold
  det.set_threshold (std::nullopt);
  e = det.detect ({g.px.data (), g.cols, g.rows, g.cols, PixelFormat::Gray8}, &res).message;
  CHECK (e.empty ());
  *objects = res.objects;
}

struct Tally {
  size_t windows = 0, bad = 0;
  double max_rel = 0, max_abs = 0;
};

} // namespace

int main (int argc, char **argv) {
  std::vector<std::string> models, paths;
  size_t max_images = 6, made_models = 4;
  for (int i = 1; i < argc; i++) {
    const std::string a = argv[i];
    if (a == "--model" && i + 1 < argc)
      models.push_back (argv[++i]);
    else if (a == "--max-images" && i + 1 < argc)
      max_images = static_cast<size_t> (std::atoi (argv[++i]));
    else if (a == "--made" && i + 1 < argc)
      made_models = static_cast<size_t> (std::atoi (argv[++i]));
    else
      paths.push_back (a);
  }
  if (!FftCorrelator::available ()) {
    std::printf ("built without VkFFT: nothing to compare\n");
    return finish ();
  }
  std::vector<Grey> frames;
  for (const std::string &p : paths) {
    if (frames.size () >= max_images)
      break;
    Grey g;
    CHECK_MSG (read_pgm (p, &g), "cannot read %s", p.c_str ());
    if (!g.px.empty ())
      frames.push_back (std::move (g));
  }
  for (auto [c, r] : {std::pair<int, int> {67, 43}, {129, 97}, {333, 211}, {41, 300}, {64, 64}, {7, 5}})
    frames.push_back (noise (c, r));

  // made models, written where the test runs
  char dir[] = "/tmp/gpudetect-hogfft-XXXXXX";
  CHECK (mkdtemp (dir) != nullptr);
  std::vector<std::pair<std::string, HogFilterModel>> all;
  for (const std::string &m : models) {
    DetectorConfig cfg;
    cfg.model = m;
    std::string err;
    std::unique_ptr<Detector> det;
    if (gpudetect::Error e_ = Detector::create (cfg, &det))
      err = e_.message;
    CHECK_MSG (det != nullptr, "%s: %s", m.c_str (), err.c_str ());
    if (!det)
      continue;
    std::ifstream f (det->model ().path, std::ios::binary);
    std::string text ((std::istreambuf_iterator<char> (f)), std::istreambuf_iterator<char> ());
    HogFilterModel hm;
    CHECK (parse_hogfilter (text, &hm).message.empty ());
    all.push_back ({m, hm});
  }
  const std::vector<HogFilterModel> mades = {made ("4x4 x 1", 4, 4, 1, 32), made ("6x9 x 3", 6, 9, 3, 24),
                                             made ("12x12 x 2", 12, 12, 2, 64), made ("7x16 x 7", 7, 16, 7, 16)};
  for (size_t k = 0; k < mades.size () && k < made_models; k++) {
    const HogFilterModel &m = mades[k];
    const std::string path = std::string (dir) + "/" + std::to_string (all.size ()) + ".hogfilter";
    std::ofstream (path, std::ios::binary) << write_hogfilter (m);
    all.push_back ({path, m});
  }

  for (const auto &[name, m] : all) {
    const int nf = static_cast<int> (m.filters.size ());
    Tally t;
    size_t objects = 0;
    const char *tunings[2] = {"hog-eval=fft;schedule=cpu", "hog-eval=fft;schedule=gpu"};
    std::unique_ptr<Detector> ref = make (name, "hog-eval=direct;schedule=cpu"), fdet[2];
    for (int i = 0; i < 2; i++)
      fdet[i] = make (name, tunings[i]);
    if (!ref || !fdet[0] || !fdet[1])
      continue;
    for (const Grey &g : frames) {
      std::map<Key, float> direct;
      std::vector<Detection> obj_direct;
      run (*ref, g, &direct, &obj_direct);
      objects += obj_direct.size ();
      // the host reference's features, for the floor of each window's error
      std::vector<double> mean; // per level, |feature|
      const auto add_mean = [&mean] (const std::vector<float> &feats) {
        double sum = 0;
        for (float v : feats)
          sum += std::fabs (v);
        mean.push_back (feats.empty () ? 0 : sum / feats.size ());
      };
      if (m.features == HogFeatures::DalalTriggs) {
        const DtPlan plan = plan_dt (g.cols, g.rows, m.dt, m.rows, m.cols);
        for (const DtLevel &l : plan.levels) {
          std::vector<float> grad;
          std::vector<uint8_t> bins;
          const std::vector<uint8_t> px = dt_level_pixels (l, g.px.data (), g.cols);
          dt_gradients (m.dt, px, l.width, l.height, &grad, &bins);
          add_mean (dt_blocks (m.dt, l, grad, bins));
        }
      } else {
        const FhogPlan plan = plan_fhog (g.cols, g.rows, m.fhog ());
        std::vector<uint8_t> px = g.px;
        for (size_t li = 0; li < plan.levels.size (); li++) {
          if (li > 0)
            px = fhog_down (plan.levels[li - 1], px, plan.levels[li]);
          const FhogLevel &l = plan.levels[li];
          add_mean (l.feat_rows ? fhog_features (l, fhog_cells (l, px, m.cell), m.fhog ()) : std::vector<float> ());
        }
      }
      std::vector<double> l1; // per filter, sum |coefficient|
      for (const HogFilterModel::Filter &fl : m.filters) {
        double a = 0;
        for (float c : fl.coef)
          a += std::fabs (c);
        l1.push_back (a);
      }
      for (int ti = 0; ti < 2; ti++) {
        const char *tuning = tunings[ti];
        std::map<Key, float> fft;
        std::vector<Detection> obj_fft;
        run (*fdet[ti], g, &fft, &obj_fft);
        CHECK_MSG (fft.size () == direct.size (), "%s, %s, %s: %zu windows, direct %zu", name.c_str (), tuning,
                   g.name.c_str (), fft.size (), direct.size ());
        for (const auto &[k, s] : direct) {
          auto it = fft.find (k);
          t.windows++;
          if (it == fft.end ()) {
            t.bad++;
            continue;
          }
          const auto [level, wx, wy] = k;
          const int f = wx % nf, x = wx / nf;
          const double e = std::fabs (static_cast<double> (it->second) - s);
          const double rel = e / std::max<double> (std::fabs (s), 1e-2 * l1[f] * mean[level]);
          t.max_rel = std::max (t.max_rel, rel);
          t.max_abs = std::max (t.max_abs, e);
          if (rel > 1e-4) {
            t.bad++;
            if (t.bad < 10)
              std::fprintf (stderr, "%s, %s, %s: level %d (%d, %d) filter %d: %.8g, direct %.8g\n", name.c_str (),
                            tuning, g.name.c_str (), level, x, wy, f, it->second, s);
          }
        }
        // the objects after the suppression: the same boxes
        auto boxes = [] (const std::vector<Detection> &v) {
          std::vector<std::tuple<int, int, int, int>> b;
          for (const Detection &d : v)
            b.emplace_back (d.rect.x, d.rect.y, d.rect.width, d.rect.height);
          std::sort (b.begin (), b.end ());
          return b;
        };
        const bool same = boxes (obj_fft) == boxes (obj_direct);
        CHECK_MSG (same, "%s, %s, %s: %zu objects, direct %zu (or other boxes)", name.c_str (), tuning,
                   g.name.c_str (), obj_fft.size (), obj_direct.size ());
      }
    }
    std::printf ("%s (%s / %s): %zu windows x 2 schedules, max error %.3g relative, %.3g absolute; %zu objects\n",
                 name.c_str (), ref->model ().description.c_str (), fdet[0]->model ().description.c_str (),
                 t.windows / 2, t.max_rel, t.max_abs, objects);
    CHECK (t.windows > 0);
    CHECK_MSG (t.bad == 0, "%s: %zu windows missing or off by more than 1e-4", name.c_str (), t.bad);
  }
  for (size_t i = 0; i < all.size (); i++)
    if (all[i].first.rfind (dir, 0) == 0)
      std::remove (all[i].first.c_str ());
  rmdir (dir);
  return finish ();
}
