// WaldBoost on the device against the reference: for every image, the raw
// windows (and their scores) of the GPU schedule's staged reduction, with
// several divisor and step settings, and of the CPU schedule equal those of
// a plain loop over every window of the same pyramid with
// waldboost_evaluate.  Models: a file given with --model, and models made
// here with early rejections, an early acceptance and a tail, or no tail
// (not with --only-model).  A model file may be the project's XML or an OpenCV
// xobjdetect WBDetector file (single-precision sums, its own scan).
//
//   test-waldboost-schedules [--model FILE [--only-model]] IMAGE.pgm...
// (a model file is also tried with only its first 8 and 20 stages)
//   test-waldboost-schedules --write-models DIR   (the made models, for gpudetect-bench)
#include "check.h"
#include "pgm.h"
#include "detector.h"
#include "families/waldboost/model.h"

#include <cstdio>
#include <fstream>
#include <cstring>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <unistd.h>
#include <vector>

using namespace gpudetect;

namespace {

// A level of the plan resampled as kernels/pyramid.cl does, and its
// integrals (32-bit, wrapping), as OpenCV's cv::integral.
void level_integrals (const Grey &src, const PyramidGeometry &g, size_t li, std::vector<uint32_t> *sum,
                      std::vector<uint32_t> *sq) {
  const PyramidLevel &l = g.levels[li];
  const int w = l.width, h = l.height;
  sum->assign (static_cast<size_t> (w + 1) * (h + 1), 0);
  sq->assign (sum->size (), 0);
  for (int y = 0; y < h; y++) {
    const int ye = g.ytab[g.ytab_first[li] + y], sy = ye >> 9;
    const unsigned cy1 = ye & 511, cy0 = 256 - cy1;
    uint32_t rs = 0, rq = 0;
    for (int x = 0; x < w; x++) {
      const int xe = g.xtab[g.xtab_first[li] + x], sx = xe >> 9;
      const unsigned cx1 = xe & 511, cx0 = 256 - cx1;
      auto px = [&] (int xx, int yy) { return static_cast<unsigned> (src.at (yy, xx)); };
      const unsigned h0 = px (sx, sy) * cx0 + (cx1 ? px (sx + 1, sy) * cx1 : 0);
      const unsigned h1 = cy1 ? px (sx, sy + 1) * cx0 + (cx1 ? px (sx + 1, sy + 1) * cx1 : 0) : 0;
      const uint32_t p = (h0 * cy0 + h1 * cy1 + 32768u) >> 16;
      rs += p;
      rq += p * p;
      (*sum)[(y + 1) * (w + 1) + x + 1] = (*sum)[y * (w + 1) + x + 1] + rs;
      (*sq)[(y + 1) * (w + 1) + x + 1] = (*sq)[y * (w + 1) + x + 1] + rq;
    }
  }
}

using Key = std::tuple<int, int, int>; // level, x, y

// The reference's hits (and scores) over the plan's window grid.
std::vector<std::pair<Key, float>> reference (const WaldBoostModel &m, const Grey &img, const PyramidGeometry &g,
                                              int64_t gamma) {
  std::vector<std::pair<Key, float>> out;
  std::vector<uint32_t> sum, sq;
  for (size_t li = 0; li < g.levels.size (); li++) {
    const PyramidLevel &l = g.levels[li];
    level_integrals (img, g, li, &sum, &sq);
    const int s = l.width + 1;
    for (int iy = 0; iy < l.ny; iy++)
      for (int ix = 0; ix < l.nx; ix++) {
        const int x = ix * l.step, y = iy * l.step;
        const WaldBoostVerdict v = waldboost_evaluate (m, sum.data () + y * s + x, sq.data () + y * s + x, s, gamma);
        if (v.hit)
          out.push_back ({{static_cast<int> (li), x, y}, v.score ()});
      }
  }
  return out;
}

// A model made with a seed: random responses around a bias per stage,
// rejection thresholds that rise by 0.15 a stage (on messi5.jpg about 30 %
// of the windows pass stage 0, 5 % stage 3, 0.35 % all of 50), optionally an
// early acceptance and a tail.
WaldBoostModel made_model (uint32_t seed, int stages, int tail_from, bool accept) {
  std::mt19937 rng (seed);
  std::uniform_real_distribution<float> u (-1.f, 1.f);
  WaldBoostModel m;
  m.name = "made-" + std::to_string (seed);
  m.window_width = m.window_height = 24;
  m.threshold = 0.5;
  for (int i = 0; i < stages; i++) {
    WaldBoostModel::Stage s;
    s.w = 1 + static_cast<int> (rng () % 4);
    s.h = 1 + static_cast<int> (rng () % 4);
    s.x = static_cast<int> (rng () % (24 - 3 * s.w + 1));
    s.y = static_cast<int> (rng () % (24 - 3 * s.h + 1));
    const float bias = 0.3f * u (rng);
    for (float &v : s.response)
      v = bias + 0.8f * u (rng);
    if (i < tail_from)
      s.neg_t = -0.2 + 0.15 * i;
    if (accept && i == 7)
      s.pos_t = 2.4;
    m.stages.push_back (s);
  }
  return m;
}

std::string write_temp (const std::string &text) {
  char path[] = "/tmp/gpudetect-wb-XXXXXX.xml";
  const int fd = mkstemps (path, 4);
  if (fd < 0)
    return {};
  if (write (fd, text.data (), text.size ()) != static_cast<ssize_t> (text.size ()))
    std::perror ("write");
  close (fd);
  return path;
}

struct Totals {
  long ref = 0, same = 0, differ = 0;
};

void compare (const std::string &what, const std::string &model_path, const WaldBoostModel &m,
              const std::vector<Grey> &images, const std::vector<std::string> &names, const std::string &tuning,
              Totals *t) {
  DetectorConfig cfg;
  cfg.model = model_path;
  cfg.scale_factor = 1.1;
  cfg.min_size = {24, 24};
  cfg.min_neighbors = 0;
  cfg.slots = 1;
  cfg.hit_capacity = 1 << 20; // every raw window, however many a made model accepts
  cfg.tuning = tuning;
  std::string err;
  std::unique_ptr<Detector> det;
  if (gpudetect::Error e_ = Detector::create (cfg, &det))
    err = e_.message;
  CHECK_MSG (det, "%s [%s]: %s", what.c_str (), tuning.c_str (), err.c_str ());
  if (!det)
    return;
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
    std::set<std::pair<Key, float>> ours, ref;
    for (const RawHit &h : res.hits)
      ours.insert ({{h.level, h.x, h.y}, h.score});
    for (const auto &r : reference (m, img, *det->geometry (), waldboost_final_threshold_arg (m)))
      ref.insert (r);
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
  std::printf ("%-28s %-58s %s: %ld reference hits, %ld differ, %u lost\n", what.c_str (), tuning.c_str (),
               det->gpu_schedule () ? "gpu" : "cpu", ref_total, differ, lost);
  CHECK_MSG (differ == 0, "%s [%s]: %ld raw windows differ from the reference", what.c_str (), tuning.c_str (), differ);
  CHECK_MSG (lost == 0, "%s [%s]: %u candidates lost", what.c_str (), tuning.c_str (), lost);
  t->ref += ref_total;
}

} // namespace

int main (int argc, char **argv) {
  std::string model_file, write_dir;
  bool only_model = false;
  std::vector<std::string> paths;
  for (int i = 1; i < argc; i++) {
    if (std::strcmp (argv[i], "--model") == 0 && i + 1 < argc)
      model_file = argv[++i];
    else if (std::strcmp (argv[i], "--only-model") == 0)
      only_model = true;
    else if (std::strcmp (argv[i], "--write-models") == 0 && i + 1 < argc)
      write_dir = argv[++i];
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
  CHECK_MSG (!images.empty () || !write_dir.empty (), "no images");

  struct Case {
    std::string name, path;
    WaldBoostModel model;
  };
  std::vector<Case> cases;
  for (const auto &[seed, stages, tail, accept] :
       {std::tuple (1u, 80, 50, true), std::tuple (2u, 40, 40, false), std::tuple (3u, 300, 16, false)}) {
    if (only_model && !model_file.empty ())
      break;
    Case c;
    c.model = made_model (seed, stages, tail, accept);
    c.name = c.model.name + (tail < stages ? " (tail)" : " (no tail)");
    c.path = write_temp (write_waldboost_xml (c.model));
    cases.push_back (c);
  }
  if (!write_dir.empty ()) {
    for (const Case &c : cases) {
      const std::string out = write_dir + "/" + c.model.name + ".xml";
      std::FILE *f = std::fopen (out.c_str (), "w");
      const std::string text = write_waldboost_xml (c.model);
      CHECK_MSG (f && std::fwrite (text.data (), 1, text.size (), f) == text.size (), "cannot write %s", out.c_str ());
      if (f)
        std::fclose (f);
      unlink (c.path.c_str ());
    }
    return finish ();
  }
  if (!model_file.empty ()) {
    Case c;
    c.name = model_file.substr (model_file.find_last_of ('/') + 1);
    c.path = model_file;
    std::string err = load_waldboost_file (model_file, &c.model).message;
    CHECK_MSG (err.empty (), "%s", err.c_str ());
    if (err.empty ()) {
      cases.push_back (c);
      // Its first 8 and 20 stages too: a selective model's reference hits
      // are few, while its prefixes pass many windows through every step of
      // the reduction with the model's own responses and thresholds.
      for (size_t n : {size_t (8), size_t (20)}) {
        if (c.model.stages.size () <= n)
          continue;
        Case p = c;
        p.model.stages.resize (n);
        p.name = c.name + " (first " + std::to_string (n) + ")";
        p.path = write_temp (write_waldboost_xml (p.model));
        // as the engine reads it (the project's XML: an OpenCV xobjdetect
        // model's prefix is a fixed-point model)
        const std::string e = load_waldboost_file (p.path, &p.model).message;
        CHECK_MSG (e.empty (), "%s", e.c_str ());
        cases.push_back (p);
      }
    }
  }
  Totals t;
  for (const Case &c : cases) {
    for (const char *tuning : {"schedule=cpu", "schedule=gpu", "schedule=gpu;waldboost-divisors=8",
                               "schedule=gpu;waldboost-divisors=2,2,2,2,2,2;waldboost-sync-first=1;"
                               "waldboost-sync-step=1",
                               "schedule=gpu;waldboost-divisors=64,2;waldboost-sync-first=9;waldboost-sync-step=7"})
      compare (c.name, c.path, c.model, images, names, tuning, &t);
  }
  for (const Case &c : cases)
    if (c.path != model_file)
      unlink (c.path.c_str ());
  CHECK_MSG (t.ref > 1000, "only %ld reference hits in all: the models decide too little", t.ref);
  return finish ();
}
