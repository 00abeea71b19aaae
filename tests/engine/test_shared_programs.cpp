// Many detectors on one shared device (context): one program build per
// (model, options) for all of them, built once even when they start in
// several threads at once, freed when the last one goes; and every detector
// on the shared context finds what a detector on a context of its own finds.
#include "check.h"
#include "pgm.h"
#include "cl/shared.h"
#include "detector.h"

#include <cstdio>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

using namespace gpudetect;

namespace {

std::unique_ptr<Detector> make (const cl::Device *share, const std::string &model, const std::string &tuning = {}) {
  DetectorConfig c;
  c.model = model;
  c.share = share;
  c.min_size = {24, 24};
  c.tuning = tuning;
  std::string err;
  std::unique_ptr<Detector> d;
  if (gpudetect::Error e_ = Detector::create (c, &d))
    err = e_.message;
  CHECK_MSG (d != nullptr, "%s", err.c_str ());
  return d;
}

} // namespace

int main () {
  Grey img;
  if (!read_pgm (GPUDETECT_TEST_DATA "/grace_hopper_256x300.pgm", &img)) {
    std::fprintf (stderr, "cannot read the test image\n");
    return 1;
  }
  cl::Device dev;
  if (Error e = cl::open_device ("", false, &dev)) {
    std::fprintf (stderr, "no OpenCL device: %s\n", e.message.c_str ()); // a device is required here
    return 1;
  }
  CHECK (dev.programs != nullptr && cl::program_builds (dev) == 0);
  const Frame frame{img.px.data (), img.cols, img.rows, img.cols, PixelFormat::Gray8};

  // The answer of a detector alone on its own context.
  FrameResult alone;
  {
    auto d = make (nullptr, "lbp-frontalface-improved");
    if (!d)
      return finish ();
    CHECK (d->detect (frame, &alone).message.empty ());
    CHECK (alone.objects.size () == 1); // the face, as OpenCV finds it (tests/check/elements/gpudetect.c)
    CHECK (d->program_builds () == 1); // its own context's cache
  }

  {
    // Two detectors with the same model on the shared context: one build.
    auto a = make (&dev, "lbp-frontalface-improved"), b = make (&dev, "lbp-frontalface-improved");
    if (!a || !b)
      return finish ();
    CHECK_MSG (cl::program_builds (dev) == 1, "%llu builds", (unsigned long long) cl::program_builds (dev));
    CHECK (a->program_builds () == 1 && b->program_builds () == 1);
    CHECK (dev.programs->held () == 1);
    // Another model: a second build; the same model again: none.
    auto c = make (&dev, "haar-frontalface-default");
    auto a2 = make (&dev, "lbp-frontalface-improved");
    CHECK_MSG (cl::program_builds (dev) == 2, "%llu builds", (unsigned long long) cl::program_builds (dev));
    // The same model with other build options (another schedule): a program of its own.
    auto other = make (&dev, "lbp-frontalface-improved", dev.info.type & CL_DEVICE_TYPE_GPU ? "schedule=cpu"
                                                                                             : "schedule=gpu");
    CHECK_MSG (cl::program_builds (dev) == 3, "%llu builds", (unsigned long long) cl::program_builds (dev));
    CHECK (dev.programs->held () == 3);

    // Every detector on the shared program finds what the one alone found,
    // frames in flight in all of them at once, from one thread each.
    std::vector<Detector *> all{a.get (), b.get (), a2.get (), other.get ()};
    std::vector<FrameResult> got (all.size ());
    std::vector<std::string> errors (all.size ());
    std::vector<std::thread> threads;
    for (size_t i = 0; i < all.size (); i++)
      threads.emplace_back ([&, i] {
        for (int k = 0; k < 4 && errors[i].empty (); k++)
          errors[i] = all[i]->detect (frame, &got[i]).message;
      });
    for (std::thread &t : threads)
      t.join ();
    for (size_t i = 0; i < all.size (); i++) {
      CHECK_MSG (errors[i].empty (), "%s", errors[i].c_str ());
      CHECK (got[i].objects.size () == alone.objects.size ());
      for (size_t j = 0; j < got[i].objects.size () && j < alone.objects.size (); j++) {
        const Rect &r = got[i].objects[j].rect, &s = alone.objects[j].rect;
        CHECK (r.x == s.x && r.y == s.y && r.width == s.width && r.height == s.height);
      }
      CHECK (got[i].hits.size () == alone.hits.size ());
    }
    FrameResult haar;
    CHECK (c->detect (frame, &haar).message.empty ());
  }
  // Nobody holds the programs any more: they are freed, and built again when asked.
  CHECK (dev.programs->held () == 0);
  {
    auto a = make (&dev, "lbp-frontalface-improved");
    CHECK (cl::program_builds (dev) == 4);
  }

  // Eight detectors starting at once in eight threads: still one build.
  {
    cl::Device fresh;
    CHECK (!cl::open_device ("", false, &fresh));
    std::vector<std::unique_ptr<Detector>> ds (8);
    std::vector<std::thread> threads;
    for (size_t i = 0; i < ds.size (); i++)
      threads.emplace_back ([&, i] { ds[i] = make (&fresh, "lbp-frontalface-improved"); });
    for (std::thread &t : threads)
      t.join ();
    CHECK_MSG (cl::program_builds (fresh) == 1, "%llu builds", (unsigned long long) cl::program_builds (fresh));
    for (auto &d : ds) {
      FrameResult r;
      CHECK (d && d->detect (frame, &r).message.empty () && r.objects.size () == alone.objects.size ());
    }
  }
  return finish ();
}
