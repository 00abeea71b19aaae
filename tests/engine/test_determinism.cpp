// Same frame, same answer: every family on both schedules (and both ways of
// evaluating linear HOG filters) runs the same images --runs times (20 by
// default); every run after the first has its raw candidates shuffled before
// decoding (DetectorConfig::candidate_order_seed), as a device whose
// compaction wrote them in another order would.  Every run's raw windows and
// objects (boxes, neighbours, scores and confidences) must equal the first
// run's bit for bit.  A model made at build time from an optional package
// (dlib's, OpenCV's people detector, cv::dpm's person model) is skipped, said
// so, where it was not made; the shipped ones must be there.
//
//   test-determinism [--runs N] IMAGE.pgm...
#include "check.h"
#include "pgm.h"

#include "detector.h"
#include "core/models.h"

#include <cstdlib>
#include <cstring>

using namespace gpudetect;

namespace {

struct Variant {
  const char *model;
  const char *tuning; // "schedule=..." is added for each schedule
  bool optional;      // made at build time from an optional package
};

const Variant kVariants[] = {
    {"lbp-frontalface-improved", "", false},
    {"haar-frontalface-default", "", false},
    {"haar-frontalface-alt2", "", false}, // trees of two stumps
    {"waldboost-frontalface-fast", "", false},
    {"forest-frontalface", "", false},
    {"dlib-frontalface", "hog-eval=direct", true},
    {"dlib-frontalface", "hog-eval=fft", true},
    {"hog-people", "hog-eval=direct", true},
    {"hog-people", "hog-eval=fft", true},
    {"dpm-inriaperson", "hog-eval=direct", true},
    {"dpm-inriaperson", "hog-eval=fft", true},
};

bool same_bits (float a, float b) { return std::memcmp (&a, &b, sizeof a) == 0; }

bool same_hits (const std::vector<RawHit> &a, const std::vector<RawHit> &b) {
  if (a.size () != b.size ())
    return false;
  for (size_t i = 0; i < a.size (); i++)
    if (a[i].level != b[i].level || a[i].x != b[i].x || a[i].y != b[i].y || !same_bits (a[i].score, b[i].score))
      return false;
  return true;
}

bool same_objects (const std::vector<Detection> &a, const std::vector<Detection> &b) {
  if (a.size () != b.size ())
    return false;
  for (size_t i = 0; i < a.size (); i++) {
    const Rect &p = a[i].rect, &q = b[i].rect;
    if (p.x != q.x || p.y != q.y || p.width != q.width || p.height != q.height || a[i].neighbors != b[i].neighbors ||
        a[i].label_id != b[i].label_id || !same_bits (a[i].score, b[i].score) ||
        !same_bits (a[i].confidence, b[i].confidence))
      return false;
  }
  return true;
}

} // namespace

int main (int argc, char **argv) {
  int runs = 20;
  std::vector<Grey> images;
  for (int i = 1; i < argc; i++) {
    if (!std::strcmp (argv[i], "--runs") && i + 1 < argc) {
      runs = std::atoi (argv[++i]);
      continue;
    }
    Grey g;
    CHECK_MSG (read_pgm (argv[i], &g), "cannot read %s", argv[i]);
    images.push_back (std::move (g));
  }
  CHECK_MSG (!images.empty () && runs >= 2, "give images and at least 2 runs");

  for (const Variant &v : kVariants)
    for (const char *schedule : {"cpu", "gpu"}) {
      DetectorConfig cfg;
      cfg.model = v.model;
      cfg.slots = 1;
      cfg.hit_capacity = 1 << 18;
      cfg.tuning = std::string (v.tuning) + (*v.tuning ? ";" : "") + "schedule=" + schedule;
      if (v.optional && resolve_model (v.model).empty ()) {
        std::printf ("%-28s %-32s skipped: the model was not made (its package is missing)\n", v.model,
                     cfg.tuning.c_str ());
        continue;
      }
      std::string err;
      std::unique_ptr<Detector> first;
      if (gpudetect::Error e_ = Detector::create (cfg, &first))
        err = e_.message;
      CHECK_MSG (first, "%s (%s): %s", v.model, cfg.tuning.c_str (), err.c_str ());
      cfg.candidate_order_seed = 1;
      std::unique_ptr<Detector> shuffled;
      if (gpudetect::Error e_ = Detector::create (cfg, &shuffled))
        err = e_.message;
      CHECK_MSG (shuffled, "%s (%s): %s", v.model, cfg.tuning.c_str (), err.c_str ());
      if (!first || !shuffled)
        continue;
      size_t hits = 0, objects = 0;
      int differing = 0;
      for (size_t k = 0; k < images.size (); k++) {
        const Grey &g = images[k];
        const Frame f{g.px.data (), g.cols, g.rows, g.cols, PixelFormat::Gray8};
        FrameResult ref;
        CHECK_MSG (first->detect (f, &ref).message.empty (), "%s: image %zu", v.model, k);
        CHECK (!ref.truncated && ref.lost == 0);
        hits += ref.hits.size ();
        objects += ref.objects.size ();
        for (int r = 1; r < runs; r++) {
          FrameResult res;
          CHECK_MSG (shuffled->detect (f, &res).message.empty (), "%s: image %zu", v.model, k);
          const bool same = same_hits (res.hits, ref.hits) && same_objects (res.objects, ref.objects);
          differing += !same;
          CHECK_MSG (same, "%s (%s): image %zu, run %d: %zu raw windows and %zu objects, the first run %zu and %zu",
                     v.model, cfg.tuning.c_str (), k, r + 1, res.hits.size (), res.objects.size (), ref.hits.size (),
                     ref.objects.size ());
        }
      }
      std::printf ("%-28s %-32s %d runs of %zu images: %zu raw windows, %zu objects; %d runs differ\n", v.model,
                   cfg.tuning.c_str (), runs, images.size (), hits, objects, differing);
      CHECK_MSG (hits > 0, "%s (%s): no raw window on the images: nothing was compared", v.model,
                 cfg.tuning.c_str ());
    }
  return finish ();
}
